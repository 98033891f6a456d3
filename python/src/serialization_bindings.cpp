// theodosian._core, serialization: to_bytes / from_bytes / save / load and pickling of every object
// (theo/io/serialization.h, docs/serialization.md), EvaluationKeys (one client's evaluation keys
// as one object) and Context.for_parameters (one Context per parameter fingerprint and process,
// which unpickling uses). One description per type (Traits: its Python name and how it is read
// and written) and one binder (bind_io) give every class the same methods. Byte buffers, files
// and messages in Python terms: serialization_support.h, serialization_messages.cpp.
//
// The methods are attached to the classes bound elsewhere (theodosian_ext.cpp,
// circuits_bindings.cpp) after they exist, so this file is the only one that knows the format.

#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "serialization_support.h"
#include "serialization_types.h"
#include "theo/io/bootstrapping_keys.h"
#include "theo/math/fingerprint.h"

namespace theopy {
namespace {

using theo::LoadOptions;
using theo::SaveOptions;

// ---- the Context registry ----------------------------------------------------------------------

struct Registry {
  // The first Context created per fingerprint that is still alive.
  std::map<std::string, std::weak_ptr<Session>> live;
  // Contexts created by for_parameters, kept until the interpreter exits.
  std::map<std::string, SessionPtr> kept;
};

// Read and written with the GIL held. Never destroyed: the atexit hook empties it while the
// interpreter (and the backends' threads) are still up.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

std::string fingerprint_of(const theo::ParameterSet& p) {
  return theo::fingerprint_hex(theo::parameter_fingerprint(p));
}

SessionPtr for_parameters(const theo::ParameterSet& params, const std::string& backend,
                          bool allow_insecure, unsigned threads) {
  const std::string fp = fingerprint_of(params);
  Registry& r = registry();
  if (auto it = r.live.find(fp); it != r.live.end()) {
    if (SessionPtr s = it->second.lock()) return s;
  }
  theo::ContextOptions opt;
  opt.backend = parse_backend(backend);
  opt.allow_insecure = allow_insecure;
  opt.threads = threads;
  SessionPtr s;
  {
    nb::gil_scoped_release release;
    try {
      s = std::make_shared<Session>(theo::Context::create(params, opt));
    } catch (const theo::SecurityError& e) {
      throw theo::SecurityError(std::string(e.what()) +
                                " (Context.for_parameters, also used when unpickling: create "
                                "the Context first with Context.for_parameters(params, "
                                "allow_insecure=True) to accept such a set)");
    }
  }
  r.live[fp] = s;
  r.kept[fp] = s;
  return s;
}

// ---- the generic operations --------------------------------------------------------------------

template <typename W>
nb::bytes to_bytes(const W& w, SaveOptions o, std::optional<bool> progress) {
  o.real_slots = real_hint(w);
  PyProgress bar(progress, std::string(Traits<W>::name) + ".to_bytes");
  o.on_progress = bar.callback();
  const theo::u64 size = theo::serialized_size(*w.s->ctx, written(w), o);
  nb::object out = nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
  if (!out.is_valid()) throw nb::python_error();
  {
    // Written in place (the words are downloaded into the bytes object), without the GIL.
    nb::gil_scoped_release release;
    theo::to_bytes(*w.s->ctx, written(w),
                   {reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(out.ptr())), size}, o);
  }
  return nb::borrow<nb::bytes>(out);
}

template <typename W>
W from_bytes(const SessionPtr& s, nb::handle data, LoadOptions o, std::optional<bool> progress) {
  ByteView view(data);
  PyProgress bar(progress, std::string(Traits<W>::name) + ".from_bytes");
  o.on_progress = bar.callback();
  o.require_end = true;
  nb::gil_scoped_release release;
  std::span<const std::uint8_t> bytes = view.span();
  return Traits<W>::load(s, bytes, o);
}

template <typename W>
void save_to(const W& w, nb::handle target, SaveOptions o, std::optional<bool> progress) {
  o.real_slots = real_hint(w);
  PyProgress bar(progress, std::string(Traits<W>::name) + ".save");
  o.on_progress = bar.callback();
  if (is_path(target)) {
    const std::filesystem::path path = to_path(target);
    // Written next to the target and renamed over it at the end: an interrupted save never leaves
    // a truncated file under the name.
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(static_cast<long long>(::getpid()));
    nb::gil_scoped_release release;
    try {
      {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
          throw theo::ParameterError(std::string(Traits<W>::name) + ".save: cannot open " +
                                     tmp.string() + " for writing");
        }
        save_stream(w, out, o);
        out.close();
        if (!out) {
          throw theo::Error(std::string(Traits<W>::name) + ".save: closing " + tmp.string() +
                            " failed");
        }
      }
      std::filesystem::rename(tmp, path);
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw;
    }
    return;
  }
  if (!nb::hasattr(target, "write")) {
    throw nb::type_error((std::string(Traits<W>::name) +
                          ".save: file must be a path or a binary file object opened for writing")
                             .c_str());
  }
  PyFileBuf buf(target, true);
  {
    nb::gil_scoped_release release;
    std::ostream out(&buf);
    try {
      save_stream(w, out, o);
    } catch (...) {
      buf.rethrow();
      throw;
    }
    out.flush();
  }
  buf.rethrow();
}

