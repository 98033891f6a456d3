// Evaluator: additive and multiplicative ops, relinearization.

#include "theo/ckks/evaluator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "ckks/rescaler.h"
#include "ckks/rns_util.h"
#include "theo/errors.h"

namespace theo {

namespace detail {

std::vector<ConstPolyRef> refs_of(const Ciphertext& ct) {
  std::vector<ConstPolyRef> refs;
  for (const RnsPoly& p : ct.polys())
    refs.push_back(p.cref());
  return refs;
}

Ciphertext lower_ciphertext(const Context& ctx, const Ciphertext& ct, u32 level,
                            std::optional<long double> target_scale) {
  const auto refs = refs_of(ct);
  Lowered low = level_down_polys(ctx, refs, ct.level(), ct.scale(), level, target_scale);
  return Ciphertext(ct.context_id(), level, low.scale, ct.slots(), std::move(low.polys));
}

Plaintext lower_plaintext(const Context& ctx, const Plaintext& pt, u32 level,
                          std::optional<long double> target_scale) {
  const ConstPolyRef refs[] = {pt.poly().cref()};
  Lowered low = level_down_polys(ctx, refs, pt.level(), pt.scale(), level, target_scale);
  return Plaintext(pt.context_id(), level, low.scale, pt.slots(), std::move(low.polys.front()));
}

}  // namespace detail

namespace {

enum class AddKind { kAdd, kSub };

// Operands of a binary op at one level: the higher one is lowered into `storage`.
struct AlignedPair {
  std::optional<Ciphertext> storage_a, storage_b;
  const Ciphertext* a = nullptr;
  const Ciphertext* b = nullptr;
};

// For additions the lowered operand takes the other's scale; for products the default scale.
AlignedPair align(const Context& ctx, const Ciphertext& a, const Ciphertext& b, bool match_scale) {
  AlignedPair p;
  p.a = &a;
  p.b = &b;
  if (a.level() > b.level()) {
    p.storage_a = detail::lower_ciphertext(
        ctx, a, b.level(), match_scale ? std::optional<long double>(b.scale()) : std::nullopt);
    p.a = &*p.storage_a;
  } else if (b.level() > a.level()) {
    p.storage_b = detail::lower_ciphertext(
        ctx, b, a.level(), match_scale ? std::optional<long double>(a.scale()) : std::nullopt);
    p.b = &*p.storage_b;
  }
  return p;
}

std::vector<u32> const_residues(const Context& ctx, long double value, const Basis& basis) {
  return detail::residues_of(value, ctx, basis);
}

}  // namespace

Evaluator::Evaluator(std::shared_ptr<const Context> ctx)
    : ctx_(ctx ? std::move(ctx) : throw ContextError("Evaluator: the Context is null")),
      switcher_(ctx_) {}

Ciphertext Evaluator::clone(const Ciphertext& ct) const {
  detail::require_usable(*ctx_, ct, "clone: ciphertext");
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  for (const RnsPoly& p : ct.polys()) {
    polys.push_back(be.make_poly(p.basis()));
    be.copy(p.cref(), polys.back().ref());
  }
  Ciphertext out(ct.context_id(), ct.level(), ct.scale(), ct.slots(), std::move(polys));
  if (ct.seed()) out.set_seed(*ct.seed());
  return out;
}

Plaintext Evaluator::clone(const Plaintext& pt) const {
  detail::require_usable(*ctx_, pt, "clone: plaintext");
  Backend& be = ctx_->backend();
  RnsPoly poly = be.make_poly(pt.poly().basis());
  be.copy(pt.poly().cref(), poly.ref());
  return Plaintext(pt.context_id(), pt.level(), pt.scale(), pt.slots(), std::move(poly));
}

// ---- additive ----------------------------------------------------------------------------------

static Ciphertext add_sub(const Context& ctx, const Ciphertext& a0, const Ciphertext& b0,
                          AddKind kind, const char* op) {
  const std::string name_a = std::string(op) + ": a";
  const std::string name_b = std::string(op) + ": b";
  detail::require_usable(ctx, a0, name_a.c_str());
  detail::require_usable(ctx, b0, name_b.c_str());
  if (a0.level() == b0.level()) {
    detail::require_same_scale(ctx, a0.scale(), b0.scale(), "a", "b");
  }
  const AlignedPair p = align(ctx, a0, b0, true);
  const Ciphertext& a = *p.a;
  const Ciphertext& b = *p.b;
  detail::require_same_scale(ctx, a.scale(), b.scale(), "a", "b");
  Backend& be = ctx.backend();
  const u32 size = std::max(a.size(), b.size());
  std::vector<RnsPoly> polys;
  polys.reserve(size);
  // The polys both operands have go to the backend as one batch (one GPU launch per ciphertext).
  const u32 common = std::min(a.size(), b.size());
  std::vector<ConstPolyRef> xs, ys;
  std::vector<PolyRef> zs;
  for (u32 i = 0; i < common; ++i) {
    polys.push_back(be.make_poly(ctx.level(a.level()).q_basis));
    xs.push_back(a.poly(i).cref());
    ys.push_back(b.poly(i).cref());
    zs.push_back(polys.back().ref());
  }
  if (kind == AddKind::kAdd) {
    be.add_batch(xs, ys, zs);
  } else {
    be.sub_batch(xs, ys, zs);
  }
  for (u32 i = common; i < size; ++i) {
    polys.push_back(be.make_poly(ctx.level(a.level()).q_basis));
    const PolyRef out = polys.back().ref();
    if (i < a.size()) {
      be.copy(a.poly(i).cref(), out);
    } else if (kind == AddKind::kAdd) {
      be.copy(b.poly(i).cref(), out);
    } else {
      be.neg(b.poly(i).cref(), out);
    }
  }
  return Ciphertext(ctx.id(), a.level(), a.scale(), std::max(a.slots(), b.slots()),
                    std::move(polys));
}

Ciphertext Evaluator::add(const Ciphertext& a, const Ciphertext& b) const {
  return add_sub(*ctx_, a, b, AddKind::kAdd, "add");
}
Ciphertext Evaluator::sub(const Ciphertext& a, const Ciphertext& b) const {
  return add_sub(*ctx_, a, b, AddKind::kSub, "sub");
}
void Evaluator::add_inplace(Ciphertext& a, const Ciphertext& b) const {
  a = add(a, b);
}
void Evaluator::sub_inplace(Ciphertext& a, const Ciphertext& b) const {
  a = sub(a, b);
}

static Ciphertext add_sub_plain(const Context& ctx, const Ciphertext& a0, const Plaintext& b0,
                                AddKind kind, const char* op) {
  const std::string name_a = std::string(op) + ": ciphertext";
  const std::string name_b = std::string(op) + ": plaintext";
  detail::require_usable(ctx, a0, name_a.c_str());
  detail::require_usable(ctx, b0, name_b.c_str());
  if (a0.level() == b0.level()) {
    detail::require_same_scale(ctx, a0.scale(), b0.scale(), "ciphertext", "plaintext");
  }
  std::optional<Ciphertext> low_a;
  std::optional<Plaintext> low_b;
  if (a0.level() > b0.level()) {
    low_a = detail::lower_ciphertext(ctx, a0, b0.level(), b0.scale());
  } else if (b0.level() > a0.level()) {
    low_b = detail::lower_plaintext(ctx, b0, a0.level(), a0.scale());
  }
  const Ciphertext& a = low_a ? *low_a : a0;
  const Plaintext& b = low_b ? *low_b : b0;
  detail::require_same_scale(ctx, a.scale(), b.scale(), "ciphertext", "plaintext");
  Backend& be = ctx.backend();
  std::vector<RnsPoly> polys;
  for (u32 i = 0; i < a.size(); ++i) {
    polys.push_back(be.make_poly(a.poly(i).basis()));
    if (i == 0) {
      if (kind == AddKind::kAdd) {
        be.add(a.poly(0).cref(), b.poly().cref(), polys.back().ref());
      } else {
        be.sub(a.poly(0).cref(), b.poly().cref(), polys.back().ref());
      }
    } else {
      be.copy(a.poly(i).cref(), polys.back().ref());
    }
  }
  return Ciphertext(ctx.id(), a.level(), a.scale(), std::max(a.slots(), b.slots()),
                    std::move(polys));
}

Ciphertext Evaluator::add_plain(const Ciphertext& a, const Plaintext& b) const {
  return add_sub_plain(*ctx_, a, b, AddKind::kAdd, "add_plain");
}
Ciphertext Evaluator::sub_plain(const Ciphertext& a, const Plaintext& b) const {
  return add_sub_plain(*ctx_, a, b, AddKind::kSub, "sub_plain");
}
void Evaluator::add_plain_inplace(Ciphertext& a, const Plaintext& b) const {
  a = add_plain(a, b);
}
void Evaluator::sub_plain_inplace(Ciphertext& a, const Plaintext& b) const {
  a = sub_plain(a, b);
}

Ciphertext Evaluator::add_const(const Ciphertext& a, std::complex<double> c) const {
  detail::require_usable(*ctx_, a, "add_const: ciphertext");
  Backend& be = ctx_->backend();
  const Basis& basis = ctx_->level(a.level()).q_basis;
  // c0 + c out of place (no copy of c0 first); the other polys copied.
  std::vector<RnsPoly> polys;
  for (u32 i = 0; i < a.size(); ++i) {
    polys.push_back(be.make_poly(a.poly(i).basis()));
    if (i == 0 && c.real() != 0) {
      be.add_scalar(a.poly(0).cref(), const_residues(*ctx_, c.real() * a.scale(), basis),
                    polys.back().ref());
    } else {
      be.copy(a.poly(i).cref(), polys.back().ref());
    }
  }
  Ciphertext out(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys));
  const PolyRef c0 = out.poly(0).ref();
  if (c.imag() != 0) {
    // i = X^(N/2) in every slot: add round(Im c * scale) * X^(N/2).
    RnsPoly t = be.make_poly(basis);
    be.fill_zero(t.ref());
    be.add_scalar(t.cref(), const_residues(*ctx_, c.imag() * a.scale(), basis), t.ref());
    RnsPoly m = be.make_poly(basis);
    be.mul_monomial(t.cref(), static_cast<i64>(ctx_->n() / 2), m.ref());
    be.add(c0, m.cref(), c0);
  }
  return out;
}
void Evaluator::add_const_inplace(Ciphertext& a, std::complex<double> c) const {
  if (!ctx_->policy().optimizations().inplace_constants) {
    a = add_const(a, c);
    return;
  }
  // The words of add_const, written over c0 (add_scalar and add read and write each word in
  // place); the other polys stay where they are instead of being copied into a new ciphertext.
  detail::require_usable(*ctx_, a, "add_const_inplace: ciphertext");
  Backend& be = ctx_->backend();
  const Basis& basis = ctx_->level(a.level()).q_basis;
  // Residues first: a bad constant throws before anything is written.
  std::vector<u32> re, im;
  if (c.real() != 0) re = const_residues(*ctx_, c.real() * a.scale(), basis);
  if (c.imag() != 0) im = const_residues(*ctx_, c.imag() * a.scale(), basis);
  a.drop_seed();
  const PolyRef c0 = a.poly(0).ref();
  if (c.real() != 0) be.add_scalar(c0, re, c0);
  if (c.imag() != 0) {
    RnsPoly t = be.make_poly(basis);
    be.fill_zero(t.ref());
    be.add_scalar(t.cref(), im, t.ref());
    RnsPoly m = be.make_poly(basis);
    be.mul_monomial(t.cref(), static_cast<i64>(ctx_->n() / 2), m.ref());
    be.add(c0, m.cref(), c0);
  }
}

