#pragma once
// Shared by the translation units of theodosian._core: the Python-side wrapper types (each holds
// the C++ object plus the Session that keeps its Context alive) and conversion helpers.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "theo/circuits/bootstrapper.h"
#include "theo/math/prime_system.h"
#include "theo/model/traffic.h"
#include "theo/ring/automorphism.h"
#include "theo/theodosian.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace theopy {

using theo::u32;
using theo::u64;
using Cplx = std::complex<double>;

// ---- shared state ------------------------------------------------------------------------------

struct Session {
  explicit Session(theo::ContextPtr c) : ctx(std::move(c)), encoder(ctx), evaluator(ctx) {}
  theo::ContextPtr ctx;
  theo::Encoder encoder;
  theo::Evaluator evaluator;
  // Evaluation keys attached to the Context (read and written with the GIL held).
  std::shared_ptr<const theo::RelinKey> relin_key;
  std::shared_ptr<const theo::GaloisKeys> galois_keys;
  // Context(..., trace=True): the recorder the backend is wrapped with (off until
  // Context._trace_begin), and the open scope of the running trace (trace_bindings.cpp).
  std::shared_ptr<theo::TrafficRecorder> recorder;
  std::unique_ptr<theo::OpScope> trace_scope;
  std::string trace_label;
};
using SessionPtr = std::shared_ptr<Session>;

struct WContext {
  SessionPtr s;
};

struct WPlaintext {
  SessionPtr s;
  theo::Plaintext pt;
  bool real = false;  // encoded from real values (decode() then returns float64)
};

struct WCiphertext {
  SessionPtr s;
  theo::Ciphertext ct;
  bool real = false;  // the slots are known to hold real values
};

// A key of a Context, shared with the objects that use it (Encryptor, Evaluator, ...). Galois keys
// are not const: more rotations can be added to them.
template <typename Key>
struct WKey {
  SessionPtr s;
  std::shared_ptr<Key> k;
};
using WSecretKey = WKey<const theo::SecretKey>;
using WPublicKey = WKey<const theo::PublicKey>;
using WRelinKey = WKey<const theo::RelinKey>;
using WGaloisKeys = WKey<theo::GaloisKeys>;
using WBootstrappingKeys = WKey<const theo::BootstrappingKeys>;

struct WEncoder {
  SessionPtr s;
};

struct WKeyGenerator {
  SessionPtr s;
  std::unique_ptr<theo::KeyGenerator> kg;
  std::mutex mu;
};

struct WEncryptor {
  SessionPtr s;
  std::shared_ptr<const theo::PublicKey> pk;
  std::shared_ptr<const theo::SecretKey> sk;
  std::unique_ptr<theo::Encryptor> enc;
  std::mutex mu;
};

struct WDecryptor {
  SessionPtr s;
  std::shared_ptr<const theo::SecretKey> sk;
  std::unique_ptr<theo::Decryptor> dec;
};

struct WEvaluator {
  SessionPtr s;
  std::shared_ptr<const theo::RelinKey> relin_key;
  std::shared_ptr<const theo::GaloisKeys> galois_keys;
};

// ---- helpers -----------------------------------------------------------------------------------

[[noreturn]] inline void throw_parameter(const std::string& msg) {
  throw theo::ParameterError(msg);
}

inline theo::Prng::Seed to_seed(nb::handle obj, const char* what) {
  theo::Prng::Seed seed{};
  if (nb::isinstance<nb::bytes>(obj)) {
    const auto b = nb::borrow<nb::bytes>(obj);
    if (b.size() != seed.size()) {
      throw_parameter(std::string(what) + ": a seed of bytes must be 32 bytes long (got " +
                      std::to_string(b.size()) + ")");
    }
    std::memcpy(seed.data(), b.c_str(), seed.size());
    return seed;
  }
  if (PyLong_Check(obj.ptr())) {
    nb::object v = nb::borrow(obj);
    nb::int_ zero(0);
    if (PyObject_RichCompareBool(v.ptr(), zero.ptr(), Py_LT) == 1)
      throw_parameter(std::string(what) + ": seed must be >= 0");
    nb::object b;
    try {
      b = v.attr("to_bytes")(32, "little");
    } catch (const nb::python_error&) {
      throw_parameter(std::string(what) + ": an integer seed must be below 2**256");
    }
    std::memcpy(seed.data(), nb::borrow<nb::bytes>(b).c_str(), seed.size());
    return seed;
  }
  throw nb::type_error((std::string(what) + ": seed must be bytes (32), an int or None").c_str());
}

