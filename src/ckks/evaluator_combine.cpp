// Evaluator: linear combinations of ciphertexts in one pass per polynomial.

#include <algorithm>
#include <cmath>
#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "theo/ckks/evaluator.h"
#include "theo/errors.h"

namespace theo {

Ciphertext Evaluator::linear_combination(std::span<const Ciphertext* const> terms,
                                         std::span<const double> coeffs, u32 level,
                                         long double scale) const {
  if (terms.empty()) throw ParameterError("linear_combination: no terms");
  if (terms.size() != coeffs.size()) {
    throw ParameterError("linear_combination: " + std::to_string(terms.size()) + " terms but " +
                         std::to_string(coeffs.size()) + " coefficients");
  }
  if (!(scale > 0) || !std::isfinite(scale)) {
    throw ParameterError("linear_combination: the target scale must be positive and finite");
  }
  const LevelData& dst = ctx_->level(level);
  u32 slots = 0;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (terms[k] == nullptr) throw ParameterError("linear_combination: a term is null");
    detail::require_usable(*ctx_, *terms[k], "linear_combination: term");
    if (terms[k]->size() != 2) {
      throw ParameterError("linear_combination: a term has " + std::to_string(terms[k]->size()) +
                           " polynomials; relinearize it first");
    }
    if (terms[k]->level() < level) {
      throw LevelError("linear_combination: a term is at level " +
                       std::to_string(terms[k]->level()) + ", below the target level " +
                       std::to_string(level));
    }
    if (!std::isfinite(coeffs[k])) {
      throw ParameterError("linear_combination: coefficient " + std::to_string(k) +
                           " is not finite");
    }
    slots = std::max(slots, terms[k]->slots());
  }
  // A term whose level holds Q_level as a window of its limbs is read in place: the coefficient
  // is encoded at scale / term.scale(), so the product lands on `scale` without lowering the term
  // (no rescale, no copy). Other terms are lowered first.
  std::vector<Ciphertext> lowered;
  lowered.reserve(terms.size());
  std::vector<ConstPolyRef> p0, p1;
  std::vector<u32> consts;
  consts.reserve(terms.size() * dst.limbs);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Ciphertext* t = terms[k];
    const LevelData& src = ctx_->level(t->level());
    const bool window =
        dst.first_id >= src.first_id && dst.first_id + dst.limbs <= src.first_id + src.limbs;
    if (!window) {
      lowered.push_back(detail::lower_ciphertext(*ctx_, *t, level, std::nullopt));
      t = &lowered.back();
    }
    const u32 offset = dst.first_id - ctx_->level(t->level()).first_id;
    p0.push_back(t->poly(0).cref().slice(offset, dst.limbs));
    p1.push_back(t->poly(1).cref().slice(offset, dst.limbs));
    const std::vector<u32> r = detail::residues_of(
        static_cast<long double>(coeffs[k]) * scale / t->scale(), *ctx_, dst.q_basis);
    consts.insert(consts.end(), r.begin(), r.end());
  }
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  polys.push_back(be.make_poly(dst.q_basis));
  polys.push_back(be.make_poly(dst.q_basis));
  be.mul_scalar_sum(p0, consts, polys[0].ref());
  be.mul_scalar_sum(p1, consts, polys[1].ref());
  return Ciphertext(ctx_->id(), level, scale, slots, std::move(polys));
}

Ciphertext Evaluator::multiply_plain_sum(std::span<const Ciphertext* const> cts,
                                         std::span<const Plaintext* const> pts) const {
  if (cts.empty() || cts.size() != pts.size()) {
    throw ParameterError("multiply_plain_sum: needs as many plaintexts as ciphertexts (got " +
                         std::to_string(cts.size()) + " and " + std::to_string(pts.size()) + ")");
  }
  for (std::size_t k = 0; k < cts.size(); ++k) {
    if (cts[k] == nullptr || pts[k] == nullptr) {
      throw ParameterError("multiply_plain_sum: operand " + std::to_string(k) + " is null");
    }
    detail::require_usable(*ctx_, *cts[k], "multiply_plain_sum: ciphertext");
    detail::require_usable(*ctx_, *pts[k], "multiply_plain_sum: plaintext");
    if (cts[k]->size() != 2) {
      throw ParameterError("multiply_plain_sum: ciphertext " + std::to_string(k) + " has " +
                           std::to_string(cts[k]->size()) + " polynomials (relinearize first)");
    }
  }
  const u32 level = cts.front()->level();
  const long double scale = cts.front()->scale() * pts.front()->scale();
  u32 slots = 0;
  std::vector<ConstPolyRef> d, b, a;
  for (std::size_t k = 0; k < cts.size(); ++k) {
    if (cts[k]->level() != level || pts[k]->level() != level) {
      throw LevelError("multiply_plain_sum: operands at different levels (operand " +
                       std::to_string(k) + ")");
    }
    detail::require_same_scale(*ctx_, cts[k]->scale() * pts[k]->scale(), scale, "a product",
                               "the first product");
    d.push_back(pts[k]->poly().cref());
    b.push_back(cts[k]->poly(0).cref());
    a.push_back(cts[k]->poly(1).cref());
    slots = std::max({slots, cts[k]->slots(), pts[k]->slots()});
  }
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  polys.push_back(be.make_poly(lv.q_basis));
  polys.push_back(be.make_poly(lv.q_basis));
  be.key_mult(d, b, a, polys[0].ref(), polys[1].ref());
  return Ciphertext(ctx_->id(), level, scale, slots, std::move(polys));
}

}  // namespace theo
