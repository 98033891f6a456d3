#pragma once
// EvalMod: homomorphic reduction modulo 1 of slot values x = t / q0 that lie near integers,
// x = I + eps with |I| < K, |eps| << 1 (what ModRaise leaves: t = Delta m + q0 I).
//
// Han-Ki (CT-RSA 2020): an interpolant of cos(2 pi (x - 1/4) / 2^r), then r double angles
// cos(2a) = 2 cos(a)^2 - 1, giving cos(2 pi x - pi / 2) = sin(2 pi x) ~ 2 pi eps. The input is
// y = x / (K + 1/4) in (-1, 1) (input_divisor()); shifted by a quarter period to
// v = (x - 1/4) / (K + 1/4) the cosine is even in v, so it is evaluated as a series in
// z = T_2(v) = 2 v^2 - 1 of degree (degree - 1) / 2 (the anchor library's even polynomial): the
// same depth as a degree-`degree` series at about half its products. An optional arcsine
// correction (Bossuat et al., Eurocrypt 2021) turns sin(2 pi eps) into 2 pi eps exactly up to its
// Taylor remainder. The caller folds 1 / (q0 (K + 1/4)) in before (CoeffToSlot) and
// q0 / (2 pi Delta) after (SlotToCoeff), so neither costs a level here.

#include <optional>
#include <span>
#include <vector>

#include "theo/circuits/chebyshev.h"
#include "theo/circuits/polynomial.h"

namespace theo {

struct EvalModParams {
  u32 k_bound = 12;            // K: |I| < K
  u32 double_angles = 3;       // r
  u32 degree = 31;             // odd: the cosine is an even polynomial of degree - 1
  u32 arcsine_degree = 0;      // 0: none; else odd Taylor degree (3, 5, ...)
  double estimated_error = 0;  // model estimate of max |output - 2 pi eps| (informational)

  u32 depth() const;  // levels consumed

  // K for a sparse secret of Hamming weight h after a fast-BConv ModRaise from `level0_limbs`
  // limbs on N = 2^log_n coefficients: I = (c0 + c1 s) / q0 sums h + 1 terms, each about uniform
  // over +-limbs/2 (variance limbs / 12); K = floor(z sigma) + 1 with z such that the chance of
  // any of the N coefficients exceeding K is below 2^-20.
  static u32 bound_for(u32 hamming_weight, u32 log_n, u32 level0_limbs);
  // The most accurate (r, degree) within `depth_budget` levels for that K (by simulating the
  // interpolant and the double angles in double precision, plus a noise-amplification term).
  static EvalModParams derive(u32 hamming_weight, u32 log_n, u32 level0_limbs, u32 depth_budget,
                              u32 arcsine_degree = 0);
};

class EvalMod {
 public:
  explicit EvalMod(const EvalModParams& params);

  // ct: real slots y = x / input_divisor() at the default scale of its level. Returns sin(2 pi x)
  // (or, with the arcsine correction, 2 pi (x mod 1) for |x mod 1| small) at level
  // ct.level() - depth(), default scale.
  // `gain` (> 0) multiplies the result for free: carried through the double angles (2g c^2 - g)
  // or the arcsine's coefficients, so the signal leaving EvalMod stays far above the
  // key-switching noise of what follows (SlotToCoeff runs at the small scales of the lowest
  // levels). A power of two gives the same words as always; any other value rides on the
  // cosine's coefficients and the double angles' constants (see evaluate_batch).
  Ciphertext evaluate(const PolynomialEvaluator& pe, const Evaluator& ev, const RelinKey& rlk,
                      const Ciphertext& ct, double gain = 1) const;
  // evaluate() on several ciphertexts at one level and scale as one group
  // (PolynomialEvaluator::evaluate_batch): the same words as evaluate() on each.
  std::vector<Ciphertext> evaluate_batch(const PolynomialEvaluator& pe, const Evaluator& ev,
                                         const RelinKey& rlk,
                                         std::span<const Ciphertext* const> cts,
                                         double gain = 1) const;
  // The last double angle left open (see evaluate_batch_open): the result is factor * u^2 -
  // constant for the u that evaluate_batch_open returns.
  struct OpenTail {
    i64 factor = 1;
    double constant = 0;
  };
  // True when the circuit ends with a double angle (double_angles > 0, no arcsine correction), so
  // that evaluate_batch_open can leave it to the caller.
  bool has_open_tail() const;
  // evaluate_batch() without its last double angle: returns u = A u' for each input (A the stage's
  // gain, see evaluate_batch) at one level above evaluate()'s output, and in `tail` what the last
  // step computes from it. The caller may then merge the last products of several ciphertexts
  // into one relinearization and one rescale (Evaluator::multiply_sum_relin_rescale), e.g. the
  // real and imaginary parts of bootstrapping: one rounding instead of two in the output.
  // ParameterError unless has_open_tail().
  std::vector<Ciphertext> evaluate_batch_open(const PolynomialEvaluator& pe, const Evaluator& ev,
                                              const RelinKey& rlk,
                                              std::span<const Ciphertext* const> cts, double gain,
                                              OpenTail& tail) const;
  // Plaintext reference of the same computation.
  double reference(double y) const;
  // K + 1/4: the input is y = x / (K + 1/4).
  double input_divisor() const;

  const EvalModParams& params() const { return params_; }
  // The cosine's series in z = T_2(v) (see the top of this file).
  const ChebyshevSeries& cosine() const { return cos_; }

 private:
  std::vector<Ciphertext> run(const PolynomialEvaluator& pe, const Evaluator& ev,
                              const RelinKey& rlk, std::span<const Ciphertext* const> cts,
                              double gain, OpenTail* open) const;

  EvalModParams params_;
  ChebyshevSeries cos_;
  ChebyshevSeries arcsine_;
};

}  // namespace theo