// Slot values from any array-like: float64 or complex128, one dimension, C-contiguous. A float64
// or complex128 contiguous numpy array is used in place (no copy).
struct Values {
  nb::object keep;
  bool is_complex = false;
  std::span<const double> re;
  std::span<const Cplx> cx;
};

inline Values to_values(nb::handle obj) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(obj);
  if (nb::cast<std::string>(a.attr("dtype").attr("kind")) == "O") {
    throw nb::type_error("slot values must be numbers (a float or complex array-like)");
  }
  Values v;
  v.is_complex = nb::cast<bool>(np.attr("iscomplexobj")(a));
  a = np.attr("ascontiguousarray")(a, "dtype"_a = v.is_complex ? "complex128" : "float64");
  const auto ndim = nb::cast<std::size_t>(a.attr("ndim"));
  if (ndim == 0) {
    a = a.attr("reshape")(1);
  } else if (ndim != 1) {
    throw nb::value_error(
        ("slot values must be one-dimensional (got " + std::to_string(ndim) + " dimensions)")
            .c_str());
  }
  v.keep = a;
  if (v.is_complex) {
    auto arr = nb::cast<nb::ndarray<const Cplx, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(a);
    v.cx = std::span<const Cplx>(arr.data(), arr.shape(0));
  } else {
    auto arr = nb::cast<nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(a);
    v.re = std::span<const double>(arr.data(), arr.shape(0));
  }
  return v;
}

template <typename T>
inline nb::object to_numpy(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t size = heap->size();
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {size}, owner));
}

inline nb::object decode_to_numpy(const Session& s, const theo::Plaintext& pt, bool real) {
  if (real) {
    std::vector<double> out;
    {
      nb::gil_scoped_release release;
      out = s.encoder.decode_real(pt);
    }
    return to_numpy(std::move(out));
  }
  std::vector<Cplx> out;
  {
    nb::gil_scoped_release release;
    out = s.encoder.decode(pt);
  }
  return to_numpy(std::move(out));
}

inline WPlaintext encode_values(const SessionPtr& s, nb::handle values, std::optional<u32> level,
                                std::optional<double> scale) {
  Values v = to_values(values);
  const u32 lvl = level.value_or(s->ctx->default_encryption_level());
  std::optional<long double> sc;
  if (scale) sc = static_cast<long double>(*scale);
  theo::Plaintext pt;
  {
    nb::gil_scoped_release release;
    pt = v.is_complex ? s->encoder.encode(v.cx, lvl, sc) : s->encoder.encode(v.re, lvl, sc);
  }
  return WPlaintext{s, std::move(pt), !v.is_complex};
}

// Binds `encode(values, level=None, scale=None) -> Plaintext` on a class whose objects hold the
// Session (Context, Encoder).
template <typename W>
void def_encode(nb::class_<W>& cls, const char* doc) {
  cls.def(
      "encode",
      [](const W& w, nb::handle values, std::optional<u32> level, std::optional<double> scale) {
        return encode_values(w.s, values, level, scale);
      },
      "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(),
      nb::sig("def encode(self, values: numpy.typing.ArrayLike, level: int | None = None, "
              "scale: float | None = None) -> Plaintext"),
      doc);
}

