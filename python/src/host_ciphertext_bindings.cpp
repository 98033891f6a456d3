// theodosian._core: HostCiphertext, a ciphertext in host memory (theo/io/serialization.h), and
// Ciphertext.to_host.

#include "serialization_support.h"

namespace theopy {
namespace {

// ---- HostCiphertext -----------------------------------------------------------------------------

struct WHostCiphertext {
  SessionPtr s;
  std::shared_ptr<const theo::HostCiphertext> h;
};

theo::SaveOptions save_threads(unsigned threads) {
  theo::SaveOptions o;
  o.threads = threads;
  return o;
}

}  // namespace

void bind_host_ciphertext(nb::module_& m) {
  nb::class_<WHostCiphertext>(
      m, "HostCiphertext",
      "A ciphertext in host memory, as Ciphertext.to_bytes / from_bytes split at the device: "
      "Ciphertext.to_host() and to_device() are the only steps that use the backend (the "
      "copies); to_bytes() and HostCiphertext.from_bytes() (checksums, every check of "
      "Ciphertext.from_bytes) run on the CPU without it and release the GIL, so a server holds "
      "its device only for the copies and encodes on other threads. Page-locked memory on CUDA.")
      .def_static(
          "from_bytes",
          [](const WContext& ctx, nb::handle data, std::optional<theo::u64> max_bytes,
             unsigned threads) {
            ByteView view(data);
            theo::LoadOptions o = load_options(max_bytes);
            o.threads = threads;
            std::shared_ptr<const theo::HostCiphertext> h;
            {
              nb::gil_scoped_release release;
              h = std::make_shared<const theo::HostCiphertext>(
                  theo::load_host_ciphertext(*ctx.s->ctx, view.span(), o));
            }
            return WHostCiphertext{ctx.s, std::move(h)};
          },
          "context"_a, "data"_a, nb::kw_only(), "max_bytes"_a = nb::none(), "threads"_a = 0u,
          nb::sig("def from_bytes(context: Context, data: collections.abc.Buffer, *, "
                  "max_bytes: int | None = None, threads: int = 0) -> HostCiphertext"),
          "Reads and checks a serialized ciphertext (as Ciphertext.from_bytes, same errors) into "
          "host memory. threads: for the checksums and word checks (0: every core).")
      .def(
          "to_bytes",
          [](const WHostCiphertext& w, unsigned threads) {
            const theo::Context& ctx = *w.s->ctx;
            const theo::u64 size = theo::serialized_size(ctx, *w.h);
            nb::object out =
                nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
            if (!out.is_valid()) throw nb::python_error();
            {
              nb::gil_scoped_release release;
              theo::to_bytes(ctx, *w.h,
                             {reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(out.ptr())), size},
                             save_threads(threads));
            }
            return nb::borrow<nb::bytes>(out);
          },
          nb::kw_only(), "threads"_a = 0u,
          "The bytes Ciphertext.to_bytes() gives for the same ciphertext. threads: for the "
          "checksums (0: every core).")
      .def(
          "to_device",
          [](const WHostCiphertext& w) {
            return run_ct(w.s, w.h->real_slots, [&] { return theo::upload(w.s->ctx, *w.h); });
          },
          "The Ciphertext on the Context's backend (uploads; a seeded c1 is expanded there).")
      .def_prop_ro(
          "context", [](const WHostCiphertext& w) { return WContext{w.s}; }, "Its Context.")
      .def_prop_ro(
          "level", [](const WHostCiphertext& w) { return w.h->level; }, "The level.")
      .def_prop_ro(
          "is_real", [](const WHostCiphertext& w) { return w.h->real_slots; },
          "The slots are known to hold real values.")
      .def_prop_ro(
          "nbytes", [](const WHostCiphertext& w) { return theo::serialized_size(*w.s->ctx, *w.h); },
          "The size of to_bytes().");
  method<WCiphertext>(
      "to_host",
      [](const WCiphertext& c, bool compact) {
        theo::SaveOptions o;
        o.compact = compact;
        o.real_slots = c.real;
        std::shared_ptr<const theo::HostCiphertext> h;
        {
          nb::gil_scoped_release release;
          h = std::make_shared<const theo::HostCiphertext>(theo::download(*c.s->ctx, c.ct, o));
        }
        return WHostCiphertext{c.s, std::move(h)};
      },
      "compact"_a = true,
      "Copies the words to host memory (a HostCiphertext; compact: c1 as its seed when the "
      "ciphertext has one, as to_bytes).");
}

}  // namespace theopy
