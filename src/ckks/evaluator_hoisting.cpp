// Evaluator: double hoisting in the key-switching domain Q_l u P (theo/ckks/extended.h).

#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "theo/ckks/evaluator.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

namespace {

void require_extended(const Context& ctx, const ExtendedCiphertext& a, const char* what) {
  if (a.empty()) throw ContextError(std::string(what) + " is empty (moved-from or default)");
  if (a.context_id != ctx.id()) {
    throw ContextError(std::string(what) + " belongs to another Context");
  }
}

// a back to a Ciphertext by `finish` (ModDown, or ModDown + rescale); a is consumed.
Ciphertext finish_extended(const Context& ctx, const KeySwitcher& switcher, ExtendedCiphertext&& a,
                           KeySwitchFinish finish) {
  const bool rescale = finish == KeySwitchFinish::kModDownRescale;
  const LevelData& out_level = ctx.level(rescale ? a.level - 1 : a.level);
  Backend& be = ctx.backend();
  std::vector<RnsPoly> polys;
  polys.push_back(be.make_poly(out_level.q_basis));
  polys.push_back(be.make_poly(out_level.q_basis));
  const PolyRef in[] = {a.c0.ref(), a.c1.ref()};
  const PolyRef out0[] = {polys[0].ref()}, out1[] = {polys[1].ref()};
  switcher.run({.level = a.level, .extended = in, .finish = finish, .out0 = out0, .out1 = out1});
  Ciphertext ct(ctx.id(), out_level.level,
                rescale ? a.scale / ctx.level(a.level).rescale_ratio : a.scale, a.slots,
                std::move(polys));
  a = ExtendedCiphertext{};
  return ct;
}

}  // namespace

void detail::rotate_extended(const KeySwitcher& switcher, u32 level,
                             std::span<const ConstPolyRef> inputs,
                             std::span<const SwitchingKey* const> keys, std::span<const u32> galois,
                             std::span<const ConstPolyRef> terms, std::span<const PolyRef> out0,
                             std::span<const PolyRef> out1, u32 batch) {
  switcher.run({.level = level,
                .inputs = inputs,
                .keys = keys,
                .galois = galois,
                .add0 = terms,
                .finish = KeySwitchFinish::kExtended,
                .out0 = out0,
                .out1 = out1,
                .batch = batch});
}