// Evaluation keys: the explicit argument, else the Evaluator's, else the Context's; else
// MissingKeyError naming the op and `missing`.
template <typename Key, typename Given>
std::shared_ptr<const Key> pick_key(const Given* given, std::shared_ptr<const Key> of_evaluator,
                                    std::shared_ptr<const Key> of_context, const char* op,
                                    const char* missing) {
  if (given) return given->k;
  if (of_evaluator) return of_evaluator;
  if (of_context) return of_context;
  throw theo::MissingKeyError(std::string(op) + missing);
}

inline std::shared_ptr<const theo::RelinKey> pick_relin(const SessionPtr& s, const WEvaluator* ev,
                                                        const WRelinKey* given, const char* op) {
  return pick_key<theo::RelinKey>(given, ev ? ev->relin_key : nullptr, s->relin_key, op,
                                  ": no relinearization key (pass relin_key=..., create the "
                                  "Evaluator with relin_key=..., or set context.relin_key)");
}

inline std::shared_ptr<const theo::GaloisKeys> pick_galois(const SessionPtr& s,
                                                           const WEvaluator* ev,
                                                           const WGaloisKeys* given,
                                                           const char* op) {
  return pick_key<theo::GaloisKeys>(given, ev ? ev->galois_keys : nullptr, s->galois_keys, op,
                                    ": no Galois keys (pass galois_keys=..., create the Evaluator "
                                    "with galois_keys=..., or set context.galois_keys)");
}

inline std::string fmt_scale(long double scale) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2^%.4f", static_cast<double>(std::log2(scale)));
  return buf;
}

// Runs f with the GIL released and wraps the resulting C++ Ciphertext.
template <typename F>
inline WCiphertext run_ct(const SessionPtr& s, bool real, F&& f) {
  theo::Ciphertext out;
  {
    nb::gil_scoped_release release;
    out = f();
  }
  return WCiphertext{s, std::move(out), real};
}

// Ciphertext.serialize() (theo::serialize: to_bytes with the default options, no hints), written
// into the bytes object without the GIL.
inline nb::bytes serialize_ct(const WCiphertext& c) {
  const theo::SaveOptions o;
  const theo::u64 size = theo::serialized_size(*c.s->ctx, c.ct, o);
  nb::object out = nb::steal(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)));
  if (!out.is_valid()) throw nb::python_error();
  {
    nb::gil_scoped_release release;
    theo::to_bytes(*c.s->ctx, c.ct,
                   {reinterpret_cast<std::uint8_t*>(PyBytes_AS_STRING(out.ptr())), size}, o);
  }
  return nb::borrow<nb::bytes>(out);
}

template <typename F>
inline void run_void(F&& f) {
  nb::gil_scoped_release release;
  f();
}

inline WPlaintext deep_copy(const WPlaintext& p) {
  return WPlaintext{p.s, p.s->evaluator.clone(p.pt), p.real};
}
inline WCiphertext deep_copy(const WCiphertext& c) {
  return WCiphertext{c.s, c.s->evaluator.clone(c.ct), c.real};
}

// Ciphertext.serialize(): the binary form, made with the GIL released.
inline nb::bytes serialize_ciphertext(const WCiphertext& c) {
  return serialize_ct(c);
}
// Context.deserialize / Ciphertext.deserialize: read in place from the bytes object.
inline WCiphertext deserialize_ciphertext(const SessionPtr& s, nb::bytes data) {
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(data.c_str()),
                                            data.size());
  return run_ct(s, false, [&] { return theo::load_ciphertext(s->ctx, bytes); });
}