Ciphertext Evaluator::negate(const Ciphertext& a) const {
  detail::require_usable(*ctx_, a, "negate: ciphertext");
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  for (const RnsPoly& p : a.polys()) {
    polys.push_back(be.make_poly(p.basis()));
    be.neg(p.cref(), polys.back().ref());
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys));
}
void Evaluator::negate_inplace(Ciphertext& a) const {
  a = negate(a);
}

// ---- multiplicative ----------------------------------------------------------------------------

Ciphertext Evaluator::multiply(const Ciphertext& a0, const Ciphertext& b0) const {
  return tensor_product(a0, b0, 1);
}

Ciphertext Evaluator::tensor_product(const Ciphertext& a0, const Ciphertext& b0, i64 factor) const {
  detail::require_usable(*ctx_, a0, "multiply: a");
  detail::require_usable(*ctx_, b0, "multiply: b");
  if (a0.size() != 2 || b0.size() != 2) {
    throw ParameterError("multiply: operands must have 2 polynomials (relinearize first)");
  }
  const AlignedPair p = align(*ctx_, a0, b0, false);
  const Ciphertext& a = *p.a;
  const Ciphertext& b = *p.b;
  Backend& be = ctx_->backend();
  const Basis& basis = ctx_->level(a.level()).q_basis;
  std::vector<RnsPoly> polys;
  for (int i = 0; i < 3; ++i)
    polys.push_back(be.make_poly(basis));
  if (factor == 1) {
    be.tensor(a.poly(0).cref(), a.poly(1).cref(), b.poly(0).cref(), b.poly(1).cref(),
              polys[0].ref(), polys[1].ref(), polys[2].ref());
  } else {
    std::vector<u32> s(basis.size);
    for (u32 i = 0; i < basis.size; ++i)
      s[i] = detail::reduce_i64(factor, ctx_->prime(basis[i]));
    be.tensor_scaled(a.poly(0).cref(), a.poly(1).cref(), b.poly(0).cref(), b.poly(1).cref(),
                     polys[0].ref(), polys[1].ref(), polys[2].ref(), s);
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale() * b.scale(), std::max(a.slots(), b.slots()),
                    std::move(polys));
}

