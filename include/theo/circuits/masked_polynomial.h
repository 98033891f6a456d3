#pragma once
// A low-degree polynomial with slot-vector coefficients, in the monomial basis:
//   out = sum_i (c_i * mask) (.) x^i
// at depth ceil(log2(degree + 1)), the depth of the plain polynomial: the mask rides in the first
// plaintext product of every term instead of costing a level of its own. Term i is built from the
// powers x^(2^j) of its bits j: (c_i mask (.) x^(2^j0)) * x^(2^j1) * ..., so no term is deeper
// than the highest power. For masked activations in packed circuits (HELR: the sigmoid evaluated
// only at the slots that hold inner products, zero elsewhere, ready to be replicated) and for any
// slot-dependent low-degree polynomial. Monomials are well conditioned for the low degrees (<= 15)
// and inputs in [-1, 1] this is meant for; higher degrees belong to PolynomialEvaluator.

#include <complex>
#include <optional>
#include <span>
#include <vector>

#include "theo/circuits/activation_fit.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/evaluator.h"

namespace theo {

class MaskedPolynomial {
 public:
  // Plaintexts encoded once for an input at `level` (default scale) with `slots` slots; mask:
  // `slots` values (empty: all ones). ParameterError for degree 0 or > 15, a wrong mask length or a
  // non-finite coefficient; LevelError when `level` < depth().
  MaskedPolynomial(const Encoder& encoder, const MonomialSeries& p,
                   std::span<const std::complex<double>> mask, u32 level, u32 slots);

  // x: relinearized, at level() (a higher level is brought down), default scale, slots() slots.
  // Output at level() - depth(), default scale.
  Ciphertext evaluate(const Evaluator& ev, const RelinKey& rlk, const Ciphertext& x) const;

  u32 level() const { return level_; }
  u32 slots() const { return slots_; }
  u32 depth() const { return depth_; }
  const MonomialSeries& series() const { return series_; }
  // The plaintexts evaluate() reads, in a fixed order: two instances with the same degree, zero
  // pattern, level and slots list the same shapes, so a captured evaluation (theo/ckks/graph.h)
  // can be replayed with another instance's coefficients by Graph::set_input on each pair.
  std::vector<const Plaintext*> plaintexts() const;
  std::vector<Plaintext*> plaintexts();

 private:
  struct Term {
    u32 power = 0;    // i
    Plaintext coeff;  // c_i * mask at the level of x^(2^lowest bit)
  };
  MonomialSeries series_;
  u32 level_ = 0;
  u32 slots_ = 0;
  u32 depth_ = 0;
  std::vector<Term> terms_;
  std::optional<Plaintext> constant_;  // c_0 * mask at level() - depth()
};

}  // namespace theo