inline bool is_scalar(nb::handle h) {
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyComplex_Check(h.ptr())) return true;
  nb::object numbers = nb::module_::import_("numbers");
  return nb::isinstance(h, numbers.attr("Number"));
}
inline bool is_integer(nb::handle h) {
  if (PyBool_Check(h.ptr())) return false;
  if (PyLong_Check(h.ptr())) return true;
  nb::object numbers = nb::module_::import_("numbers");
  return nb::isinstance(h, numbers.attr("Integral"));
}
inline Cplx to_cplx(nb::handle h) {
  const Py_complex c = PyComplex_AsCComplex(h.ptr());
  if (c.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return {c.real, c.imag};
}

inline nb::object not_implemented() {
  return nb::borrow(Py_NotImplemented);
}

// ---- Ciphertext operators -------------------------------------------------------------------
// +, -: with a Ciphertext, a Plaintext, a scalar or an array (encoded at the ciphertext's level and
// scale). *: a Ciphertext (relinearized with context.relin_key), a Plaintext, a float/complex
// scalar or an array, followed by one rescale; an int multiplies exactly without using a level.

enum class Op { kAdd, kSub, kRSub, kMul };

// a op pt with a plaintext operand (a Plaintext, or an array encoded at a's level); * rescales.
inline theo::Ciphertext ct_plain_op(const theo::Evaluator& ev, const theo::Ciphertext& a,
                                    const theo::Plaintext& pt, Op op) {
  switch (op) {
    case Op::kAdd:
      return ev.add_plain(a, pt);
    case Op::kSub:
      return ev.sub_plain(a, pt);
    case Op::kRSub: {
      theo::Ciphertext t = ev.negate(a);
      ev.add_plain_inplace(t, pt);
      return t;
    }
    case Op::kMul:
    default: {
      theo::Ciphertext t = ev.multiply_plain(a, pt);
      ev.rescale_inplace(t);
      return t;
    }
  }
}

inline nb::object ct_binary(WCiphertext& a, nb::handle other, Op op) {
  const SessionPtr& s = a.s;
  const theo::Evaluator& ev = s->evaluator;
  if (nb::isinstance<WCiphertext>(other)) {
    auto& b = nb::cast<WCiphertext&>(other);
    const bool real = a.real && b.real;
    switch (op) {
      case Op::kAdd:
        return nb::cast(run_ct(s, real, [&] { return ev.add(a.ct, b.ct); }));
      case Op::kSub:
        return nb::cast(run_ct(s, real, [&] { return ev.sub(a.ct, b.ct); }));
      case Op::kRSub:
        return nb::cast(run_ct(s, real, [&] { return ev.sub(b.ct, a.ct); }));
      case Op::kMul: {
        auto rlk = pick_relin(s, nullptr, nullptr, "ciphertext * ciphertext");
        return nb::cast(
            run_ct(s, real, [&] { return ev.multiply_relin_rescale(a.ct, b.ct, *rlk); }));
      }
    }
  }
  if (nb::isinstance<WPlaintext>(other)) {
    auto& b = nb::cast<WPlaintext&>(other);
    return nb::cast(run_ct(s, a.real && b.real, [&] { return ct_plain_op(ev, a.ct, b.pt, op); }));
  }
  if (is_scalar(other)) {
    if (op == Op::kMul && is_integer(other)) {
      const auto k = nb::cast<theo::i64>(other);
      return nb::cast(run_ct(s, a.real, [&] { return ev.multiply_integer(a.ct, k); }));
    }
    const Cplx c = to_cplx(other);
    const bool real = a.real && c.imag() == 0.0;
    switch (op) {
      case Op::kAdd:
        return nb::cast(run_ct(s, real, [&] { return ev.add_const(a.ct, c); }));
      case Op::kSub:
        return nb::cast(run_ct(s, real, [&] { return ev.add_const(a.ct, -c); }));
      case Op::kRSub:
        return nb::cast(run_ct(s, real, [&] {
          theo::Ciphertext t = ev.negate(a.ct);
          ev.add_const_inplace(t, c);
          return t;
        }));
      case Op::kMul:
        return nb::cast(run_ct(s, real, [&] {
          theo::Ciphertext t = ev.multiply_const(a.ct, c);
          ev.rescale_inplace(t);
          return t;
        }));
    }
  }
  // Array-like: encode at the ciphertext's level (and its scale for + and -).
  Values v;
  try {
    v = to_values(other);
  } catch (const nb::python_error&) {
    return not_implemented();
  } catch (const nb::builtin_exception&) {
    return not_implemented();
  }
  const bool real = a.real && !v.is_complex;
  return nb::cast(run_ct(s, real, [&] {
    const u32 level = a.ct.level();
    std::optional<long double> scale;
    if (op != Op::kMul) scale = a.ct.scale();
    theo::Plaintext pt = v.is_complex ? s->encoder.encode(v.cx, level, scale)
                                      : s->encoder.encode(v.re, level, scale);
    return ct_plain_op(ev, a.ct, pt, op);
  }));
}

// a += b / a -= b (op kAdd / kSub): in place for a Ciphertext b (a rebound, as
// Evaluator::add_inplace does), else a new Ciphertext as for a + b / a - b.
inline nb::object ct_add_sub_inplace(nb::handle self, nb::handle b, Op op) {
  auto& a = nb::cast<WCiphertext&>(self);
  if (!nb::isinstance<WCiphertext>(b)) return ct_binary(a, b, op);
  auto& o = nb::cast<WCiphertext&>(b);
  run_void([&] {
    if (op == Op::kAdd)
      a.s->evaluator.add_inplace(a.ct, o.ct);
    else
      a.s->evaluator.sub_inplace(a.ct, o.ct);
  });
  a.real = a.real && o.real;
  return nb::borrow(self);
}

inline WCiphertext ct_rotate(const WCiphertext& a, int r) {
  auto gk = pick_galois(a.s, nullptr, nullptr, "rotate");
  return run_ct(a.s, a.real, [&] { return a.s->evaluator.rotate(a.ct, r, *gk); });
}

// Galois keys one element at a time (same keys as one create_galois_keys call), with an optional
// progress bar and Ctrl-C checks between keys.
inline void add_galois_elements(WKeyGenerator& self, const WSecretKey& sk,
                                const std::vector<u32>& elements, theo::GaloisKeys& keys,
                                std::optional<bool> progress) {
  bool show = false;
  if (progress.has_value()) {
    show = *progress;
  } else if (elements.size() >= 8) {
    nb::object err = nb::module_::import_("sys").attr("stderr");
    try {
      show = !err.is_none() && nb::cast<bool>(err.attr("isatty")());
    } catch (const nb::python_error&) {
      show = false;
    }
  }
  nb::object bar = nb::none();
  if (show) {
    bar = nb::module_::import_("theodosian._progress")
              .attr("make_bar")(elements.size(), "Galois keys");
  }
  try {
    for (const u32 g : elements) {
      {
        nb::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(self.mu);
        self.kg->add_galois_keys(*sk.k, std::span<const u32>(&g, 1), keys);
      }
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (!bar.is_none()) bar.attr("update")(1);
    }
  } catch (...) {
    if (!bar.is_none()) {
      try {
        bar.attr("close")();
      } catch (...) {  // keep the original exception
      }
    }
    throw;
  }
  if (!bar.is_none()) bar.attr("close")();
}

inline theo::BackendChoice parse_backend(const std::string& name) {
  if (name == "auto") return theo::BackendChoice::kAuto;
  if (name == "cpu") return theo::BackendChoice::kCpu;
  if (name == "cuda" || name == "gpu") return theo::BackendChoice::kCuda;
  throw_parameter("backend must be \"auto\", \"cpu\" or \"cuda\" (got \"" + name + "\")");
}

// The folder every preset lookup of the module searches first: THEO_PRESET_DIR as the environment
// had it when the module was imported (bind_context reads it once; docs/configuration.md).
const std::filesystem::path& preset_dir();

inline theo::ParameterSet params_from(nb::handle obj) {
  if (nb::isinstance<theo::ParameterSet>(obj)) return nb::cast<theo::ParameterSet>(obj);
  nb::object os = nb::module_::import_("os");
  if (nb::isinstance<nb::str>(obj) || nb::hasattr(obj, "__fspath__")) {
    const auto text = nb::cast<std::string>(os.attr("fspath")(obj));
    const bool looks_like_path = text.find('/') != std::string::npos ||
                                 text.find('\\') != std::string::npos ||
                                 (text.size() > 5 && text.ends_with(".json"));
    if (looks_like_path) return theo::load_parameter_file(text);
    return theo::load_preset(text, preset_dir());
  }
  throw nb::type_error("params must be a Parameters, a preset name or a path to a JSON file");
}

template <typename E>
bool is_a(const theo::Error* e) {
  return dynamic_cast<const E*>(e) != nullptr;
}

// The library's exceptions and their classes in theodosian._errors, a derived class before its
// base (an exception becomes the first class it is).
struct ErrorClass {
  const char* name;
  bool (*is)(const theo::Error*);
};
inline constexpr ErrorClass kErrorClasses[] = {{"SecurityError", is_a<theo::SecurityError>},
                                               {"ParameterError", is_a<theo::ParameterError>},
                                               {"LevelError", is_a<theo::LevelError>},
                                               {"ScaleError", is_a<theo::ScaleError>},
                                               {"MissingKeyError", is_a<theo::MissingKeyError>},
                                               {"ContextError", is_a<theo::ContextError>},
                                               {"OutOfMemoryError", is_a<theo::OutOfMemoryError>},
                                               {"BackendError", is_a<theo::BackendError>},
                                               {"Error", is_a<theo::Error>}};
inline constexpr std::size_t kNumErrorClasses = std::size(kErrorClasses);

// The classes of kErrorClasses in theodosian._errors, looked up once and never released (a
// translator may run until interpreter shutdown).
inline PyObject* const* error_classes() {
  static PyObject* const* const cls = [] {
    static PyObject* c[kNumErrorClasses];
    nb::module_ errors = nb::module_::import_("theodosian._errors");
    for (std::size_t i = 0; i < kNumErrorClasses; ++i)
      c[i] = errors.attr(kErrorClasses[i].name).inc_ref().ptr();
    return c;
  }();
  return cls;
}

// Translates the library's exceptions into the first of kErrorClasses they are, the Python
// message being kMessage(what()). nanobind tries the translator registered last first.
template <std::string (*kMessage)(const char* what)>
void register_error_translator() {
  error_classes();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const theo::Error& e) {
      for (std::size_t i = 0; i < kNumErrorClasses; ++i) {
        if (kErrorClasses[i].is(&e)) {
          PyErr_SetString(error_classes()[i], kMessage(e.what()).c_str());
          return;
        }
      }
    }
  });
}