template <typename W>
W load_from(const SessionPtr& s, nb::handle source, LoadOptions o, std::optional<bool> progress) {
  PyProgress bar(progress, std::string(Traits<W>::name) + ".load");
  o.on_progress = bar.callback();
  if (is_path(source)) {
    const std::filesystem::path path = to_path(source);
    o.require_end = true;
    nb::gil_scoped_release release;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw theo::ParameterError(std::string(Traits<W>::name) + ".load: cannot open " +
                                 path.string());
    }
    return Traits<W>::load(s, in, o);
  }
  if (!nb::hasattr(source, "read")) {
    throw nb::type_error((std::string(Traits<W>::name) +
                          ".load: file must be a path or a binary file object opened for reading")
                             .c_str());
  }
  PyFileBuf buf(source, false);
  std::optional<W> out;
  {
    nb::gil_scoped_release release;
    std::istream in(&buf);
    try {
      out.emplace(Traits<W>::load(s, in, o));
    } catch (...) {
      buf.rethrow();
      throw;
    }
  }
  buf.rethrow();
  return std::move(*out);
}

// Pickle refers to plain Python functions (theodosian/_serialization.py), which call back here.
nb::object pickle_helper(const char* name) {
  return nb::module_::import_("theodosian._serialization").attr(name);
}

std::string params_json(const SessionPtr& s) {
  return theo::to_json(s->ctx->params());
}

// Pickle support: (theodosian._serialization._restore, (class name, parameter JSON, bytes)); with
// protocol 5 the bytes travel out of band as a PickleBuffer.
template <typename W>
nb::object reduce(const W& w, int protocol) {
  nb::object data = to_bytes(w, SaveOptions{}, false);
  if (protocol >= 5) data = nb::module_::import_("pickle").attr("PickleBuffer")(data);
  return nb::make_tuple(pickle_helper("_restore"),
                        nb::make_tuple(Traits<W>::name, params_json(w.s), data));
}

constexpr const char* kToBytesDoc =
    "The binary form (docs/serialization.md): a header (magic, version, type, the parameter "
    "fingerprint, sizes) and checksummed sections. compact: store each uniform polynomial's "
    "32-byte seed instead of its words where the object has one (keys: about half the size). "
    "progress: a progress bar (None: for 256 MiB and more when stderr is a terminal).";
constexpr const char* kFromBytesDoc =
    "Reads an object written by to_bytes() or save() (any bytes-like object). Everything is "
    "validated before use: ParameterError names what is malformed (corrupted data fails its "
    "checksum), ContextError when the data was made for other parameters (both fingerprints in "
    "the message). max_bytes: refuse data that declares more bytes (default 64 GiB).";
constexpr const char* kSaveDoc =
    "Writes the binary form to a path (written to a temporary name, then renamed) or to a binary "
    "file object opened for writing, one polynomial at a time (no second copy in memory). "
    "compact and progress as for to_bytes().";
constexpr const char* kLoadDoc =
    "Reads an object from a path or a binary file object (one polynomial at a time); from a path "
    "the file must hold exactly one object. Validation and max_bytes as for from_bytes().";

