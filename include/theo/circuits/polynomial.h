#pragma once
// Homomorphic evaluation of a Chebyshev series (see chebyshev.h).
//
// Depth-optimal recursive Paterson-Stockmeyer: p = q * T_g + r with g the largest power of two
// <= deg p, recursing until a piece fits as a "leaf" sum_i c_i T_i whose constant multiplications
// still reach the target level; a degree-d series consumes ceil(log2(d + 1)) levels (plus one for
// the affine map onto [-1, 1] when [a, b] != [-1, 1] or the input is not at its level's default
// scale).
//
// Scales: every ciphertext this evaluator produces sits exactly at the default scale Delta_l of
// its level. Two level-l operands at Delta_l multiply and rescale onto Delta_{l-1}
// (Delta_l^2 / r_l = Delta_{l-1} by the Context's definition), constants are encoded at Delta_l for
// the same reason, and operands at different levels meet through Evaluator::level_down, which
// lands on Delta of the target level; so every addition matches scales exactly.

#include <optional>
#include <span>
#include <vector>

#include "theo/circuits/chebyshev.h"
#include "theo/ckks/evaluator.h"

namespace theo {

class PolynomialEvaluator {
 public:
  PolynomialEvaluator(const Evaluator& evaluator, const RelinKey& relin_key)
      : ev_(evaluator), rlk_(relin_key) {}

  // p evaluated slot-wise on ct (slots must lie in [p.a, p.b], real or complex). The result is at
  // the default scale of its level, level = ct.level() - levels_consumed(ct, p), or output_level
  // when given (must be at or below that).
  Ciphertext evaluate(const Ciphertext& ct, const ChebyshevSeries& p,
                      std::optional<u32> output_level = std::nullopt) const;
  // evaluate() on several ciphertexts at one level and scale, as one group: every key switch and
  // rescale covers all of them in one batch (multiply_relin_rescale_batch and friends), so their
  // launches fill the GPU together and the relinearization key is read once per product. The
  // same words as evaluate() on each.
  std::vector<Ciphertext> evaluate_batch(std::span<const Ciphertext* const> cts,
                                         const ChebyshevSeries& p,
                                         std::optional<u32> output_level = std::nullopt) const;

  // Levels evaluate() consumes on ct.
  u32 levels_consumed(const Ciphertext& ct, const ChebyshevSeries& p) const;
  // ceil(log2(degree + 1)): levels for a series on [-1, 1] at the default scale.
  static u32 depth(u32 degree);

  // ct -> (2 ct - a - b) / (b - a), landing on Delta_{l-1} at level l - 1 whatever ct's scale.
  Ciphertext affine_to_unit(const Ciphertext& ct, double a, double b) const;

 private:
  bool needs_affine(const Ciphertext& ct, const ChebyshevSeries& p) const;
  const Evaluator& ev_;
  const RelinKey& rlk_;
};

}  // namespace theo
