#include "theo/circuits/masked_polynomial.h"

#include <bit>
#include <cmath>
#include <string>

#include "theo/errors.h"

namespace theo {

MaskedPolynomial::MaskedPolynomial(const Encoder& encoder, const MonomialSeries& p,
                                   std::span<const std::complex<double>> mask, u32 level, u32 slots)
    : series_(p), level_(level), slots_(slots) {
  const u32 d = p.degree();
  if (d == 0 || d > 15) {
    throw ParameterError("MaskedPolynomial: degree " + std::to_string(d) +
                         " (1..15; higher degrees: PolynomialEvaluator)");
  }
  for (const double c : p.coeffs) {
    if (!std::isfinite(c)) throw ParameterError("MaskedPolynomial: a coefficient is not finite");
  }
  if (!mask.empty() && mask.size() != slots) {
    throw ParameterError("MaskedPolynomial: the mask has " + std::to_string(mask.size()) +
                         " values for " + std::to_string(slots) + " slots");
  }
  depth_ = static_cast<u32>(std::bit_width(d));  // ceil(log2(d + 1))
  if (level < depth_) {
    throw LevelError("MaskedPolynomial: degree " + std::to_string(d) + " needs " +
                     std::to_string(depth_) + " levels, the input is at level " +
                     std::to_string(level));
  }
  auto scaled = [&](double c) {
    std::vector<std::complex<double>> v(slots);
    for (u32 i = 0; i < slots; ++i)
      v[i] = c * (mask.empty() ? std::complex<double>(1) : mask[i]);
    return v;
  };
  for (u32 i = 1; i <= d; ++i) {
    if (p.coeffs[i] == 0) continue;
    const u32 low = static_cast<u32>(std::countr_zero(i));
    terms_.push_back({i, encoder.encode(scaled(p.coeffs[i]), level - low)});
  }
  if (terms_.empty()) {
    throw ParameterError("MaskedPolynomial: every non-constant coefficient is zero");
  }
  if (p.coeffs[0] != 0) constant_ = encoder.encode(scaled(p.coeffs[0]), level - depth_);
}

std::vector<const Plaintext*> MaskedPolynomial::plaintexts() const {
  std::vector<const Plaintext*> out;
  for (const Term& t : terms_)
    out.push_back(&t.coeff);
  if (constant_) out.push_back(&*constant_);
  return out;
}

std::vector<Plaintext*> MaskedPolynomial::plaintexts() {
  std::vector<Plaintext*> out;
  for (Term& t : terms_)
    out.push_back(&t.coeff);
  if (constant_) out.push_back(&*constant_);
  return out;
}

Ciphertext MaskedPolynomial::evaluate(const Evaluator& ev, const RelinKey& rlk,
                                      const Ciphertext& x_in) const {
  if (x_in.slots() != slots_) {
    throw ParameterError("MaskedPolynomial::evaluate: the input has " +
                         std::to_string(x_in.slots()) + " slots, expected " +
                         std::to_string(slots_));
  }
  if (x_in.level() < level_) {
    throw LevelError("MaskedPolynomial::evaluate: the input is at level " +
                     std::to_string(x_in.level()) + ", expected " + std::to_string(level_));
  }
  // powers[j] = x^(2^j) at level() - j.
  std::vector<Ciphertext> powers;
  powers.push_back(x_in.level() > level_ ? ev.level_down(x_in, level_) : ev.clone(x_in));
  const u32 top_bit = depth_ - 1;
  for (u32 j = 1; j <= top_bit; ++j)
    powers.push_back(ev.multiply_relin_rescale(powers[j - 1], powers[j - 1], rlk));
  const u32 out_level = level_ - depth_;
  Ciphertext sum;
  for (const Term& t : terms_) {
    const u32 low = static_cast<u32>(std::countr_zero(t.power));
    Ciphertext acc = ev.rescale(ev.multiply_plain(powers[low], t.coeff));
    for (u32 j = low + 1; j <= top_bit; ++j) {
      if (!((t.power >> j) & 1u)) continue;
      // Operands at different levels meet at the lower one (the Evaluator lowers the other).
      acc = ev.multiply_relin_rescale(acc, powers[j], rlk);
    }
    if (acc.level() > out_level) acc = ev.level_down(acc, out_level);
    if (sum.empty())
      sum = std::move(acc);
    else
      ev.add_inplace(sum, acc);
  }
  if (constant_) ev.add_plain_inplace(sum, *constant_);
  return sum;
}

}  // namespace theo
