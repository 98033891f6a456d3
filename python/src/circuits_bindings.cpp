// theodosian._core, circuits layer: Chebyshev series and their homomorphic evaluation, plaintext
// matrix x ciphertext (BSGS linear transforms), EvalMod and bootstrapping
// (include/theo/circuits/*.h).

#include <nanobind/stl/function.h>

#include <functional>
#include <map>

#include "bindings.h"
#include "theo/circuits/circuits.h"

namespace theopy {
namespace {

struct WPolynomialEvaluator {
  SessionPtr s;
  std::shared_ptr<const theo::RelinKey> relin_key;  // null: the Context's at call time
};

struct WLinearTransform {
  SessionPtr s;
  std::unique_ptr<theo::LinearTransform> lt;
  bool real = false;  // every diagonal is real
};

struct WBootstrapper {
  SessionPtr s;
  std::unique_ptr<theo::Bootstrapper> b;
};

struct WEvalMod {
  SessionPtr s;
  std::unique_ptr<theo::EvalMod> em;
};

std::shared_ptr<const theo::RelinKey> relin_for(const SessionPtr& s,
                                                const std::shared_ptr<const theo::RelinKey>& own,
                                                const WRelinKey* given, const char* op) {
  if (given) return given->k;
  if (own) return own;
  return pick_relin(s, nullptr, nullptr, op);
}

// Complex slot vector from an array-like (copied).
std::vector<Cplx> to_complex_vector(nb::handle obj) {
  Values v = to_values(obj);
  if (v.is_complex) return {v.cx.begin(), v.cx.end()};
  return {v.re.begin(), v.re.end()};
}

bool matrix_is_real(const theo::DiagonalMatrix& m) {
  for (const auto& [k, d] : m.diagonals)
    for (const Cplx& c : d)
      if (c.imag() != 0.0) return false;
  return true;
}

theo::DiagonalMatrix from_dense(nb::handle obj) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("ascontiguousarray")(np.attr("asarray")(obj), "dtype"_a = "complex128");
  const auto ndim = nb::cast<std::size_t>(a.attr("ndim"));
  if (ndim != 2) throw nb::value_error("from_dense: the matrix must be two-dimensional");
  auto arr = nb::cast<nb::ndarray<const Cplx, nb::ndim<2>, nb::c_contig, nb::device::cpu>>(a);
  const std::size_t n = arr.shape(0);
  if (arr.shape(1) != n || n == 0 || (n & (n - 1)) != 0) {
    throw theo::ParameterError("from_dense: the matrix must be square with a power-of-two size");
  }
  theo::DiagonalMatrix m;
  m.slots = static_cast<u32>(n);
  const Cplx* data = arr.data();
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<Cplx> d(n);
    bool nonzero = false;
    for (std::size_t p = 0; p < n; ++p) {
      d[p] = data[p * n + (p + k) % n];
      nonzero = nonzero || d[p] != Cplx{};
    }
    if (nonzero) m.diagonals.emplace(static_cast<u32>(k), std::move(d));
  }
  return m;
}

nb::object to_dense(const theo::DiagonalMatrix& m) {
  const std::size_t n = m.slots;
  std::vector<Cplx> out(n * n);
  for (const auto& [k, d] : m.diagonals)
    for (std::size_t p = 0; p < n && p < d.size(); ++p)
      out[p * n + (p + k) % n] = d[p];
  auto* heap = new std::vector<Cplx>(std::move(out));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<Cplx>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, Cplx, nb::ndim<2>>(heap->data(), {n, n}, owner));
}

}  // namespace

