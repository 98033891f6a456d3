#pragma once
// sign(x) as a composition of odd minimax polynomials, and the ReLU built on it.
//
// Sign (E. Lee, J.-W. Lee, J.-S. No, Y.-S. Kim, "Minimax approximation of sign function by
// composite polynomial for homomorphic comparison"): sign on [-1, -eps] u [eps, 1] is approximated
// by p_k o ... o p_1, every p_i the odd polynomial of its degree closest to 1 in max norm on the
// interval its input occupies (a Remez exchange in the Chebyshev basis, minimax_odd_sign below).
// p_1 maps [eps, 1] onto [1 - tau_1, 1 + tau_1] (tau_1 its minimax error), p_2 is fitted on that
// image, and so on; the composite's error is the last stage's tau_k. Here every stage but the last
// is divided by 1 + tau_i, so each component maps [-1, 1] into [-1, 1] and is a Chebyshev series on
// [-1, 1] that PolynomialEvaluator takes without an affine step: depth ceil(log2(d_i + 1)) each.
//
// What a depth buys (this code's fits; the tests check the first rows):
//   degrees      depth  error on [2^-9, 1]   error on [2^-13, 1]
//   15, 15, 27   13     2^-13.3              2^-1.2
//   15, 15, 31   13     2^-15.1              2^-1.3
//   7, 7, 7, 15  13     2^-9.8               2^-0.9
// No polynomial of degree below 2^13 (depth <= 13), composite or not, reaches a small error on
// [2^-13, 1]: the best degree-n approximation of sign on [-1, -eps] u [eps, 1] has an error of
// about exp(-n eps) (Eremenko and Yuditskii), so 2^-13 there needs n ~ 9 / eps ~ 2^16 (depth
// ~17). So the degrees {15, 15, 27} of Lee et al.'s ResNet-20 ("alpha = 13", 14 levels per ReLU
// with the product below) give 13 bits of sign precision for inputs at least 2^-9 away from 0,
// which is what `alpha13()` fits.
//
// AppReLU (Lee et al., ICML 2022): relu(x) = x (1 + sign(x)) / 2. On [-B, B] the input is scaled
// by 1 / B first (a workload folds that into the layer before), then
//   relu(x) ~ B t g(t),  t = x / B,  g = (1 + sign) / 2,
// with the 1/2 folded into the last component (`gate_component`): one ciphertext product after
// the composite, depth sign.depth() + 1. Its error is |t| tau / 2 where |t| >= eps and
// |t| |1 - sign(t)| / 2 below (the composite rises from 0 to 1 across [0, eps]); for alpha13()
// the maximum over [-B, B] is B 2^-13.1 (measured by relu_max_error).

#include <string>
#include <vector>

#include "theo/circuits/chebyshev.h"
#include "theo/circuits/polynomial.h"
#include "theo/common.h"

namespace theo {

// The odd polynomial of `degree` closest to 1 in max norm on [lower, 1].
struct OddMinimaxFit {
  ChebyshevSeries series;  // on [-1, 1], odd (even coefficients 0)
  double lower = 0;
  double error = 0;  // max |series - 1| on [lower, 1] (the equioscillation level)
  u32 iterations = 0;
};

// Remez exchange for f = 1 on [lower, 1] in the basis T_1, T_3, ..., T_degree (odd polynomials
// form a Chebyshev system on (0, 1]), long double throughout. ParameterError for an even degree,
// degree > 63, lower outside (0, 1), or an exchange that does not converge.
OddMinimaxFit minimax_odd_sign(u32 degree, double lower);

class CompositeSign {
 public:
  // Fits the components for `degrees` (odd, each 3..63, at most 8 of them) on [eps, 1].
  static CompositeSign fit(const std::vector<u32>& degrees, double eps);
  // Lee et al.'s ResNet-20 sign: degrees {15, 15, 27}, eps = 2^-9 (error 2^-13.3, depth 13).
  static CompositeSign alpha13();

  const std::vector<u32>& degrees() const { return degrees_; }
  double eps() const { return eps_; }
  // Component i: q_i = p_i / (1 + tau_i) for i < k - 1 (maps [-1, 1] into [-1, 1]); the last is
  // p_k itself (values within tau_k of +-1 on the fitted set).
  const std::vector<ChebyshevSeries>& components() const { return components_; }
  // tau_i of every stage; error() = the last: max |approx - sign| on [eps, 1] u [-1, -eps].
  const std::vector<double>& stage_errors() const { return stage_errors_; }
  double error() const { return stage_errors_.back(); }
  std::vector<u32> component_depths() const;
  u32 depth() const;
  // "15-15-27"
  std::string name() const;

  // Plaintext evaluation, composed in long double (the reference of the encrypted one).
  double operator()(double x) const;
  // The last component as the ReLU gate (1 + q_k) / 2.
  ChebyshevSeries gate_component() const;
  // x (1 + sign(x)) / 2 for |x| <= 1 (the normalized AppReLU).
  double relu(double x) const;
  // max |approx - sign| over `samples` points spread over [lo, hi] (0 < lo < hi <= 1),
  // geometrically (the error lives near lo) and linearly.
  double max_error(double lo, double hi, u32 samples = 8192) const;
  // max |B relu(x / B) - max(x, 0)| over `samples` points of [-B, B].
  double relu_max_error(double bound, u32 samples = 16384) const;

 private:
  std::vector<u32> degrees_;
  double eps_ = 0;
  std::vector<ChebyshevSeries> components_;
  std::vector<double> stage_errors_;
};

// Homomorphic evaluation of a CompositeSign (and of AppReLU) through PolynomialEvaluator. Inputs
// at their level's default scale with slots in [-1, 1]; every output at the default scale of its
// level. Keeps references to the evaluator and the sign (they must outlive it).
class CompositeSignEvaluator {
 public:
  CompositeSignEvaluator(const PolynomialEvaluator& poly, const Evaluator& ev,
                         const RelinKey& relin_key, const CompositeSign& sign)
      : poly_(poly), ev_(ev), rlk_(relin_key), sign_(sign) {}

  // Component i (depth component_depths()[i]); gate = true: the last one in gate form.
  Ciphertext component(const Ciphertext& ct, u32 i, bool gate = false) const;
  // All components: depth sign.depth().
  Ciphertext sign(const Ciphertext& ct) const;
  // x * gate, the two at any levels (the higher is lowered first): one level below the lower.
  Ciphertext relu_product(const Ciphertext& x, const Ciphertext& gate) const;
  // The normalized AppReLU x (1 + sign(x)) / 2: depth sign.depth() + 1.
  Ciphertext relu(const Ciphertext& x) const;

 private:
  const PolynomialEvaluator& poly_;
  const Evaluator& ev_;
  const RelinKey& rlk_;
  const CompositeSign& sign_;
};

}  // namespace theo
