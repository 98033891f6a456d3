// The composite minimax sign and AppReLU (include/theo/circuits/composite_sign.h): the Remez fit,
// the composite's plaintext evaluation and errors, and its homomorphic evaluation.

#include "bindings.h"
#include "theo/circuits/composite_sign.h"

namespace theopy {

namespace {

// f at a float, or at every element of a real 1-D array (float64 out).
template <typename F>
nb::object map_real(nb::handle x, const char* what, F&& f) {
  if (PyFloat_Check(x.ptr()) || PyLong_Check(x.ptr())) return nb::cast(f(nb::cast<double>(x)));
  Values v = to_values(x);
  if (v.is_complex) throw nb::type_error((std::string(what) + ": real inputs only").c_str());
  std::vector<double> out(v.re.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = f(v.re[i]);
  return to_numpy(std::move(out));
}

// The module function `name`(ciphertext, sign, relin_key=None): the CompositeSignEvaluator member
// kOp of the ciphertext, with relin_key or the Context's.
template <auto kOp>
void def_composite(nb::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [name](const WCiphertext& ct, const theo::CompositeSign& sign, const WRelinKey* rk) {
        auto rlk = pick_relin(ct.s, nullptr, rk, name);
        return run_ct(ct.s, true, [&] {
          const theo::PolynomialEvaluator pe(ct.s->evaluator, *rlk);
          return (theo::CompositeSignEvaluator(pe, ct.s->evaluator, *rlk, sign).*kOp)(ct.ct);
        });
      },
      "ciphertext"_a, "sign"_a, nb::arg("relin_key").none() = nb::none(), doc);
}

}  // namespace

void bind_activations(nb::module_& m) {
  nb::class_<theo::OddMinimaxFit>(m, "OddMinimaxFit",
                                  "The odd polynomial of a degree closest to 1 on [lower, 1].")
      .def_ro("series", &theo::OddMinimaxFit::series, "The fit, an odd ChebyshevSeries on [-1, 1].")
      .def_ro("lower", &theo::OddMinimaxFit::lower, "Left end of the fitted interval.")
      .def_ro("error", &theo::OddMinimaxFit::error, "max |series - 1| on [lower, 1].")
      .def_ro("iterations", &theo::OddMinimaxFit::iterations, "Remez exchanges made.");
  m.def(
      "minimax_odd_sign",
      [](u32 degree, double lower) {
        nb::gil_scoped_release release;
        return theo::minimax_odd_sign(degree, lower);
      },
      "degree"_a, "lower"_a,
      "Remez exchange: the odd polynomial of `degree` closest to sign on [-1, -lower] u "
      "[lower, 1] (max norm).");

  nb::class_<theo::CompositeSign>(
      m, "CompositeSign",
      "sign(x) on [-1, -eps] u [eps, 1] as a composition of odd minimax polynomials (Lee, Lee, "
      "No, Kim). CompositeSign.alpha13() is the ResNet-20 ReLU's: degrees 15, 15, 27 at eps = "
      "2^-9, error 2^-13.3, depth 13.")
      .def_static(
          "fit",
          [](const std::vector<u32>& degrees, double eps) {
            nb::gil_scoped_release release;
            return theo::CompositeSign::fit(degrees, eps);
          },
          "degrees"_a, "eps"_a, "Fits the components (odd degrees, 3..63) on [eps, 1].")
      .def_static("alpha13", &theo::CompositeSign::alpha13,
                  "Degrees 15, 15, 27 at eps = 2^-9 (error 2^-13.3, depth 13).")
      .def_prop_ro("degrees", &theo::CompositeSign::degrees, "Component degrees.")
      .def_prop_ro("eps", &theo::CompositeSign::eps, "The approximation holds for |x| >= eps.")
      .def_prop_ro("components", &theo::CompositeSign::components,
                   "Component series on [-1, 1], applied first to last.")
      .def_prop_ro("stage_errors", &theo::CompositeSign::stage_errors,
                   "Minimax error of every stage.")
      .def_prop_ro("error", &theo::CompositeSign::error,
                   "max |approx - sign(x)| for eps <= |x| <= 1.")
      .def_prop_ro("component_depths", &theo::CompositeSign::component_depths,
                   "Levels every component consumes.")
      .def_prop_ro("depth", &theo::CompositeSign::depth, "Levels the whole composite consumes.")
      .def_prop_ro("name", &theo::CompositeSign::name, "The degrees, e.g. '15-15-27'.")
      .def(
          "__call__",
          [](const theo::CompositeSign& s, nb::handle x) {
            return map_real(x, "CompositeSign", [&](double v) { return s(v); });
          },
          "x"_a,
          nb::sig("def __call__(self, x: float | numpy.typing.ArrayLike) -> "
                  "float | numpy.typing.NDArray[numpy.float64]"),
          "The composite at a float or at every element of a 1-D array.")
      .def(
          "relu",
          [](const theo::CompositeSign& s, nb::handle x, double bound) {
            return map_real(x, "CompositeSign.relu",
                            [&](double v) { return bound * s.relu(v / bound); });
          },
          "x"_a, "bound"_a = 1.0,
          nb::sig("def relu(self, x: float | numpy.typing.ArrayLike, bound: float = 1.0) -> "
                  "float | numpy.typing.NDArray[numpy.float64]"),
          "AppReLU on [-bound, bound]: bound * t (1 + sign(t)) / 2, t = x / bound.")
      .def("gate_component", &theo::CompositeSign::gate_component,
           "The last component as the ReLU gate (1 + q_k) / 2.")
      .def("max_error", &theo::CompositeSign::max_error, "lo"_a, "hi"_a, "samples"_a = 8192u,
           "max |approx - sign| over samples of [lo, hi] and its mirror.")
      .def("relu_max_error", &theo::CompositeSign::relu_max_error, "bound"_a, "samples"_a = 16384u,
           "max |AppReLU - ReLU| over samples of [-bound, bound].")
      .def("__repr__", [](const theo::CompositeSign& s) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "CompositeSign(degrees=%s, eps=2^%.2f, error=2^%.2f, depth=%u)",
                      s.name().c_str(), std::log2(s.eps()), std::log2(s.error()), s.depth());
        return std::string(buf);
      });

  def_composite<&theo::CompositeSignEvaluator::sign>(
      m, "composite_sign",
      "sign(ct) slot-wise through the composite (slots in [-1, 1], at the default scale): "
      "sign.depth levels.");
  def_composite<&theo::CompositeSignEvaluator::relu>(
      m, "app_relu",
      "The normalized AppReLU ct (1 + sign(ct)) / 2 (slots in [-1, 1]): sign.depth + 1 levels. "
      "For inputs on [-B, B] encrypt x / B and multiply the result by B.");
}

}  // namespace theopy