inline std::string message_as_is(const char* what) {
  return what;
}

inline void register_exceptions(nb::module_& m) {
  nb::module_ errors = nb::module_::import_("theodosian._errors");
  for (std::size_t i = 0; i < kNumErrorClasses; ++i)
    m.attr(kErrorClasses[i].name) = errors.attr(kErrorClasses[i].name);
  register_error_translator<message_as_is>();
}

// The bindings of one topic each (<topic>_bindings.cpp), called in this order by NB_MODULE
// (theodosian_ext.cpp): circuits are Chebyshev series, polynomial evaluation, linear transforms,
// EvalMod and bootstrapping; serialization is to_bytes / from_bytes / save / load / pickling of
// every object, EvaluationKeys, Context.for_parameters and the fingerprint, and the translation of
// C++ API names in error messages into the Python calls.
void bind_context(nb::module_& m);
void bind_values(nb::module_& m);
void bind_keys(nb::module_& m);
void bind_encoding(nb::module_& m);
void bind_evaluator(nb::module_& m);
void bind_circuits(nb::module_& m);
void bind_workloads(nb::module_& m);
void bind_serialization(nb::module_& m);
void bind_cnn(nb::module_& m);
void bind_activations(nb::module_& m);

// Remembers a new Context for Context.for_parameters (the first live one per fingerprint;
// serialization_bindings.cpp).
void register_context(const SessionPtr& s);

// Defined in trace_bindings.cpp: Context._trace_begin / _trace_end (the op trace of a run, read
// by theodosian.sim.tracing).
void bind_trace(nb::class_<WContext>& context);
// Defined in graph_bindings.cpp: Context.capture and Graph.
void bind_graph(nb::module_& m, nb::class_<WContext>& context);

}  // namespace theopy