Ciphertext Evaluator::relinearize(const Ciphertext& a, const RelinKey& rlk) const {
  detail::require_usable(*ctx_, a, "relinearize: ciphertext");
  detail::require_usable(*ctx_, rlk, "relinearize: relinearization key");
  if (a.size() == 2) return clone(a);
  return switch_tensor(a, rlk, KeySwitchFinish::kModDown);
}

Ciphertext Evaluator::switch_tensor(const Ciphertext& t, const RelinKey& rlk,
                                    KeySwitchFinish finish) const {
  const Ciphertext* const one[] = {&t};
  return std::move(detail::switch_tensors(*this, one, rlk, finish, 0).front());
}
void Evaluator::relinearize_inplace(Ciphertext& a, const RelinKey& rlk) const {
  a = relinearize(a, rlk);
}

Ciphertext Evaluator::multiply(const Ciphertext& a, const Ciphertext& b,
                               const RelinKey& rlk) const {
  detail::require_usable(*ctx_, rlk, "multiply: relinearization key");
  return relinearize(multiply(a, b), rlk);
}

Ciphertext Evaluator::square(const Ciphertext& a, const RelinKey& rlk) const {
  return multiply(a, a, rlk);
}

Ciphertext Evaluator::multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b,
                                             const RelinKey& rlk) const {
  return multiply_relin_rescale(a, b, rlk, 1);
}