ExtendedCiphertext detail::new_extended(const Context& ctx, u32 level, long double scale,
                                        u32 slots) {
  Backend& be = ctx.backend();
  const LevelData& lv = ctx.level(level);
  return ExtendedCiphertext{
      ctx.id(), level, scale, slots, be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
}

void detail::extend_unrotated(const Context& ctx, ConstPolyRef c0p, ConstPolyRef c1,
                              ExtendedCiphertext& e) {
  Backend& be = ctx.backend();
  const LevelData& lv = ctx.level(e.level);
  be.copy(c0p, e.c0.slice(0, lv.limbs));
  be.mul_scalar(c1, lv.p_mod_q, e.c1.slice(0, lv.limbs));
  be.fill_zero(e.c0.slice(lv.limbs, ctx.alpha()));
  be.fill_zero(e.c1.slice(lv.limbs, ctx.alpha()));
}

std::vector<ExtendedPlaintext> Evaluator::extend(std::span<const Plaintext* const> pts) const {
  std::vector<ExtendedPlaintext> out;
  if (pts.empty()) return out;
  for (const Plaintext* p : pts) {
    if (p == nullptr) throw ParameterError("extend: a plaintext is null");
    detail::require_usable(*ctx_, *p, "extend: plaintext");
    if (p->level() != pts.front()->level()) {
      throw LevelError("extend: plaintexts at levels " + std::to_string(pts.front()->level()) +
                       " and " + std::to_string(p->level()) + "; extend one level at a time");
    }
  }
  const u32 level = pts.front()->level();
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  // The plaintext's integer coefficients are far below Q_l / 2, so the exact BConv gives their
  // residues mod P without error.
  const auto plan = be.make_bconv(lv.q_basis, ctx_->p_basis(), /*exact=*/true);
  RnsPoly coeff = be.make_poly(lv.q_basis);
  for (const Plaintext* p : pts) {
    ExtendedPlaintext e{ctx_->id(), level, p->scale(), be.make_poly(lv.pq_basis)};
    const PolyRef c[] = {coeff.ref()};
    if (ctx_->policy().fusion()) {
      // Out of place from the plaintext, which the INTT's read also copies into the Q_l part.
      const ConstPolyRef src[] = {p->poly().cref()};
      const PolyRef q_part[] = {e.poly.slice(0, lv.limbs)};
      be.intt(c, {}, src, q_part);
    } else {
      be.copy(p->poly().cref(), e.poly.slice(0, lv.limbs));
      be.copy(p->poly().cref(), coeff.ref());
      be.intt(c);
    }
    const PolyRef p_part = e.poly.slice(lv.limbs, ctx_->alpha());
    be.bconv(*plan, coeff.cref(), p_part);
    const PolyRef pp[] = {p_part};
    be.ntt(pp);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<ExtendedCiphertext> Evaluator::rotate_hoisted_extended(const Ciphertext& a,
                                                                   std::span<const int> rotations,
                                                                   const GaloisKeys& keys) const {
  detail::require_usable(*ctx_, a, "rotate_hoisted_extended: ciphertext");
  detail::require_usable(*ctx_, keys, "rotate_hoisted_extended: galois keys");
  if (a.size() != 2) {
    throw ParameterError(
        "rotate_hoisted_extended: the ciphertext has 3 polynomials; relinearize it first");
  }
  std::vector<u32> elements;
  for (const int r : rotations) {
    const u32 g = galois_element_for_rotation(r, ctx_->log_n());
    if (g != 1) detail::find_galois_key(*ctx_, keys, g, r);
    elements.push_back(g);
  }
  const u32 level = a.level();
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  // P * c0 (and P * c1 for the rotation by 0), the Q_l part of P * ct; the P part of P * x is 0.
  RnsPoly c0p = be.make_poly(lv.q_basis);
  be.mul_scalar(a.poly(0).cref(), lv.p_mod_q, c0p.ref());
  std::vector<ExtendedCiphertext> out;
  // phi_g commutes with ModUp, so every rotation reads the shared digits of c1 through phi_g, in
  // one KeyMult pass over all rotations that also adds phi_g(P c0) to each Q_l part.
  std::vector<const SwitchingKey*> rot_keys;
  std::vector<u32> rot_gs;
  std::vector<PolyRef> rot0, rot1;
  for (const u32 g : elements) {
    ExtendedCiphertext e = detail::new_extended(*ctx_, level, a.scale(), a.slots());
    if (g == 1) {
      detail::extend_unrotated(*ctx_, c0p.cref(), a.poly(1).cref(), e);
    } else {
      rot_keys.push_back(keys.find(g));
      rot_gs.push_back(g);
      rot0.push_back(e.c0.ref());
      rot1.push_back(e.c1.ref());
    }
    out.push_back(std::move(e));
  }
  const ConstPolyRef c1[] = {a.poly(1).cref()}, terms[] = {c0p.cref()};
  detail::rotate_extended(switcher_, level, c1, rot_keys, rot_gs, terms, rot0, rot1, 0);
  return out;
}

ExtendedCiphertext Evaluator::multiply_plain_sum(
    std::span<const ExtendedCiphertext* const> cts,
    std::span<const ExtendedPlaintext* const> pts) const {
  if (cts.empty() || cts.size() != pts.size()) {
    throw ParameterError("multiply_plain_sum: needs as many plaintexts as ciphertexts (got " +
                         std::to_string(cts.size()) + " and " + std::to_string(pts.size()) + ")");
  }
  const u32 level = cts.front()->level;
  const long double scale = cts.front()->scale * pts.front()->scale;
  u32 slots = 0;
  std::vector<ConstPolyRef> d, b, a;
  for (std::size_t k = 0; k < cts.size(); ++k) {
    require_extended(*ctx_, *cts[k], "multiply_plain_sum: ciphertext");
    if (pts[k]->empty() || pts[k]->context_id != ctx_->id()) {
      throw ContextError("multiply_plain_sum: a plaintext is empty or of another Context");
    }
    if (cts[k]->level != level || pts[k]->level != level) {
      throw LevelError("multiply_plain_sum: operands at different levels");
    }
    detail::require_same_scale(*ctx_, cts[k]->scale * pts[k]->scale, scale, "a product",
                               "the first product");
    d.push_back(pts[k]->poly.cref());
    b.push_back(cts[k]->c0.cref());
    a.push_back(cts[k]->c1.cref());
    slots = std::max(slots, cts[k]->slots);
  }
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  ExtendedCiphertext out{
      ctx_->id(), level, scale, slots, be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
  be.key_mult(d, b, a, out.c0.ref(), out.c1.ref());
  return out;
}

std::vector<ExtendedCiphertext> Evaluator::multiply_plain_sums(
    std::span<const ExtendedCiphertext> cts, std::span<const std::vector<PlainTerm>> terms) const {
  std::vector<std::vector<const ExtendedCiphertext*>> c(terms.size());
  std::vector<std::vector<const ExtendedPlaintext*>> p(terms.size());
  bool distinct = true;  // no sum uses a ciphertext twice (key_mult_sums has one slot per pair)
  for (std::size_t g = 0; g < terms.size(); ++g) {
    std::vector<bool> used(cts.size(), false);
    for (const PlainTerm& t : terms[g]) {
      if (t.ct >= cts.size() || t.pt == nullptr) {
        throw ParameterError("multiply_plain_sums: sum " + std::to_string(g) +
                             " names ciphertext " + std::to_string(t.ct) + " of " +
                             std::to_string(cts.size()) + " or no plaintext");
      }
      distinct = distinct && !used[t.ct];
      used[t.ct] = true;
      c[g].push_back(&cts[t.ct]);
      p[g].push_back(t.pt);
    }
  }
  std::vector<ExtendedCiphertext> out;
  if (!ctx_->policy().multi_poly_caching() || !distinct || terms.size() < 2) {
    for (std::size_t g = 0; g < terms.size(); ++g)
      out.push_back(multiply_plain_sum(c[g], p[g]));
    return out;
  }
  // The checks of multiply_plain_sum, per sum, then one backend call for all of them.
  for (std::size_t g = 0; g < terms.size(); ++g) {
    if (c[g].empty()) throw ParameterError("multiply_plain_sums: a sum has no term");
    const ExtendedCiphertext& first = *c[g].front();
    const long double scale = first.scale * p[g].front()->scale;
    for (std::size_t k = 0; k < c[g].size(); ++k) {
      require_extended(*ctx_, *c[g][k], "multiply_plain_sums: ciphertext");
      if (p[g][k]->empty() || p[g][k]->context_id != ctx_->id()) {
        throw ContextError("multiply_plain_sums: a plaintext is empty or of another Context");
      }
      if (c[g][k]->level != first.level || p[g][k]->level != first.level) {
        throw LevelError("multiply_plain_sums: operands at different levels");
      }
      detail::require_same_scale(*ctx_, c[g][k]->scale * p[g][k]->scale, scale, "a product",
                                 "the first product");
    }
  }
  const u32 level = c.front().front()->level;
  for (std::size_t g = 1; g < terms.size(); ++g) {
    if (c[g].front()->level != level)
      throw LevelError("multiply_plain_sums: sums at different levels");
  }
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  // Only the ciphertexts some sum uses take part.
  std::vector<int> slot(cts.size(), -1);
  std::vector<ConstPolyRef> kb, ka;
  for (std::size_t g = 0; g < terms.size(); ++g) {
    for (const PlainTerm& t : terms[g]) {
      if (slot[t.ct] >= 0) continue;
      slot[t.ct] = static_cast<int>(kb.size());
      kb.push_back(cts[t.ct].c0.cref());
      ka.push_back(cts[t.ct].c1.cref());
    }
  }
  std::vector<ConstPolyRef> d(terms.size() * kb.size());
  std::vector<PolyRef> o0, o1;
  for (std::size_t g = 0; g < terms.size(); ++g) {
    u32 slots = 0;
    for (const PlainTerm& t : terms[g]) {
      d[g * kb.size() + static_cast<std::size_t>(slot[t.ct])] = t.pt->poly.cref();
      slots = std::max(slots, cts[t.ct].slots);
    }
    out.push_back(ExtendedCiphertext{ctx_->id(), level, c[g].front()->scale * p[g].front()->scale,
                                     slots, be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)});
    o0.push_back(out.back().c0.ref());
    o1.push_back(out.back().c1.ref());
  }
  be.key_mult_sums(d, kb, ka, o0, o1);
  return out;
}

void Evaluator::add_inplace(ExtendedCiphertext& a, const ExtendedCiphertext& b) const {
  require_extended(*ctx_, a, "add_inplace: a");
  require_extended(*ctx_, b, "add_inplace: b");
  if (a.level != b.level) throw LevelError("add_inplace: extended ciphertexts at different levels");
  detail::require_same_scale(*ctx_, a.scale, b.scale, "a", "b");
  const ConstPolyRef x[] = {a.c0.cref(), a.c1.cref()};
  const ConstPolyRef y[] = {b.c0.cref(), b.c1.cref()};
  const PolyRef z[] = {a.c0.ref(), a.c1.ref()};
  ctx_->backend().add_batch(x, y, z);
}

Ciphertext Evaluator::mod_down(ExtendedCiphertext&& a) const {
  require_extended(*ctx_, a, "mod_down: extended ciphertext");
  return finish_extended(*ctx_, switcher_, std::move(a), KeySwitchFinish::kModDown);
}

Ciphertext Evaluator::mod_down_rescale(ExtendedCiphertext&& a) const {
  require_extended(*ctx_, a, "mod_down_rescale: extended ciphertext");
  if (a.level == 0) throw LevelError("mod_down_rescale: the ciphertext is at level 0");
  return finish_extended(*ctx_, switcher_, std::move(a), KeySwitchFinish::kModDownRescale);
}

}  // namespace theo