// The Galois-key selection that key sets (GaloisKeys, EvaluationKeys) take when they are saved and
// loaded: the keys of some rotations, Galois elements and conjugation; none given: all keys.
using Rotations = std::optional<std::vector<theo::i64>>;
using Elements = std::optional<std::vector<u32>>;

std::optional<std::vector<u32>> selection(const theo::Context&) {
  return std::nullopt;
}
std::optional<std::vector<u32>> selection(const theo::Context& ctx, Rotations rotations,
                                          Elements galois_elements, bool conjugation) {
  return elements_from(ctx, std::move(rotations), std::move(galois_elements), conjugation);
}

// What a kind of object adds to the four methods' signatures and documentation.
struct Extras {
  const char* sig = "";  // parameters after "*, ", each ending in ", "
  const char* to_bytes = "";
  const char* from_bytes = "";
  const char* save = "";
  const char* load = "";
};
constexpr Extras kGaloisSelection{
    "rotations: collections.abc.Sequence[int] | None = None, "
    "galois_elements: collections.abc.Sequence[int] | None = None, conjugation: bool = False, ",
    " rotations / galois_elements / conjugation: write only these keys (MissingKeyError if one "
    "is absent); none given: all keys.",
    " rotations / galois_elements / conjugation: load only these keys (MissingKeyError naming "
    "the first one the data lacks); none given: all keys.",
    " rotations / galois_elements / conjugation as for to_bytes().",
    " rotations / galois_elements / conjugation as for from_bytes()."};

// Unpickling: the object of each picklable class from its bytes (filled by bind_io).
std::map<std::string, nb::object (*)(const SessionPtr&, nb::handle)>& restorers() {
  static auto* r = new std::map<std::string, nb::object (*)(const SessionPtr&, nb::handle)>;
  return *r;
}

// to_bytes, from_bytes, save, load and (with_pickle) __reduce_ex__ on class W. Sel: the types of
// the extra keyword parameters (none, or the Galois selection's), named by `sel_args` and
// described by `extras`.
template <typename W, typename... Sel, typename... SelArgs>
void bind_io(bool with_pickle, const Extras& extras, SelArgs... sel_args) {
  const std::string cls = Traits<W>::name;
  const std::string sel_sig = extras.sig;
  const auto doc = [](const char* base, const char* extra) { return std::string(base) + extra; };
  method<W>(
      "to_bytes",
      [](const W& w, bool compact, Sel... sel, std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        o.galois_elements = selection(*w.s->ctx, std::move(sel)...);
        return to_bytes(w, o, progress);
      },
      "compact"_a = true, nb::kw_only(), sel_args..., "progress"_a = nb::none(),
      doc(kToBytesDoc, extras.to_bytes).c_str());
  static_method<W>(
      "from_bytes",
      [](const WContext& ctx, nb::handle data, Sel... sel, std::optional<theo::u64> max_bytes,
         std::optional<bool> progress) {
        LoadOptions o = load_options(max_bytes);
        o.galois_elements = selection(*ctx.s->ctx, std::move(sel)...);
        return from_bytes<W>(ctx.s, data, o, progress);
      },
      "context"_a, "data"_a, nb::kw_only(), sel_args..., "max_bytes"_a = nb::none(),
      "progress"_a = nb::none(),
      nb::sig(("def from_bytes(context: Context, data: collections.abc.Buffer, *, " + sel_sig +
               "max_bytes: int | None = None, progress: bool | None = None) -> " + cls)
                  .c_str()),
      doc(kFromBytesDoc, extras.from_bytes).c_str());
  method<W>(
      "save",
      [](const W& w, nb::handle file, bool compact, Sel... sel, std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        o.galois_elements = selection(*w.s->ctx, std::move(sel)...);
        save_to(w, file, o, progress);
      },
      "file"_a, nb::kw_only(), "compact"_a = true, sel_args..., "progress"_a = nb::none(),
      nb::sig(("def save(self, file: str | os.PathLike[str] | typing.BinaryIO, *, "
               "compact: bool = True, " +
               sel_sig + "progress: bool | None = None) -> None")
                  .c_str()),
      doc(kSaveDoc, extras.save).c_str());
  static_method<W>(
      "load",
      [](const WContext& ctx, nb::handle file, Sel... sel, std::optional<theo::u64> max_bytes,
         std::optional<bool> progress) {
        LoadOptions o = load_options(max_bytes);
        o.galois_elements = selection(*ctx.s->ctx, std::move(sel)...);
        return load_from<W>(ctx.s, file, o, progress);
      },
      "context"_a, "file"_a, nb::kw_only(), sel_args..., "max_bytes"_a = nb::none(),
      "progress"_a = nb::none(),
      nb::sig(("def load(context: Context, file: str | os.PathLike[str] | typing.BinaryIO, *, " +
               sel_sig + "max_bytes: int | None = None, progress: bool | None = None) -> " + cls)
                  .c_str()),
      doc(kLoadDoc, extras.load).c_str());
  if (!with_pickle) return;
  method<W>(
      "__reduce_ex__", [](const W& w, int protocol) { return reduce(w, protocol); }, "protocol"_a,
      "Pickle support: the parameter set (JSON) and to_bytes(); unpickling finds the Context "
      "through Context.for_parameters.");
  restorers()[cls] = [](const SessionPtr& s, nb::handle data) {
    return nb::cast(from_bytes<W>(s, data, LoadOptions{}, false));
  };
}