Ciphertext Evaluator::multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b,
                                             const RelinKey& rlk, i64 factor) const {
  detail::require_usable(*ctx_, a, "multiply_relin_rescale: a");
  detail::require_usable(*ctx_, b, "multiply_relin_rescale: b");
  detail::require_usable(*ctx_, rlk, "multiply_relin_rescale: relinearization key");
  if (std::min(a.level(), b.level()) == 0) {
    throw LevelError("multiply_relin_rescale: an operand is at level 0, which cannot be rescaled");
  }
  // ModDown merging (Cheddar §5): relinearization's ModDown and the rescale divide by P * Pi_L
  // in one INTT -> BConv -> NTT pass instead of two (switch_tensor).
  // A factor on an operand that the alignment would lower goes on before the lowering, as
  // multiply_integer first would (lowering rounds, so it does not commute with the factor).
  if (factor != 1 && a.level() != b.level())
    return multiply_relin_rescale(multiply_integer(a, factor), b, rlk, 1);
  return switch_tensor(tensor_product(a, b, factor), rlk, KeySwitchFinish::kModDownRescale);
}

Ciphertext Evaluator::multiply_plain(const Ciphertext& a0, const Plaintext& b0) const {
  detail::require_usable(*ctx_, a0, "multiply_plain: ciphertext");
  detail::require_usable(*ctx_, b0, "multiply_plain: plaintext");
  std::optional<Ciphertext> low_a;
  std::optional<Plaintext> low_b;
  if (a0.level() > b0.level()) {
    low_a = detail::lower_ciphertext(*ctx_, a0, b0.level(), std::nullopt);
  } else if (b0.level() > a0.level()) {
    low_b = detail::lower_plaintext(*ctx_, b0, a0.level(), b0.scale());
  }
  const Ciphertext& a = low_a ? *low_a : a0;
  const Plaintext& b = low_b ? *low_b : b0;
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  for (const RnsPoly& p : a.polys()) {
    polys.push_back(be.make_poly(p.basis()));
    be.mul(p.cref(), b.poly().cref(), polys.back().ref());
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale() * b.scale(), std::max(a.slots(), b.slots()),
                    std::move(polys));
}
void Evaluator::multiply_plain_inplace(Ciphertext& a, const Plaintext& b) const {
  a = multiply_plain(a, b);
}

