// Evaluator: linear combinations of ciphertexts in one pass per polynomial.

#include <algorithm>
#include <cmath>
#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "ckks/rns_util.h"
#include "theo/ckks/evaluator.h"
#include "theo/errors.h"

namespace theo {

namespace {

// ct's polys as read at `level`: a window of its limbs in place (the scale kept), or, when Q_level
// is not one, a copy lowered to `level` (at Delta_level) kept in `storage`.
struct LevelView {
  std::vector<ConstPolyRef> polys;
  long double scale = 0;
};

LevelView view_at(const Context& ctx, const Ciphertext& ct, u32 level,
                  std::vector<Ciphertext>& storage) {
  const LevelData& dst = ctx.level(level);
  const LevelData& src = ctx.level(ct.level());
  const Ciphertext* t = &ct;
  if (dst.first_id < src.first_id || dst.first_id + dst.limbs > src.first_id + src.limbs) {
    storage.push_back(detail::lower_ciphertext(ctx, ct, level, std::nullopt));
    t = &storage.back();
  }
  const u32 offset = dst.first_id - ctx.level(t->level()).first_id;
  LevelView v;
  for (const RnsPoly& p : t->polys())
    v.polys.push_back(p.cref().slice(offset, dst.limbs));
  v.scale = t->scale();
  return v;
}

}  // namespace

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

Ciphertext Evaluator::multiply_sum_relin_rescale(std::span<const Ciphertext* const> a,
                                                 std::span<const Ciphertext* const> b, u32 level,
                                                 const RelinKey& rlk, const Ciphertext* addend,
                                                 i64 factor) const {
  detail::require_usable(*ctx_, rlk, "multiply_sum_relin_rescale: relinearization key");
  if (a.empty() || a.size() != b.size()) {
    throw ParameterError(
        "multiply_sum_relin_rescale: needs as many second factors as first ones "
        "and at least one product (got " +
        std::to_string(a.size()) + " and " + std::to_string(b.size()) + ")");
  }
  if (level == 0 || level > ctx_->max_level()) {
    throw LevelError("multiply_sum_relin_rescale: cannot multiply and rescale at level " +
                     std::to_string(level));
  }
  std::vector<const Ciphertext*> operands(a.begin(), a.end());
  operands.insert(operands.end(), b.begin(), b.end());
  if (addend != nullptr) operands.push_back(addend);
  u32 slots = 0;
  for (const Ciphertext* c : operands) {
    if (c == nullptr) throw ParameterError("multiply_sum_relin_rescale: an operand is null");
    detail::require_usable(*ctx_, *c, "multiply_sum_relin_rescale: operand");
    if (c->size() != 2) {
      throw ParameterError("multiply_sum_relin_rescale: an operand has " +
                           std::to_string(c->size()) + " polynomials; relinearize it first");
    }
    if (c->level() < level) {
      throw LevelError("multiply_sum_relin_rescale: an operand is at level " +
                       std::to_string(c->level()) + ", below the product level " +
                       std::to_string(level));
    }
    slots = std::max(slots, c->slots());
  }
  std::vector<Ciphertext> lowered;
  lowered.reserve(operands.size());
  std::vector<LevelView> va, vb;
  for (std::size_t j = 0; j < a.size(); ++j) {
    va.push_back(view_at(*ctx_, *a[j], level, lowered));
    vb.push_back(view_at(*ctx_, *b[j], level, lowered));
  }
  const long double scale = va[0].scale * vb[0].scale;
  for (std::size_t j = 1; j < a.size(); ++j) {
    detail::require_same_scale(*ctx_, va[j].scale * vb[j].scale, scale, "a product",
                               "the first product");
  }
  std::optional<LevelView> vadd;
  if (addend != nullptr) {
    vadd = view_at(*ctx_, *addend, level, lowered);
    detail::require_same_scale(*ctx_, vadd->scale, scale, "the addend", "the products");
  }
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  std::vector<u32> s;
  if (factor != 1) {
    for (u32 i = 0; i < lv.limbs; ++i)
      s.push_back(detail::reduce_i64(factor, ctx_->prime(lv.q_basis[i])));
  }
  // d = sum_j tensor(a_j, b_j) (+ addend on d0, d1): the products' three polys summed before the
  // one relinearization.
  std::vector<RnsPoly> d, t;
  for (int i = 0; i < 3; ++i)
    d.push_back(be.make_poly(lv.q_basis));
  for (std::size_t j = 0; j < a.size(); ++j) {
    std::vector<RnsPoly>& out = j == 0 ? d : t;
    if (j == 1) {
      for (int i = 0; i < 3; ++i)
        t.push_back(be.make_poly(lv.q_basis));
    }
    const auto& x = va[j].polys;
    const auto& y = vb[j].polys;
    if (factor == 1) {
      be.tensor(x[0], x[1], y[0], y[1], out[0].ref(), out[1].ref(), out[2].ref());
    } else {
      be.tensor_scaled(x[0], x[1], y[0], y[1], out[0].ref(), out[1].ref(), out[2].ref(), s);
    }
    if (j > 0) {
      const ConstPolyRef xs[] = {d[0].cref(), d[1].cref(), d[2].cref()};
      const ConstPolyRef ys[] = {t[0].cref(), t[1].cref(), t[2].cref()};
      const PolyRef zs[] = {d[0].ref(), d[1].ref(), d[2].ref()};
      be.add_batch(xs, ys, zs);
    }
  }
  if (vadd) {
    const ConstPolyRef xs[] = {d[0].cref(), d[1].cref()};
    const PolyRef zs[] = {d[0].ref(), d[1].ref()};
    be.add_batch(xs, vadd->polys, zs);
  }
  t.clear();
  // The sum relinearized and rescaled as one product: the route of every product.
  return switch_tensor(Ciphertext(ctx_->id(), level, scale, slots, std::move(d)), rlk,
                       KeySwitchFinish::kModDownRescale);
}

}  // namespace theo