void bind_circuits(nb::module_& m) {
  // ---- Chebyshev series ----------------------------------------------------------------------
  nb::class_<theo::ChebyshevSeries>(
      m, "ChebyshevSeries",
      "p(x) = sum_i c_i T_i(y), y = (2x - a - b) / (b - a): a polynomial in the Chebyshev basis "
      "on [a, b]. Make one with chebyshev_fit(f, a, b, degree) or from coefficients.")
      .def(
          "__init__",
          [](theo::ChebyshevSeries* self, std::vector<double> coeffs, double a, double b) {
            new (self) theo::ChebyshevSeries{a, b, std::move(coeffs)};
          },
          "coeffs"_a, "a"_a = -1.0, "b"_a = 1.0, "A series with coefficients c_0..c_d on [a, b].")
      .def_rw("a", &theo::ChebyshevSeries::a, "Left end of the interval.")
      .def_rw("b", &theo::ChebyshevSeries::b, "Right end of the interval.")
      .def_rw("coeffs", &theo::ChebyshevSeries::coeffs, "Coefficients c_0 .. c_d.")
      .def_prop_ro("degree", &theo::ChebyshevSeries::degree, "The degree d.")
      .def(
          "__call__",
          [](const theo::ChebyshevSeries& p, nb::handle x) -> nb::object {
            if (PyFloat_Check(x.ptr()) || PyLong_Check(x.ptr())) {
              return nb::cast(p(nb::cast<double>(x)));
            }
            Values v = to_values(x);
            if (v.is_complex) throw nb::type_error("ChebyshevSeries: real inputs only");
            std::vector<double> out(v.re.size());
            for (std::size_t i = 0; i < out.size(); ++i)
              out[i] = p(v.re[i]);
            return to_numpy(std::move(out));
          },
          "x"_a,
          nb::sig("def __call__(self, x: float | numpy.typing.ArrayLike) -> "
                  "float | numpy.typing.NDArray[numpy.float64]"),
          "Plaintext evaluation (Clenshaw) at a float or at every element of a 1-D array.")
      .def("__repr__", [](const theo::ChebyshevSeries& p) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "ChebyshevSeries(degree=%u, a=%g, b=%g)", p.degree(), p.a,
                      p.b);
        return std::string(buf);
      });

  m.def(
      "chebyshev_fit",
      [](const std::function<double(double)>& f, double a, double b, u32 degree) {
        return theo::chebyshev_fit(f, a, b, degree);
      },
      "f"_a, "a"_a, "b"_a, "degree"_a,
      "Interpolant of f (a Python callable float -> float) at the degree + 1 Chebyshev nodes of "
      "[a, b] (near-minimax for smooth f).");
  m.def(
      "chebyshev_max_error",
      [](const std::function<double(double)>& f, const theo::ChebyshevSeries& p, u32 samples) {
        return theo::chebyshev_max_error(f, p, samples);
      },
      "f"_a, "series"_a, "samples"_a = 4096u,
      "max |f - p| over `samples` points equally spaced in [a, b].");

  // ---- PolynomialEvaluator -------------------------------------------------------------------
  nb::class_<WPolynomialEvaluator>(
      m, "PolynomialEvaluator",
      "Homomorphic evaluation of a ChebyshevSeries (depth-optimal Paterson-Stockmeyer): a "
      "degree-d series consumes ceil(log2(d + 1)) levels, plus one for the affine map onto "
      "[-1, 1] when [a, b] != [-1, 1] or the input is not at its level's default scale. Results "
      "sit at the default scale of their level.")
      .def(
          "__init__",
          [](WPolynomialEvaluator* self, const WContext& ctx, const WRelinKey* rk) {
            new (self) WPolynomialEvaluator{ctx.s, rk ? rk->k : nullptr};
          },
          "context"_a, nb::arg("relin_key").none() = nb::none(),
          "An evaluator for `context`; relin_key: default context.relin_key.")
      .def(
          "evaluate",
          [](const WPolynomialEvaluator& pe, const WCiphertext& ct, const theo::ChebyshevSeries& p,
             std::optional<u32> output_level) {
            auto rlk = relin_for(pe.s, pe.relin_key, nullptr, "PolynomialEvaluator.evaluate");
            return run_ct(pe.s, ct.real, [&] {
              const theo::PolynomialEvaluator e(pe.s->evaluator, *rlk);
              return e.evaluate(ct.ct, p, output_level);
            });
          },
          "ciphertext"_a, "series"_a, "output_level"_a = nb::none(),
          "p(ct) slot-wise (slots must lie in [p.a, p.b]); at level ct.level - "
          "levels_consumed(ct, p), or output_level when given (at or below that).")
      .def(
          "levels_consumed",
          [](const WPolynomialEvaluator& pe, const WCiphertext& ct,
             const theo::ChebyshevSeries& p) {
            auto rlk = relin_for(pe.s, pe.relin_key, nullptr, "levels_consumed");
            const theo::PolynomialEvaluator e(pe.s->evaluator, *rlk);
            return e.levels_consumed(ct.ct, p);
          },
          "ciphertext"_a, "series"_a, "Levels evaluate() consumes on this ciphertext.")
      .def_static("depth", &theo::PolynomialEvaluator::depth, "degree"_a,
                  "ceil(log2(degree + 1)): levels for a series on [-1, 1] at the default scale.")
      .def(
          "affine_to_unit",
          [](const WPolynomialEvaluator& pe, const WCiphertext& ct, double a, double b) {
            auto rlk = relin_for(pe.s, pe.relin_key, nullptr, "affine_to_unit");
            return run_ct(pe.s, ct.real, [&] {
              const theo::PolynomialEvaluator e(pe.s->evaluator, *rlk);
              return e.affine_to_unit(ct.ct, a, b);
            });
          },
          "ciphertext"_a, "a"_a, "b"_a,
          "(2 ct - a - b) / (b - a), at level - 1 on that level's default scale.");

  // ---- DiagonalMatrix / LinearTransform ------------------------------------------------------
  nb::class_<theo::DiagonalMatrix>(
      m, "DiagonalMatrix",
      "An n x n matrix on n slots as its nonzero generalized diagonals: "
      "(M x)_p = sum_k d_k[p] x_(p+k mod n).")
      .def(
          "__init__",
          [](theo::DiagonalMatrix* self, u32 slots, nb::handle diagonals) {
            theo::DiagonalMatrix dm;
            dm.slots = slots;
            if (!diagonals.is_none()) {
              for (auto [k, d] : nb::borrow<nb::dict>(diagonals))
                dm.diagonals[nb::cast<u32>(k)] = to_complex_vector(d);
            }
            new (self) theo::DiagonalMatrix(std::move(dm));
          },
          "slots"_a, "diagonals"_a = nb::none(),
          nb::sig("def __init__(self, slots: int, diagonals: dict[int, numpy.typing.ArrayLike] "
                  "| None = None) -> None"),
          "A matrix on `slots` slots from {k: diagonal d_k (length slots)}.")
      .def_static("identity", &theo::DiagonalMatrix::identity, "slots"_a,
                  "The identity on `slots` slots.")
      .def_static("from_dense", &from_dense, "matrix"_a,
                  nb::sig("def from_dense(matrix: numpy.typing.ArrayLike) -> DiagonalMatrix"),
                  "The nonzero diagonals of a dense square matrix (size a power of two).")
      .def("to_dense", &to_dense,
           nb::sig("def to_dense(self) -> numpy.typing.NDArray[numpy.complex128]"),
           "The dense matrix (complex128).")
      .def_rw("slots", &theo::DiagonalMatrix::slots, "The dimension n.")
      .def_prop_rw(
          "diagonals",
          [](const theo::DiagonalMatrix& dm) {
            nb::dict out;
            for (const auto& [k, d] : dm.diagonals) {
              std::vector<Cplx> copy = d;
              out[nb::int_(k)] = to_numpy(std::move(copy));
            }
            return out;
          },
          [](theo::DiagonalMatrix& dm, nb::dict diagonals) {
            std::map<u32, std::vector<Cplx>> ds;
            for (auto [k, d] : diagonals)
              ds[nb::cast<u32>(k)] = to_complex_vector(d);
            dm.diagonals = std::move(ds);
          },
          nb::for_getter(
              nb::sig("def diagonals(self) -> dict[int, numpy.typing.NDArray[numpy.complex128]]")),
          nb::for_setter(
              nb::sig("def diagonals(self, arg: dict[int, numpy.typing.ArrayLike], /) -> None")),
          "{k: d_k} (copies; assign a new dict to change them).")
      .def(
          "apply",
          [](const theo::DiagonalMatrix& dm, nb::handle x) {
            return to_numpy(dm.apply(to_complex_vector(x)));
          },
          "x"_a,
          nb::sig("def apply(self, x: numpy.typing.ArrayLike) -> "
                  "numpy.typing.NDArray[numpy.complex128]"),
          "Plaintext reference M x.")
      .def("multiply", &theo::DiagonalMatrix::multiply, "other"_a, "prune"_a = 0.0,
           "self * other (other applied first); diagonals below `prune` in max-abs are dropped.")
      .def("scale_by", &theo::DiagonalMatrix::scale_by, "c"_a, "Multiplies every entry by c.")
      .def("__repr__", [](const theo::DiagonalMatrix& dm) {
        return "DiagonalMatrix(slots=" + std::to_string(dm.slots) +
               ", diagonals=" + std::to_string(dm.diagonals.size()) + ")";
      });

  nb::class_<WLinearTransform>(
      m, "LinearTransform",
      "A plaintext matrix x ciphertext product by the diagonal method with baby-step/giant-step "
      "(about 2 sqrt(D) rotations for D diagonals; the baby rotations share one ModUp). The "
      "diagonals are encoded once for inputs at `level`; the output lands at level - 1 on its "
      "default scale.")
      .def(
          "__init__",
          [](WLinearTransform* self, const WContext& ctx, nb::handle matrix, u32 level,
             std::optional<double> input_scale, u32 baby_steps, bool min_keys) {
            theo::DiagonalMatrix dm = nb::isinstance<theo::DiagonalMatrix>(matrix)
                                          ? nb::cast<const theo::DiagonalMatrix&>(matrix)
                                          : from_dense(matrix);
            std::optional<long double> sc;
            if (input_scale) sc = static_cast<long double>(*input_scale);
            theo::LinearTransformOptions opt;
            opt.baby_steps = baby_steps;
            opt.min_keys = min_keys;
            const bool real = matrix_is_real(dm);
            std::unique_ptr<theo::LinearTransform> lt;
            {
              nb::gil_scoped_release release;
              lt = std::make_unique<theo::LinearTransform>(ctx.s->encoder, dm, level, sc, opt);
            }
            new (self) WLinearTransform{ctx.s, std::move(lt), real};
          },
          "context"_a, "matrix"_a, "level"_a, "input_scale"_a = nb::none(), nb::kw_only(),
          "baby_steps"_a = 0u, "min_keys"_a = false,
          nb::sig("def __init__(self, context: Context, matrix: DiagonalMatrix | "
                  "numpy.typing.ArrayLike, level: int, input_scale: float | None = None, *, "
                  "baby_steps: int = 0, min_keys: bool = False) -> None"),
          "Encodes the matrix (a DiagonalMatrix or a dense square array) for inputs at `level` "
          "with scale input_scale (default: Delta_level). baby_steps: 0 picks the count that "
          "minimizes rotations; min_keys: use rotation keys for +-2^k only.")
      .def(
          "rotations", [](const WLinearTransform& t) { return t.lt->rotations(); },
          "The left rotations whose keys evaluate() needs (pass to KeyGenerator.galois_keys).")
      .def_prop_ro(
          "level", [](const WLinearTransform& t) { return t.lt->level(); }, "Input level.")
      .def_prop_ro(
          "slots", [](const WLinearTransform& t) { return t.lt->slots(); }, "Matrix dimension.")
      .def_prop_ro(
          "input_scale",
          [](const WLinearTransform& t) { return static_cast<double>(t.lt->input_scale()); },
          "The input scale the diagonals were encoded for.")
      .def_prop_ro(
          "diagonal_count", [](const WLinearTransform& t) { return t.lt->diagonal_count(); },
          "Number of nonzero diagonals.")
      .def(
          "evaluate",
          [](const WLinearTransform& t, const WCiphertext& ct, const WGaloisKeys* gk) {
            auto keys = pick_galois(t.s, nullptr, gk, "LinearTransform.evaluate");
            return run_ct(t.s, ct.real && t.real,
                          [&] { return t.lt->evaluate(t.s->evaluator, ct.ct, *keys); });
          },
          "ciphertext"_a, nb::arg("galois_keys").none() = nb::none(),
          "M ct (ct at level(), higher levels are brought down); galois_keys: default "
          "context.galois_keys.")
      .def(
          "__matmul__",
          [](const WLinearTransform& t, const WCiphertext& ct) {
            auto keys = pick_galois(t.s, nullptr, nullptr, "LinearTransform @ ciphertext");
            return run_ct(t.s, ct.real && t.real,
                          [&] { return t.lt->evaluate(t.s->evaluator, ct.ct, *keys); });
          },
          "ciphertext"_a, "M @ ct: evaluate() with context.galois_keys.");

  m.def(
      "coeff_to_slot_matrices",
      [](u32 slots, u32 levels, Cplx scale) {
        return theo::coeff_to_slot_matrices(slots, levels, scale);
      },
      "slots"_a, "levels"_a, "scale"_a = Cplx{1.0, 0.0},
      "The CoeffToSlot factors (first applied first); their product is scale * P V^-1.");
  m.def(
      "slot_to_coeff_matrices",
      [](u32 slots, u32 levels, Cplx scale) {
        return theo::slot_to_coeff_matrices(slots, levels, scale);
      },
      "slots"_a, "levels"_a, "scale"_a = Cplx{1.0, 0.0},
      "The SlotToCoeff factors (first applied first); their product is scale * V P.");

  // ---- EvalMod -------------------------------------------------------------------------------
  nb::class_<theo::EvalModParams>(
      m, "EvalModParams",
      "Parameters of EvalMod (homomorphic reduction mod 1): K, double angles, cosine degree, "
      "arcsine correction.")
      .def(nb::init<>(), "Library defaults (K = 12, 3 double angles, degree 31).")
      .def_rw("k_bound", &theo::EvalModParams::k_bound, "K: |I| < K.")
      .def_rw("double_angles", &theo::EvalModParams::double_angles, "r, double-angle steps.")
      .def_rw("degree", &theo::EvalModParams::degree, "Degree of the cosine interpolant.")
      .def_rw("arcsine_degree", &theo::EvalModParams::arcsine_degree,
              "0: no arcsine correction; else the odd Taylor degree.")
      .def_rw("estimated_error", &theo::EvalModParams::estimated_error,
              "Model estimate of max |output - 2 pi eps| (informational).")
      .def_prop_ro("depth", &theo::EvalModParams::depth, "Levels consumed.")
      .def_static("bound_for", &theo::EvalModParams::bound_for, "hamming_weight"_a, "log_n"_a,
                  "level0_limbs"_a, "K for a sparse secret of this Hamming weight.")
      .def_static("derive", &theo::EvalModParams::derive, "hamming_weight"_a, "log_n"_a,
                  "level0_limbs"_a, "depth_budget"_a, "arcsine_degree"_a = 0u,
                  "The most accurate (r, degree) within depth_budget levels.")
      .def("__repr__", [](const theo::EvalModParams& p) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "EvalModParams(k_bound=%u, double_angles=%u, degree=%u, arcsine_degree=%u, "
                      "depth=%u)",
                      p.k_bound, p.double_angles, p.degree, p.arcsine_degree, p.depth());
        return std::string(buf);
      });

  nb::class_<WEvalMod>(m, "EvalMod",
                       "Homomorphic reduction modulo 1 (sin(2 pi x) by a cosine interpolant and "
                       "double angles, optionally arcsine-corrected).")
      .def(
          "__init__",
          [](WEvalMod* self, const WContext& ctx, const theo::EvalModParams& p) {
            new (self) WEvalMod{ctx.s, std::make_unique<theo::EvalMod>(p)};
          },
          "context"_a, "params"_a, "EvalMod with these parameters.")
      .def(
          "evaluate",
          [](const WEvalMod& e, const WCiphertext& ct, const WRelinKey* rk) {
            auto rlk = relin_for(e.s, nullptr, rk, "EvalMod.evaluate");
            return run_ct(e.s, ct.real, [&] {
              const theo::PolynomialEvaluator pe(e.s->evaluator, *rlk);
              return e.em->evaluate(pe, e.s->evaluator, *rlk, ct.ct);
            });
          },
          "ciphertext"_a, nb::arg("relin_key").none() = nb::none(),
          "ct holds real y = x / input_divisor (K + 1/4) at its level's default scale; returns "
          "sin(2 pi x) (or 2 pi (x mod 1) with the arcsine correction) at level "
          "ct.level - params.depth.")
      .def_prop_ro(
          "input_divisor", [](const WEvalMod& e) { return e.em->input_divisor(); },
          "K + 1/4: evaluate() takes y = x / input_divisor.")
      .def(
          "reference", [](const WEvalMod& e, double y) { return e.em->reference(y); }, "y"_a,
          "Plaintext reference of the same computation.")
      .def_prop_ro(
          "params", [](const WEvalMod& e) { return e.em->params(); }, "The parameters.")
      .def_prop_ro(
          "cosine", [](const WEvalMod& e) { return e.em->cosine(); },
          "The cosine interpolant (a ChebyshevSeries in z = 2 v^2 - 1, v the shifted input).");

  // ---- Bootstrapping -------------------------------------------------------------------------
  nb::class_<WBootstrappingKeys>(
      m, "BootstrappingKeys",
      "Everything bootstrapping needs beyond the Context: relinearization and Galois keys and "
      "the two sparse-secret encapsulation keys. Made by Bootstrapper.generate_keys().")
      .def_prop_ro(
          "relin_key",
          [](const WBootstrappingKeys& k) {
            return WRelinKey{k.s, std::shared_ptr<const theo::RelinKey>(k.k, &k.k->relin)};
          },
          "The relinearization key (usable for ordinary multiplications too).")
      .def_prop_ro(
          "galois_keys",
          [](const WBootstrappingKeys& k) {
            auto mut = std::const_pointer_cast<theo::BootstrappingKeys>(k.k);
            return WGaloisKeys{k.s, std::shared_ptr<theo::GaloisKeys>(mut, &mut->galois)};
          },
          "The Galois keys (conjugation and every rotation bootstrapping uses).");

  nb::class_<WBootstrapper>(
      m, "Bootstrapper",
      "CKKS bootstrapping with sparse-secret encapsulation: takes a ciphertext at any level "
      "(brought to level 0) and returns it at output_level with fresh levels. Needs a "
      "bootstrappable parameter set (e.g. 'n16_s40_boot', 'bootparam_40').")
      .def(
          "__init__",
          [](WBootstrapper* self, const WContext& ctx, u32 slots, u32 cts_levels, u32 stc_levels,
             u32 evalmod_levels, u32 arcsine_degree, std::optional<theo::EvalModParams> evalmod,
             bool min_keys, u32 message_ratio_bits) {
            theo::BootstrapConfig cfg;
            cfg.slots = slots;
            cfg.cts_levels = cts_levels;
            cfg.stc_levels = stc_levels;
            cfg.evalmod_levels = evalmod_levels;
            cfg.arcsine_degree = arcsine_degree;
            cfg.evalmod = evalmod;
            cfg.min_keys = min_keys;
            cfg.message_ratio_bits = message_ratio_bits;
            std::unique_ptr<theo::Bootstrapper> b;
            {
              nb::gil_scoped_release release;
              b = std::make_unique<theo::Bootstrapper>(ctx.s->ctx, cfg);
            }
            new (self) WBootstrapper{ctx.s, std::move(b)};
          },
          "context"_a, nb::kw_only(), "slots"_a = 0u, "cts_levels"_a = 0u, "stc_levels"_a = 0u,
          "evalmod_levels"_a = 0u, "arcsine_degree"_a = 0u, nb::arg("evalmod").none() = nb::none(),
          "min_keys"_a = false, "message_ratio_bits"_a = 0u,
          "Prepares bootstrapping (encodes every linear-transform diagonal: the slow part). "
          "slots: 0 for N/2; cts_levels / stc_levels: 0 for the parameter set's; "
          "evalmod_levels: 0 for down to the default encryption level; arcsine_degree: 0 for "
          "none; evalmod: override the derived EvalMod parameters; min_keys: power-of-two "
          "rotation keys only (slower, fewer keys); message_ratio_bits: log2(q0 / Delta') at "
          "ModRaise, 0 for the default (smaller: more precise on random data, less on inputs "
          "with large polynomial coefficients such as constant vectors).")
      .def(
          "generate_keys",
          [](const WBootstrapper& b, WKeyGenerator& kg, const WSecretKey& sk,
             std::optional<bool> progress) {
            bool show = false;
            if (progress.has_value()) {
              show = *progress;
            } else {
              nb::object err = nb::module_::import_("sys").attr("stderr");
              try {
                show = !err.is_none() && nb::cast<bool>(err.attr("isatty")());
              } catch (const nb::python_error&) {
                show = false;
              }
            }
            std::shared_ptr<const theo::BootstrappingKeys> keys;
            {
              nb::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(kg.mu);
              keys = std::make_shared<const theo::BootstrappingKeys>(
                  b.b->generate_keys(*kg.kg, *sk.k, show));
            }
            return WBootstrappingKeys{b.s, std::move(keys)};
          },
          "keygen"_a, "secret_key"_a, "progress"_a = nb::none(),
          "All bootstrapping keys in one call (a fresh sparse secret is drawn from keygen and "
          "discarded). progress: a progress bar on stderr; None: when stderr is a terminal.")
      .def(
          "rotations", [](const WBootstrapper& b) { return b.b->rotations(); },
          "The left rotations generate_keys makes keys for.")
      .def(
          "bootstrap",
          [](const WBootstrapper& b, const WCiphertext& ct, const WBootstrappingKeys& keys,
             double center) {
            return run_ct(b.s, ct.real, [&] { return b.b->bootstrap(ct.ct, *keys.k, center); });
          },
          "ciphertext"_a, "keys"_a, nb::kw_only(), "center"_a = 0.0,
          "Bootstraps a ciphertext of `slots` slots at any level; the result is at output_level "
          "with that level's default scale. center: a real value the slots cluster around (the "
          "midpoint of their known range), taken out before and put back after, which keeps "
          "bootstrapping precise for values far from 0.")
      .def_prop_ro(
          "input_level", [](const WBootstrapper& b) { return b.b->input_level(); },
          "Level bootstrapping starts from (0).")
      .def_prop_ro(
          "output_level", [](const WBootstrapper& b) { return b.b->output_level(); },
          "Level of bootstrapped ciphertexts.")
      .def_prop_ro(
          "slots", [](const WBootstrapper& b) { return b.b->slots(); }, "Slots bootstrapped.")
      .def_prop_ro(
          "evalmod_params", [](const WBootstrapper& b) { return b.b->evalmod_params(); },
          "The EvalMod parameters in use.")
      .def_prop_ro(
          "message_ratio_bits", [](const WBootstrapper& b) { return b.b->message_ratio_bits(); },
          "log2(q0 / Delta') at ModRaise, as used.")
      .def(
          "describe", [](const WBootstrapper& b) { return b.b->describe(); },
          "The level plan and parameters, one line each.")
      .def(
          "mod_raise",
          [](const WBootstrapper& b, const WCiphertext& ct, const WBootstrappingKeys& keys) {
            return run_ct(b.s, false, [&] { return b.b->mod_raise(ct.ct, *keys.k); });
          },
          "ciphertext"_a, "keys"_a, "Stage 1 (tests, benchmarks): ModRaise of a level-0 input.")
      .def(
          "coeff_to_slot",
          [](const WBootstrapper& b, const WCiphertext& ct, const WBootstrappingKeys& keys) {
            return run_ct(b.s, false, [&] { return b.b->coeff_to_slot(ct.ct, keys.k->galois); });
          },
          "ciphertext"_a, "keys"_a, "Stage 2 (tests, benchmarks): CoeffToSlot.")
      .def(
          "slot_to_coeff",
          [](const WBootstrapper& b, const WCiphertext& ct, const WBootstrappingKeys& keys) {
            return run_ct(b.s, false, [&] { return b.b->slot_to_coeff(ct.ct, keys.k->galois); });
          },
          "ciphertext"_a, "keys"_a, "Last stage (tests, benchmarks): SlotToCoeff.")
      .def("__repr__", [](const WBootstrapper& b) {
        return "Bootstrapper(slots=" + std::to_string(b.b->slots()) +
               ", output_level=" + std::to_string(b.b->output_level()) + ")";
      });
}

}  // namespace theopy