Ciphertext Evaluator::multiply_const(const Ciphertext& a, std::complex<double> c,
                                     std::optional<long double> const_scale) const {
  detail::require_usable(*ctx_, a, "multiply_const: ciphertext");
  const LevelData& lv = ctx_->level(a.level());
  const long double delta = const_scale.value_or(lv.scale);
  if (!(delta > 0) || !std::isfinite(delta)) {
    throw ParameterError("multiply_const: the constant's scale must be positive and finite");
  }
  if (!std::isfinite(c.real()) || !std::isfinite(c.imag())) {
    throw ParameterError("multiply_const: the constant is not finite");
  }
  Backend& be = ctx_->backend();
  const std::vector<u32> re = const_residues(*ctx_, c.real() * delta, lv.q_basis);
  const std::vector<u32> im = const_residues(*ctx_, c.imag() * delta, lv.q_basis);
  const bool has_imag = std::any_of(im.begin(), im.end(), [](u32 x) { return x != 0; });
  std::vector<RnsPoly> polys;
  RnsPoly rotated = has_imag ? be.make_poly(lv.q_basis) : RnsPoly();
  for (const RnsPoly& p : a.polys()) {
    polys.push_back(be.make_poly(lv.q_basis));
    const PolyRef out = polys.back().ref();
    be.mul_scalar(p.cref(), re, out);
    if (has_imag) {
      // Im(c) * i * x: X^(N/2) multiplies every slot by i.
      be.mul_monomial(p.cref(), static_cast<i64>(ctx_->n() / 2), rotated.ref());
      be.mul_scalar_add(rotated.cref(), im, out, out);
    }
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale() * delta, a.slots(), std::move(polys));
}
void Evaluator::multiply_const_inplace(Ciphertext& a, std::complex<double> c,
                                       std::optional<long double> const_scale) const {
  a = multiply_const(a, c, const_scale);
}

Ciphertext Evaluator::multiply_integer(const Ciphertext& a, i64 k) const {
  detail::require_usable(*ctx_, a, "multiply_integer: ciphertext");
  const LevelData& lv = ctx_->level(a.level());
  std::vector<u32> res(lv.limbs);
  for (u32 i = 0; i < lv.limbs; ++i)
    res[i] = detail::reduce_i64(k, ctx_->prime(lv.q_basis[i]));
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  for (const RnsPoly& p : a.polys()) {
    polys.push_back(be.make_poly(lv.q_basis));
    be.mul_scalar(p.cref(), res, polys.back().ref());
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys));
}

Ciphertext Evaluator::multiply_monomial(const Ciphertext& a, i64 k) const {
  detail::require_usable(*ctx_, a, "multiply_monomial: ciphertext");
  Backend& be = ctx_->backend();
  std::vector<RnsPoly> polys;
  for (const RnsPoly& p : a.polys()) {
    polys.push_back(be.make_poly(p.basis()));
    be.mul_monomial(p.cref(), k, polys.back().ref());
  }
  return Ciphertext(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys));
}

// ---- levels ------------------------------------------------------------------------------------

Ciphertext Evaluator::rescale(const Ciphertext& a) const {
  detail::require_usable(*ctx_, a, "rescale: ciphertext");
  if (a.level() == 0) {
    throw LevelError("rescale: the ciphertext is at level 0; there is no level to rescale to");
  }
  const auto refs = detail::refs_of(a);
  std::vector<RnsPoly> polys = detail::rescale_polys(*ctx_, refs, a.level());
  return Ciphertext(ctx_->id(), a.level() - 1, a.scale() / ctx_->level(a.level()).rescale_ratio,
                    a.slots(), std::move(polys));
}
void Evaluator::rescale_inplace(Ciphertext& a) const {
  a = rescale(a);
}

Ciphertext Evaluator::level_down(const Ciphertext& a, u32 level,
                                 std::optional<long double> target_scale) const {
  detail::require_usable(*ctx_, a, "level_down: ciphertext");
  if (level > a.level()) {
    throw LevelError("level_down: target level " + std::to_string(level) +
                     " is above the ciphertext's level " + std::to_string(a.level()));
  }
  if (level == a.level()) return clone(a);
  return detail::lower_ciphertext(*ctx_, a, level, target_scale);
}
void Evaluator::level_down_inplace(Ciphertext& a, u32 level,
                                   std::optional<long double> target_scale) const {
  a = level_down(a, level, target_scale);
}

}  // namespace theo