// bind_io of a key set: the Galois selection on every method.
template <typename W>
void bind_keyset_io() {
  bind_io<W, Rotations, Elements, bool>(true, kGaloisSelection, "rotations"_a = nb::none(),
                                        "galois_elements"_a = nb::none(), "conjugation"_a = false);
}

// The restore function of pickles, by class name.
nb::object restore(const std::string& kind, const std::string& json, nb::handle data) {
  const auto it = restorers().find(kind);
  if (it == restorers().end())
    throw theo::ParameterError("unpickling: unknown theodosian class '" + kind + "'");
  return it->second(for_parameters(theo::parse_parameters(json), "auto", false, 0), data);
}

nb::dict info_dict(const theo::ObjectInfo& info) {
  nb::dict d;
  static const char* kTypes[] = {"",          "Parameters", "SecretKey",      "PublicKey",
                                 "RelinKey",  "GaloisKeys", "EvaluationKeys", "Plaintext",
                                 "Ciphertext"};
  d["type"] = kTypes[static_cast<u32>(info.type)];
  d["version"] = info.version;
  d["compact"] = info.compact;
  d["fingerprint"] = theo::fingerprint_hex(info.fingerprint);
  d["bytes"] = info.total_bytes;
  d["is_real"] = info.real_slots;
  d["galois_elements"] = info.galois_elements;
  d["has_relin_key"] = info.has_relin_key;
  d["has_bootstrapping_keys"] = info.has_bootstrapping_keys;
  return d;
}

}  // namespace

void register_context(const SessionPtr& s) {
  auto& slot = registry().live[fingerprint_of(s->ctx->params())];
  if (slot.expired()) slot = s;
}

