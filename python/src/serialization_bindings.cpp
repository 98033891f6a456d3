// theodosian._core, serialization: to_bytes / from_bytes / save / load and pickling of every object
// (theo/ckks/serialization.h, docs/serialization.md), EvaluationKeys (one client's evaluation keys
// as one object), Context.for_parameters (one Context per parameter fingerprint and process, which
// unpickling uses), and the error-message translation that names Python calls instead of C++ ones.
//
// The methods are attached to the classes bound elsewhere (theodosian_ext.cpp,
// circuits_bindings.cpp) after they exist, so this file is the only one that knows the format.

#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <streambuf>

#include <unistd.h>

#include "bindings.h"
#include "theo/circuits/bootstrapping_keys_io.h"
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

// ---- bytes, files and streams ------------------------------------------------------------------

// A contiguous read-only view of any buffer-protocol object (bytes, bytearray, memoryview, numpy).
class ByteView {
 public:
  explicit ByteView(nb::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw nb::type_error("data must be bytes, bytearray, memoryview or another buffer of bytes");
    }
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  std::span<const std::uint8_t> span() const {
    return {static_cast<const std::uint8_t*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// A Python binary file object as a std::streambuf (1 MiB buffer). The C++ side runs without the
// GIL; every call into the file takes it. A Python exception from the file is kept and re-raised
// once the C++ call returns.
class PyFileBuf : public std::streambuf {
 public:
  PyFileBuf(nb::handle file, bool writing) : file_(nb::borrow(file)), buf_(kBufBytes) {
    if (writing) {
      setp(buf_.data(), buf_.data() + buf_.size());
    } else {
      setg(buf_.data(), buf_.data(), buf_.data());
    }
    try {
      seekable_ = nb::cast<bool>(file_.attr("seekable")());
    } catch (const nb::python_error&) {
      seekable_ = false;
    }
  }
  ~PyFileBuf() override {
    nb::gil_scoped_acquire gil;
    file_.reset();
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int sync() override { return flush_out() ? 0 : -1; }

  int_type overflow(int_type c) override {
    if (!flush_out()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }

  // Reads go straight to the file, exactly as many bytes as asked: nothing is read ahead, so the
  // file is left right after the object (several objects may follow each other in one file).
  std::streamsize xsgetn(char* dst, std::streamsize n) override {
    std::streamsize done = std::min<std::streamsize>(n, egptr() - gptr());
    if (done > 0) {
      std::memcpy(dst, gptr(), static_cast<std::size_t>(done));
      gbump(static_cast<int>(done));
    }
    try {
      nb::gil_scoped_acquire gil;
      while (done < n) {
        const auto want = static_cast<std::size_t>(n - done);
        nb::object data = file_.attr("read")(want);
        ByteView v(data);
        const std::size_t got = v.span().size();
        if (got == 0) break;
        if (got > want) throw nb::value_error("file.read returned more bytes than asked");
        std::memcpy(dst + done, v.span().data(), got);
        done += static_cast<std::streamsize>(got);
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    return done;
  }
  int_type underflow() override {
    char c = 0;
    if (xsgetn(&c, 1) != 1) return traits_type::eof();
    // One byte of lookahead: keep it in the get area.
    buf_[0] = c;
    setg(buf_.data(), buf_.data(), buf_.data() + 1);
    return traits_type::to_int_type(c);
  }

  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    if (!seekable_ || pbase() != nullptr) return pos_type(off_type(-1));
    try {
      nb::gil_scoped_acquire gil;
      const auto buffered = static_cast<off_type>(egptr() - gptr());
      const auto tell = nb::cast<off_type>(file_.attr("tell")());
      off_type to = 0;
      if (dir == std::ios_base::cur) {
        to = tell - buffered + off;
        if (off == 0) return pos_type(to);
      } else if (dir == std::ios_base::beg) {
        to = off;
      } else {
        to = nb::cast<off_type>(file_.attr("seek")(0, 2)) + off;
      }
      if (to < 0) return pos_type(off_type(-1));
      file_.attr("seek")(to);
      setg(buf_.data(), buf_.data(), buf_.data());
      return pos_type(to);
    } catch (...) {
      error_ = std::current_exception();
      return pos_type(off_type(-1));
    }
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode mode) override {
    return seekoff(off_type(pos), std::ios_base::beg, mode);
  }

 private:
  static constexpr std::size_t kBufBytes = std::size_t{1} << 20;
  bool flush_out() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    if (n == 0) return true;
    try {
      nb::gil_scoped_acquire gil;
      std::size_t done = 0;
      while (done < n) {
        nb::object rest = nb::steal(PyMemoryView_FromMemory(
            buf_.data() + done, static_cast<Py_ssize_t>(n - done), PyBUF_READ));
        if (!rest.is_valid()) throw nb::python_error();
        nb::object w = file_.attr("write")(rest);
        // Raw files may write less than asked (and return None when nothing could be written).
        if (w.is_none()) throw nb::value_error("file.write wrote nothing (non-blocking file?)");
        done += nb::cast<std::size_t>(w);
      }
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

  nb::object file_;
  std::vector<char> buf_;
  bool seekable_ = false;
  std::exception_ptr error_;
};

bool is_path(nb::handle target) {
  return nb::isinstance<nb::str>(target) || nb::hasattr(target, "__fspath__");
}
std::filesystem::path to_path(nb::handle target) {
  return nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(target));
}

// ---- progress ----------------------------------------------------------------------------------

// A progress bar through theodosian._progress (tqdm when installed) for saves and loads: on when
// asked, or by default for objects of 256 MiB and more when stderr is a terminal. Ctrl-C
// interrupts between sections.
class PyProgress {
 public:
  PyProgress(std::optional<bool> want, std::string desc) : want_(want), desc_(std::move(desc)) {}
  ~PyProgress() {
    if (bar_.is_valid() && !bar_.is_none()) {
      try {
        bar_.attr("close")();
      } catch (...) {  // never mask the operation's own result
      }
    }
  }
  theo::ProgressCallback callback() {
    if (want_.has_value() && !*want_) return {};
    return [this](theo::u64 done, theo::u64 total) {
      nb::gil_scoped_acquire gil;
      if (!bar_.is_valid()) {
        bool show = want_.value_or(false);
        if (!want_.has_value() && total >= (theo::u64{256} << 20)) {
          nb::object err = nb::module_::import_("sys").attr("stderr");
          try {
            show = !err.is_none() && nb::cast<bool>(err.attr("isatty")());
          } catch (const nb::python_error&) {
            show = false;
          }
        }
        bar_ = show ? nb::module_::import_("theodosian._progress")
                          .attr("make_bar")(total, desc_, "unit"_a = "B")
                    : nb::none();
      }
      if (!bar_.is_none()) bar_.attr("update")(done - last_);
      last_ = done;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
    };
  }

 private:
  std::optional<bool> want_;
  std::string desc_;
  nb::object bar_;
  theo::u64 last_ = 0;
};

// ---- per-type traits ---------------------------------------------------------------------------
// name: the Python class; size / save: the C++ writer; load: the C++ reader wrapped.

std::optional<std::vector<u32>> elements_from(const theo::Context& ctx,
                                              std::optional<std::vector<theo::i64>> rotations,
                                              std::optional<std::vector<u32>> galois_elements,
                                              bool conjugation) {
  if (!rotations && !galois_elements && !conjugation) return std::nullopt;
  std::vector<u32> out = galois_elements.value_or(std::vector<u32>{});
  for (const theo::i64 r : rotations.value_or(std::vector<theo::i64>{})) {
    const u32 g = theo::galois_element_for_rotation(r, ctx.log_n());
    if (g != 1) out.push_back(g);
  }
  if (conjugation) out.push_back(theo::galois_element_for_conjugation(ctx.log_n()));
  return out;
}

struct WEvaluationKeys {
  SessionPtr s;
  std::shared_ptr<const theo::RelinKey> relin;
  std::shared_ptr<theo::GaloisKeys> galois;
  std::shared_ptr<const theo::BootstrappingKeys> boot;  // the encapsulation keys' owner
};

template <typename W>
struct Traits;

// The keys held as {session, shared_ptr<Key> k}; Load is the library's reader (load_secret_key and
// the like) as a callable type.
template <typename W, typename Load>
struct KeyTraits {
  template <typename In>
  static W load(const SessionPtr& s, In& in, const LoadOptions& o) {
    using Key = std::remove_const_t<typename decltype(W::k)::element_type>;
    return {s, std::make_shared<Key>(Load{}(s->ctx, in, o))};
  }
};

template <>
struct Traits<WSecretKey>
    : KeyTraits<WSecretKey, decltype([](auto&&... a) { return theo::load_secret_key(a...); })> {
  static constexpr const char* name = "SecretKey";
};
template <>
struct Traits<WPublicKey>
    : KeyTraits<WPublicKey, decltype([](auto&&... a) { return theo::load_public_key(a...); })> {
  static constexpr const char* name = "PublicKey";
};
template <>
struct Traits<WRelinKey>
    : KeyTraits<WRelinKey, decltype([](auto&&... a) { return theo::load_relin_key(a...); })> {
  static constexpr const char* name = "RelinKey";
};
template <>
struct Traits<WGaloisKeys>
    : KeyTraits<WGaloisKeys, decltype([](auto&&... a) { return theo::load_galois_keys(a...); })> {
  static constexpr const char* name = "GaloisKeys";
};

template <>
struct Traits<WBootstrappingKeys> {
  static constexpr const char* name = "BootstrappingKeys";
  template <typename In>
  static WBootstrappingKeys load(const SessionPtr& s, In& in, const LoadOptions& o) {
    return {s, std::make_shared<const theo::BootstrappingKeys>(
                   theo::load_bootstrapping_keys(s->ctx, in, o))};
  }
};

theo::EvaluationKeysView view_of(const WEvaluationKeys& w) {
  theo::EvaluationKeysView v;
  v.relin = w.relin.get();
  v.galois = w.galois.get();
  if (w.boot) {
    v.to_sparse = &w.boot->to_sparse;
    v.to_dense = &w.boot->to_dense;
  }
  return v;
}

template <>
struct Traits<WEvaluationKeys> {
  static constexpr const char* name = "EvaluationKeys";
  template <typename In>
  static WEvaluationKeys load(const SessionPtr& s, In& in, const LoadOptions& o) {
    theo::EvaluationKeys ek = theo::load_evaluation_keys(s->ctx, in, o);
    WEvaluationKeys w{s, nullptr, nullptr, nullptr};
    const bool has_boot = !ek.to_sparse.empty();
    if (has_boot && !ek.relin.empty() && !ek.galois.empty()) {
      auto boot = std::make_shared<theo::BootstrappingKeys>(
          theo::to_bootstrapping_keys(std::move(ek), "EvaluationKeys.load"));
      w.relin = std::shared_ptr<const theo::RelinKey>(boot, &boot->relin);
      w.galois = std::shared_ptr<theo::GaloisKeys>(boot, &boot->galois);
      w.boot = std::move(boot);
      return w;
    }
    if (has_boot) {
      throw theo::ParameterError(
          "EvaluationKeys.load: the data has bootstrapping encapsulation keys without the "
          "relinearization and Galois keys bootstrapping also needs");
    }
    if (!ek.relin.empty()) w.relin = std::make_shared<theo::RelinKey>(std::move(ek.relin));
    if (!ek.galois.empty()) w.galois = std::make_shared<theo::GaloisKeys>(std::move(ek.galois));
    return w;
  }
};

// Plaintexts and ciphertexts remember the slot-count hint their data carries (ObjectInfo).
template <typename W, typename Load>
struct ValueTraits {
  template <typename In>
  static W load(const SessionPtr& s, In& in, const LoadOptions& o) {
    theo::ObjectInfo info;
    auto value = Load{}(s->ctx, in, o, &info);
    return {s, std::move(value), info.real_slots};
  }
};

template <>
struct Traits<WPlaintext>
    : ValueTraits<WPlaintext, decltype([](auto&&... a) { return theo::load_plaintext(a...); })> {
  static constexpr const char* name = "Plaintext";
};
template <>
struct Traits<WCiphertext>
    : ValueTraits<WCiphertext, decltype([](auto&&... a) { return theo::load_ciphertext(a...); })> {
  static constexpr const char* name = "Ciphertext";
};

// What each type is written as: the argument of the library's writers (serialized_size, save,
// to_bytes).
template <typename W>
const auto& written(const W& w) {
  return *w.k;
}
const theo::Plaintext& written(const WPlaintext& w) {
  return w.pt;
}
const theo::Ciphertext& written(const WCiphertext& w) {
  return w.ct;
}
theo::EvaluationKeysView written(const WBootstrappingKeys& w) {
  return theo::view_of(*w.k);
}
theo::EvaluationKeysView written(const WEvaluationKeys& w) {
  return view_of(w);
}

template <typename W>
void save_stream(const W& w, std::ostream& out, const SaveOptions& o) {
  theo::save(*w.s->ctx, written(w), out, o);
}
// Bootstrapping keys go to a stream through their own save(), which refuses a subset of keys.
void save_stream(const WBootstrappingKeys& w, std::ostream& out, const SaveOptions& o) {
  theo::save(*w.s->ctx, *w.k, out, o);
}

template <typename W>
bool real_hint(const W&) {
  return false;
}
template <>
bool real_hint(const WPlaintext& w) {
  return w.real;
}
template <>
bool real_hint(const WCiphertext& w) {
  return w.real;
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

LoadOptions load_options(std::optional<theo::u64> max_bytes) {
  LoadOptions o;
  if (max_bytes) o.max_bytes = *max_bytes;
  return o;
}

// ---- attaching methods to the bound classes ----------------------------------------------------

template <typename W, typename F, typename... Extra>
void method(const char* name, F&& f, const Extra&... extra) {
  nb::handle cls = nb::type<W>();
  nb::cpp_function_def<W>(std::forward<F>(f), nb::scope(cls), nb::name(name), nb::is_method(),
                          extra...);
}

template <typename W, typename F, typename... Extra>
void static_method(const char* name, F&& f, const Extra&... extra) {
  nb::handle cls = nb::type<W>();
  nb::cpp_function_def(std::forward<F>(f), nb::scope(cls), nb::name(name), extra...);
}

template <typename W, typename F>
void property(const char* name, F&& getter, const char* doc) {
  nb::handle cls = nb::type<W>();
  nb::object get = nb::cpp_function<W>(std::forward<F>(getter), nb::is_method(), nb::is_getter());
  nb::object prop =
      nb::module_::import_("builtins").attr("property")(get, nb::none(), nb::none(), doc);
  nb::setattr(cls, name, prop);
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

template <typename W>
void bind_common(bool with_pickle) {
  const std::string cls = Traits<W>::name;
  method<W>(
      "to_bytes",
      [](const W& w, bool compact, std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        return to_bytes(w, o, progress);
      },
      "compact"_a = true, nb::kw_only(), "progress"_a = nb::none(), kToBytesDoc);
  static_method<W>(
      "from_bytes",
      [](const WContext& ctx, nb::handle data, std::optional<theo::u64> max_bytes,
         std::optional<bool> progress) {
        return from_bytes<W>(ctx.s, data, load_options(max_bytes), progress);
      },
      "context"_a, "data"_a, nb::kw_only(), "max_bytes"_a = nb::none(), "progress"_a = nb::none(),
      nb::sig(("def from_bytes(context: Context, data: collections.abc.Buffer, *, "
               "max_bytes: int | None = None, progress: bool | None = None) -> " +
               cls)
                  .c_str()),
      kFromBytesDoc);
  method<W>(
      "save",
      [](const W& w, nb::handle file, bool compact, std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        save_to(w, file, o, progress);
      },
      "file"_a, nb::kw_only(), "compact"_a = true, "progress"_a = nb::none(),
      nb::sig("def save(self, file: str | os.PathLike[str] | typing.BinaryIO, *, "
              "compact: bool = True, progress: bool | None = None) -> None"),
      kSaveDoc);
  static_method<W>(
      "load",
      [](const WContext& ctx, nb::handle file, std::optional<theo::u64> max_bytes,
         std::optional<bool> progress) {
        return load_from<W>(ctx.s, file, load_options(max_bytes), progress);
      },
      "context"_a, "file"_a, nb::kw_only(), "max_bytes"_a = nb::none(), "progress"_a = nb::none(),
      nb::sig(("def load(context: Context, file: str | os.PathLike[str] | typing.BinaryIO, *, "
               "max_bytes: int | None = None, progress: bool | None = None) -> " +
               cls)
                  .c_str()),
      kLoadDoc);
  if (with_pickle) {
    method<W>(
        "__reduce_ex__", [](const W& w, int protocol) { return reduce(w, protocol); }, "protocol"_a,
        "Pickle support: the parameter set (JSON) and to_bytes(); unpickling finds the Context "
        "through Context.for_parameters.");
  }
}

// GaloisKeys and EvaluationKeys: the same with a subset of rotations on both sides.
template <typename W>
void bind_keyset() {
  const std::string cls = Traits<W>::name;
  method<W>(
      "to_bytes",
      [](const W& w, bool compact, std::optional<std::vector<theo::i64>> rotations,
         std::optional<std::vector<u32>> galois_elements, bool conjugation,
         std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        o.galois_elements = elements_from(*w.s->ctx, rotations, galois_elements, conjugation);
        return to_bytes(w, o, progress);
      },
      "compact"_a = true, nb::kw_only(), "rotations"_a = nb::none(),
      "galois_elements"_a = nb::none(), "conjugation"_a = false, "progress"_a = nb::none(),
      (std::string(kToBytesDoc) +
       " rotations / galois_elements / conjugation: write only these keys (MissingKeyError if "
       "one is absent); none given: all keys.")
          .c_str());
  static_method<W>(
      "from_bytes",
      [](const WContext& ctx, nb::handle data, std::optional<std::vector<theo::i64>> rotations,
         std::optional<std::vector<u32>> galois_elements, bool conjugation,
         std::optional<theo::u64> max_bytes, std::optional<bool> progress) {
        LoadOptions o = load_options(max_bytes);
        o.galois_elements = elements_from(*ctx.s->ctx, rotations, galois_elements, conjugation);
        return from_bytes<W>(ctx.s, data, o, progress);
      },
      "context"_a, "data"_a, nb::kw_only(), "rotations"_a = nb::none(),
      "galois_elements"_a = nb::none(), "conjugation"_a = false, "max_bytes"_a = nb::none(),
      "progress"_a = nb::none(),
      nb::sig(("def from_bytes(context: Context, data: collections.abc.Buffer, *, "
               "rotations: collections.abc.Sequence[int] | None = None, "
               "galois_elements: collections.abc.Sequence[int] | None = None, "
               "conjugation: bool = False, max_bytes: int | None = None, "
               "progress: bool | None = None) -> " +
               cls)
                  .c_str()),
      (std::string(kFromBytesDoc) +
       " rotations / galois_elements / conjugation: load only these keys (MissingKeyError naming "
       "the first one the data lacks); none given: all keys.")
          .c_str());
  method<W>(
      "save",
      [](const W& w, nb::handle file, bool compact, std::optional<std::vector<theo::i64>> rotations,
         std::optional<std::vector<u32>> galois_elements, bool conjugation,
         std::optional<bool> progress) {
        SaveOptions o;
        o.compact = compact;
        o.galois_elements = elements_from(*w.s->ctx, rotations, galois_elements, conjugation);
        save_to(w, file, o, progress);
      },
      "file"_a, nb::kw_only(), "compact"_a = true, "rotations"_a = nb::none(),
      "galois_elements"_a = nb::none(), "conjugation"_a = false, "progress"_a = nb::none(),
      nb::sig("def save(self, file: str | os.PathLike[str] | typing.BinaryIO, *, "
              "compact: bool = True, rotations: collections.abc.Sequence[int] | None = None, "
              "galois_elements: collections.abc.Sequence[int] | None = None, "
              "conjugation: bool = False, progress: bool | None = None) -> None"),
      (std::string(kSaveDoc) + " rotations / galois_elements / conjugation as for to_bytes().")
          .c_str());
  static_method<W>(
      "load",
      [](const WContext& ctx, nb::handle file, std::optional<std::vector<theo::i64>> rotations,
         std::optional<std::vector<u32>> galois_elements, bool conjugation,
         std::optional<theo::u64> max_bytes, std::optional<bool> progress) {
        LoadOptions o = load_options(max_bytes);
        o.galois_elements = elements_from(*ctx.s->ctx, rotations, galois_elements, conjugation);
        return load_from<W>(ctx.s, file, o, progress);
      },
      "context"_a, "file"_a, nb::kw_only(), "rotations"_a = nb::none(),
      "galois_elements"_a = nb::none(), "conjugation"_a = false, "max_bytes"_a = nb::none(),
      "progress"_a = nb::none(),
      nb::sig(("def load(context: Context, file: str | os.PathLike[str] | typing.BinaryIO, *, "
               "rotations: collections.abc.Sequence[int] | None = None, "
               "galois_elements: collections.abc.Sequence[int] | None = None, "
               "conjugation: bool = False, max_bytes: int | None = None, "
               "progress: bool | None = None) -> " +
               cls)
                  .c_str()),
      (std::string(kLoadDoc) + " rotations / galois_elements / conjugation as for from_bytes().")
          .c_str());
  method<W>(
      "__reduce_ex__", [](const W& w, int protocol) { return reduce(w, protocol); }, "protocol"_a,
      "Pickle support: the parameter set (JSON) and to_bytes(); unpickling finds the Context "
      "through Context.for_parameters.");
}

// The restore function of pickles, by class name.
nb::object restore(const std::string& kind, const std::string& json, nb::handle data) {
  const SessionPtr s = for_parameters(theo::parse_parameters(json), "auto", false, 0);
  const LoadOptions o;
  if (kind == "PublicKey") return nb::cast(from_bytes<WPublicKey>(s, data, o, false));
  if (kind == "RelinKey") return nb::cast(from_bytes<WRelinKey>(s, data, o, false));
  if (kind == "GaloisKeys") return nb::cast(from_bytes<WGaloisKeys>(s, data, o, false));
  if (kind == "BootstrappingKeys") {
    return nb::cast(from_bytes<WBootstrappingKeys>(s, data, o, false));
  }
  if (kind == "EvaluationKeys") return nb::cast(from_bytes<WEvaluationKeys>(s, data, o, false));
  if (kind == "Plaintext") return nb::cast(from_bytes<WPlaintext>(s, data, o, false));
  if (kind == "Ciphertext") return nb::cast(from_bytes<WCiphertext>(s, data, o, false));
  throw theo::ParameterError("unpickling: unknown theodosian class '" + kind + "'");
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

// ---- error messages ----------------------------------------------------------------------------

// C++ API names in library messages -> the Python calls that do the same.
std::string python_message(std::string m) {
  struct Rule {
    std::regex re;
    const char* to;
  };
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> r;
    const auto add = [&r](const char* re, const char* to) { r.push_back({std::regex(re), to}); };
    add(R"(KeyGenerator::create_galois_keys\(sk, \{\}, /\*with_conjugation=\*/true\) or KeyGenerator::create_conjugation_key\(sk\))",
        "keygen.galois_keys(sk, conjugation=True), or add it to existing keys with "
        "keygen.add_galois_keys(sk, keys, conjugation=True)");
    add(R"(KeyGenerator::create_galois_keys\(sk, \{(-?[0-9]+)\}\))",
        "keygen.galois_keys(sk, [$1]), or add it to existing keys with "
        "keygen.add_galois_keys(sk, keys, rotations=[$1])");
    add(R"(KeyGenerator::add_galois_keys\(sk, \{([0-9]+)\}, keys\))",
        "keygen.add_galois_keys(sk, keys, galois_elements=[$1])");
    add(R"(\(LoadOptions::max_bytes / max_bytes=\))", "(max_bytes=)");
    add(R"(load_parameter_file / Parameters\.from_file)", "Parameters.from_file / Parameters.load");
    add(R"(^load_parameters:)", "Parameters.from_bytes / Parameters.load:");
    add(R"(^load_secret_key:)", "SecretKey.from_bytes / SecretKey.load:");
    add(R"(^load_public_key:)", "PublicKey.from_bytes / PublicKey.load:");
    add(R"(^load_relin_key:)", "RelinKey.from_bytes / RelinKey.load:");
    add(R"(^load_galois_keys:)", "GaloisKeys.from_bytes / GaloisKeys.load:");
    add(R"(^load_bootstrapping_keys:)", "BootstrappingKeys.from_bytes / BootstrappingKeys.load:");
    add(R"(^load_evaluation_keys:)", "EvaluationKeys.from_bytes / EvaluationKeys.load:");
    add(R"(^load_plaintext:)", "Plaintext.from_bytes / Plaintext.load:");
    add(R"(^load_ciphertext:)", "Ciphertext.from_bytes / Ciphertext.load:");
    add(R"(^save: )", "save / to_bytes: ");
    add(R"(\bcreate_(public_key|relin_key|galois_keys|secret_key): )", "KeyGenerator.$1: ");
    add(R"(\b(Encoder|Evaluator|Encryptor|Decryptor|Bootstrapper|KeyGenerator|LinearTransform|PolynomialEvaluator|EvalMod|Context)::([a-z_]+))",
        "$1.$2");
    return r;
  }();
  for (const Rule& rule : rules)
    m = std::regex_replace(m, rule.re, rule.to);
  return m;
}

void register_message_translator() {
  nb::module_ errors = nb::module_::import_("theodosian._errors");
  static const char* kNames[] = {"Error",        "ParameterError",   "SecurityError",
                                 "LevelError",   "ScaleError",       "MissingKeyError",
                                 "ContextError", "OutOfMemoryError", "BackendError"};
  // Never released: the translator may run until interpreter shutdown.
  static PyObject* cls[9];
  for (int i = 0; i < 9; ++i)
    cls[i] = errors.attr(kNames[i]).inc_ref().ptr();
  // Registered after bindings.h's translator, so nanobind tries this one first: same classes,
  // messages in Python terms.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    const auto set = [](int i, const std::exception& e) {
      PyErr_SetString(cls[i], python_message(e.what()).c_str());
    };
    try {
      std::rethrow_exception(p);
    } catch (const theo::SecurityError& e) {
      set(2, e);
    } catch (const theo::ParameterError& e) {
      set(1, e);
    } catch (const theo::LevelError& e) {
      set(3, e);
    } catch (const theo::ScaleError& e) {
      set(4, e);
    } catch (const theo::MissingKeyError& e) {
      set(5, e);
    } catch (const theo::ContextError& e) {
      set(6, e);
    } catch (const theo::OutOfMemoryError& e) {
      set(7, e);
    } catch (const theo::BackendError& e) {
      set(8, e);
    } catch (const theo::Error& e) {
      set(0, e);
    }
  });
}

}  // namespace

void register_context(const SessionPtr& s) {
  auto& slot = registry().live[fingerprint_of(s->ctx->params())];
  if (slot.expired()) slot = s;
}

// ---- HostCiphertext -----------------------------------------------------------------------------

struct WHostCiphertext {
  SessionPtr s;
  std::shared_ptr<const theo::HostCiphertext> h;
};

SaveOptions save_threads(unsigned threads) {
  SaveOptions o;
  o.threads = threads;
  return o;
}

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
            LoadOptions o = load_options(max_bytes);
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
        SaveOptions o;
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
  bind_common<WSecretKey>(false);
  method<WSecretKey>(
      "__reduce_ex__",
      [](const WSecretKey&, int) -> nb::object {
        throw nb::type_error(
            "a SecretKey is not picklable, so that it cannot reach a server by accident; store it "
            "with secret_key.save(path) and SecretKey.load(context, path)");
      },
      "protocol"_a, "Refuses pickling (see save / load).");
  bind_common<WPublicKey>(true);
  bind_common<WRelinKey>(true);
  bind_keyset<WGaloisKeys>();
  bind_common<WBootstrappingKeys>(true);
  bind_common<WPlaintext>(true);
  bind_common<WCiphertext>(true);
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
  bind_keyset<WEvaluationKeys>();
}

}  // namespace theopy