void bind_serialization(nb::module_& m) {
  register_message_translator();
  nb::module_::import_("atexit").attr("register")(
      nb::cpp_function([] { registry().kept.clear(); }));

  m.def("_restore", &restore, "kind"_a, "params_json"_a, "data"_a,
        "Unpickling helper: the object of class `kind` from its bytes, on the Context that "
        "Context.for_parameters gives for the parameters.");
  m.def(
      "_context_for",
      [](const std::string& json) {
        return WContext{for_parameters(theo::parse_parameters(json), "auto", false, 0)};
      },
      "params_json"_a, "Unpickling helper of Context: Context.for_parameters of the JSON.");
  m.def(
      "serialized_info",
      [](nb::handle source) {
        if (is_path(source)) {
          std::ifstream in(to_path(source), std::ios::binary);
          if (!in) {
            throw theo::ParameterError("serialized_info: cannot open " + to_path(source).string());
          }
          return info_dict(theo::inspect(in));
        }
        ByteView v(source);
        return info_dict(theo::inspect(v.span()));
      },
      "source"_a,
      nb::sig("def serialized_info(source: collections.abc.Buffer | str | os.PathLike[str]) -> "
              "dict[str, typing.Any]"),
      "What a serialized object's header and metadata say, without a Context: type, version, "
      "compact, fingerprint (hex), bytes, is_real, galois_elements, has_relin_key, "
      "has_bootstrapping_keys. Checks the checksums of what it reads.");

  // ---- Parameters ----
  property<theo::ParameterSet>(
      "fingerprint", [](const theo::ParameterSet& p) { return fingerprint_of(p); },
      "BLAKE2b-256 of every field that changes what data means (not name or comment), hex: "
      "serialized objects carry it and are refused by a Context of another fingerprint.");
  method<theo::ParameterSet>(
      "to_bytes",
      [](const theo::ParameterSet& p) {
        const std::vector<std::uint8_t> b = theo::to_bytes(p);
        return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
      },
      "The binary form: the JSON parameter file in a checksummed container with the "
      "fingerprint.");
  static_method<theo::ParameterSet>(
      "from_bytes",
      [](nb::handle data) {
        ByteView v(data);
        return theo::load_parameters(v.span());
      },
      "data"_a, nb::sig("def from_bytes(data: collections.abc.Buffer) -> Parameters"),
      "Reads a parameter set written by to_bytes(); ParameterError naming what is wrong.");
  static_method<theo::ParameterSet>(
      "load",
      [](nb::handle source) {
        std::string text;
        if (is_path(source)) {
          const std::filesystem::path path = to_path(source);
          std::ifstream in(path, std::ios::binary);
          if (!in) throw theo::ParameterError("Parameters.load: cannot open " + path.string());
          text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        } else {
          nb::object data = source.attr("read")();
          ByteView v(data);
          text.assign(reinterpret_cast<const char*>(v.span().data()), v.span().size());
        }
        if (text.size() >= 8 && static_cast<unsigned char>(text[0]) == 0x89) {
          return theo::load_parameters(std::span<const std::uint8_t>(
              reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
        }
        return theo::parse_parameters(text);
      },
      "file"_a, nb::sig("def load(file: str | os.PathLike[str] | typing.BinaryIO) -> Parameters"),
      "Reads a parameter set from a path or a binary file object: a JSON parameter file or the "
      "binary form of to_bytes().");
  method<theo::ParameterSet>(
      "__reduce__",
      [](const theo::ParameterSet& p) {
        return nb::make_tuple(pickle_helper("_restore_parameters"),
                              nb::make_tuple(theo::to_json(p)));
      },
      "Pickle support (the JSON text).");

  // ---- Context ----
  property<WContext>(
      "fingerprint", [](const WContext& c) { return fingerprint_of(c.s->ctx->params()); },
      "The fingerprint of the parameter set (hex; see Parameters.fingerprint).");
  static_method<WContext>(
      "for_parameters",
      [](nb::handle params, const std::string& backend, bool allow_insecure, unsigned threads) {
        return WContext{for_parameters(params_from(params), backend, allow_insecure, threads)};
      },
      "params"_a, nb::kw_only(), "backend"_a = "auto", "allow_insecure"_a = false, "threads"_a = 0u,
      nb::sig("def for_parameters(params: Parameters | str | os.PathLike[str], *, "
              "backend: str = 'auto', allow_insecure: bool = False, threads: int = 0) -> Context"),
      "The process's Context for these parameters: the first Context made for their "
      "fingerprint that is still alive (by Context(...) or here), else a new one with these "
      "options, kept until the interpreter exits. Unpickling uses it, so a server that "
      "unpickles clients' objects gets one Context per parameter set; create it first (e.g. "
      "with backend='cuda') to choose its options.");
  method<WContext>(
      "__reduce__",
      [](const WContext& c) {
        return nb::make_tuple(pickle_helper("_restore_context"), nb::make_tuple(params_json(c.s)));
      },
      "Pickle support: unpickles to Context.for_parameters(params).");

  // ---- keys and data ----
  bind_io<WSecretKey>(false, Extras{});
  method<WSecretKey>(
      "__reduce_ex__",
      [](const WSecretKey&, int) -> nb::object {
        throw nb::type_error(
            "a SecretKey is not picklable, so that it cannot reach a server by accident; store it "
            "with secret_key.save(path) and SecretKey.load(context, path)");
      },
      "protocol"_a, "Refuses pickling (see save / load).");
  bind_io<WPublicKey>(true, Extras{});
  bind_io<WRelinKey>(true, Extras{});
  bind_keyset_io<WGaloisKeys>();
  bind_io<WBootstrappingKeys>(true, Extras{});
  bind_io<WPlaintext>(true, Extras{});
  bind_io<WCiphertext>(true, Extras{});
  bind_host_ciphertext(m);

  property<WPublicKey>(
      "is_compact", [](const WPublicKey& k) { return k.k->a_seed().has_value(); },
      "True when the key knows the seed of its uniform half (it then serializes compactly).");

  nb::class_<WEvaluationKeys>(
      m, "EvaluationKeys",
      "The evaluation keys of one client as one object, for a server: a relinearization key, "
      "Galois keys and bootstrapping keys, each optional. Serializes (to_bytes, save, pickle) "
      "as one object; the Galois keys may be narrowed to some rotations when saving and when "
      "loading. bootstrapping_keys, when present, holds the relinearization and Galois keys "
      "too (they are shared, not copied).")
      .def(
          "__init__",
          [](WEvaluationKeys* self, const WRelinKey* relin, const WGaloisKeys* galois,
             const WBootstrappingKeys* boot) {
            if (!relin && !galois && !boot) {
              throw theo::ParameterError(
                  "EvaluationKeys: give at least one of relin_key, galois_keys, "
                  "bootstrapping_keys");
            }
            SessionPtr s = relin ? relin->s : galois ? galois->s : boot->s;
            for (const SessionPtr* o : {relin ? &relin->s : nullptr, galois ? &galois->s : nullptr,
                                        boot ? &boot->s : nullptr}) {
              if (o && (*o)->ctx != s->ctx) {
                throw theo::ContextError("EvaluationKeys: the keys belong to different Contexts");
              }
            }
            WEvaluationKeys w{s, nullptr, nullptr, boot ? boot->k : nullptr};
            if (relin) {
              w.relin = relin->k;
            } else if (boot) {
              w.relin = std::shared_ptr<const theo::RelinKey>(boot->k, &boot->k->relin);
            }
            if (galois) {
              w.galois = galois->k;
            } else if (boot) {
              auto mut = std::const_pointer_cast<theo::BootstrappingKeys>(boot->k);
              w.galois = std::shared_ptr<theo::GaloisKeys>(mut, &mut->galois);
            }
            new (self) WEvaluationKeys(std::move(w));
          },
          nb::kw_only(), nb::arg("relin_key").none() = nb::none(),
          nb::arg("galois_keys").none() = nb::none(),
          nb::arg("bootstrapping_keys").none() = nb::none(),
          "relin_key / galois_keys default to those of bootstrapping_keys when it is given.")
      .def_prop_ro(
          "context", [](const WEvaluationKeys& w) { return WContext{w.s}; }, "The context.")
      .def_prop_ro(
          "relin_key",
          [](const WEvaluationKeys& w) -> std::optional<WRelinKey> {
            if (!w.relin) return std::nullopt;
            return WRelinKey{w.s, w.relin};
          },
          "The relinearization key, or None.")
      .def_prop_ro(
          "galois_keys",
          [](const WEvaluationKeys& w) -> std::optional<WGaloisKeys> {
            if (!w.galois) return std::nullopt;
            return WGaloisKeys{w.s, w.galois};
          },
          "The Galois keys, or None.")
      .def_prop_ro(
          "bootstrapping_keys",
          [](const WEvaluationKeys& w) -> std::optional<WBootstrappingKeys> {
            if (!w.boot) return std::nullopt;
            // Bootstrapping uses the bundle's relinearization and Galois keys: when they are
            // the bootstrapping keys' own, the same object serves.
            if (w.relin.get() == &w.boot->relin && w.galois.get() == &w.boot->galois) {
              return WBootstrappingKeys{w.s, w.boot};
            }
            throw theo::ParameterError(
                "EvaluationKeys.bootstrapping_keys: the relinearization or Galois keys were "
                "given separately; use the BootstrappingKeys object itself");
          },
          "The bootstrapping keys (Bootstrapper.bootstrap's `keys`), or None.")
      .def("__repr__", [](const WEvaluationKeys& w) {
        std::string r = "EvaluationKeys(";
        r += w.relin ? "relin_key, " : "";
        r += w.galois ? std::to_string(w.galois->galois_elements().size()) + " Galois keys, " : "";
        r += w.boot ? "bootstrapping keys" : "";
        if (r.ends_with(", ")) r.resize(r.size() - 2);
        return r + ")";
      });
  bind_keyset_io<WEvaluationKeys>();
}

}  // namespace theopy
