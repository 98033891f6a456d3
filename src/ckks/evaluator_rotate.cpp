// Evaluator: rotations, conjugation and hoisted rotations (one ModUp shared by all).

#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "theo/ckks/evaluator.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

namespace {

std::string describe_missing(const Context& ctx, u32 g, std::optional<int> rotation) {
  if (g == galois_element_for_conjugation(ctx.log_n())) {
    return "no key for conjugation (galois element " + std::to_string(g) +
           "); generate it with KeyGenerator::create_galois_keys(sk, {}, /*with_conjugation=*/true)"
           " or KeyGenerator::create_conjugation_key(sk)";
  }
  if (rotation) {
    return "no rotation key for rotation by " + std::to_string(*rotation) + " (galois element " +
           std::to_string(g) + "); generate it with KeyGenerator::create_galois_keys(sk, {" +
           std::to_string(*rotation) + "})";
  }
  return "no key for galois element " + std::to_string(g) +
         "; generate it with KeyGenerator::add_galois_keys(sk, {" + std::to_string(g) + "}, keys)";
}

const SwitchingKey& find_key(const Context& ctx, const GaloisKeys& keys, u32 g,
                             std::optional<int> rotation) {
  return detail::find_galois_key(ctx, keys, g, rotation);
}

void require_relinearized(const Ciphertext& a, const char* op) {
  if (a.size() != 2) {
    throw ParameterError(std::string(op) +
                         ": the ciphertext has 3 polynomials; relinearize it first");
  }
}

}  // namespace

const SwitchingKey& detail::find_galois_key(const Context& ctx, const GaloisKeys& keys, u32 g,
                                            std::optional<int> rotation) {
  const SwitchingKey* key = keys.find(g);
  if (key == nullptr) throw MissingKeyError(describe_missing(ctx, g, rotation));
  return *key;
}

Ciphertext Evaluator::apply_galois(const Ciphertext& a, u32 galois_element,
                                   const GaloisKeys& keys) const {
  detail::require_usable(*ctx_, a, "apply_galois: ciphertext");
  detail::require_usable(*ctx_, keys, "apply_galois: galois keys");
  require_relinearized(a, "apply_galois");
  if (galois_element == 1) return clone(a);
  const SwitchingKey& key = find_key(*ctx_, keys, galois_element, std::nullopt);
  const LevelData& lv = ctx_->level(a.level());
  Backend& be = ctx_->backend();
  RnsPoly c1 = be.make_poly(lv.q_basis);
  be.automorphism(a.poly(1).cref(), galois_element, c1.ref());
  std::vector<RnsPoly> polys;
  polys.push_back(be.make_poly(lv.q_basis));
  polys.push_back(be.make_poly(lv.q_basis));
  const ConstPolyRef d[] = {c1.cref()};
  const SwitchingKey* const k[] = {&key};
  const PolyRef out0[] = {polys[0].ref()}, out1[] = {polys[1].ref()};
  switcher_.run({.level = a.level(), .inputs = d, .keys = k, .out0 = out0, .out1 = out1});
  const ConstPolyRef c0_in[] = {a.poly(0).cref()};
  const u32 ks[] = {galois_element};
  be.automorphism_sum(c0_in, ks, polys[0].ref(), /*accumulate=*/true);
  return Ciphertext(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys));
}

Ciphertext Evaluator::rotate(const Ciphertext& a, int r, const GaloisKeys& keys) const {
  detail::require_usable(*ctx_, a, "rotate: ciphertext");
  detail::require_usable(*ctx_, keys, "rotate: galois keys");
  const u32 g = galois_element_for_rotation(r, ctx_->log_n());
  if (g != 1) find_key(*ctx_, keys, g, r);
  return apply_galois(a, g, keys);
}
void Evaluator::rotate_inplace(Ciphertext& a, int r, const GaloisKeys& keys) const {
  a = rotate(a, r, keys);
}

Ciphertext Evaluator::conjugate(const Ciphertext& a, const GaloisKeys& keys) const {
  return apply_galois(a, galois_element_for_conjugation(ctx_->log_n()), keys);
}

std::vector<Ciphertext> Evaluator::rotate_hoisted(const Ciphertext& a,
                                                  std::span<const int> rotations,
                                                  const GaloisKeys& keys) const {
  detail::require_usable(*ctx_, a, "rotate_hoisted: ciphertext");
  detail::require_usable(*ctx_, keys, "rotate_hoisted: galois keys");
  require_relinearized(a, "rotate_hoisted");
  std::vector<u32> elements;
  for (const int r : rotations) {
    const u32 g = galois_element_for_rotation(r, ctx_->log_n());
    if (g != 1) find_key(*ctx_, keys, g, r);
    elements.push_back(g);
  }
  const LevelData& lv = ctx_->level(a.level());
  Backend& be = ctx_->backend();
  // phi_g commutes with ModUp (BConv is coefficient-wise and odd), so the digits of c1 are
  // computed once and permuted per rotation (one input shared by every switch); the rotations'
  // key switches then run in L2-sized batches.
  std::vector<u32> switched;
  std::vector<const SwitchingKey*> switch_keys;
  std::vector<std::vector<RnsPoly>> polys;
  std::vector<PolyRef> out0, out1;
  for (const u32 g : elements) {
    if (g == 1) continue;
    switched.push_back(g);
    switch_keys.push_back(keys.find(g));
    polys.emplace_back();
    polys.back().push_back(be.make_poly(lv.q_basis));
    polys.back().push_back(be.make_poly(lv.q_basis));
    out0.push_back(polys.back()[0].ref());
    out1.push_back(polys.back()[1].ref());
  }
  const ConstPolyRef c1[] = {a.poly(1).cref()};
  switcher_.run({.level = a.level(),
                 .inputs = c1,
                 .keys = switch_keys,
                 .galois = switched,
                 .out0 = out0,
                 .out1 = out1});
  std::vector<Ciphertext> out;
  std::size_t next = 0;
  for (const u32 g : elements) {
    if (g == 1) {
      out.push_back(clone(a));
      out.back().drop_seed();
      continue;
    }
    const ConstPolyRef c0_in[] = {a.poly(0).cref()};
    const u32 ks[] = {g};
    be.automorphism_sum(c0_in, ks, polys[next][0].ref(), /*accumulate=*/true);
    out.push_back(Ciphertext(ctx_->id(), a.level(), a.scale(), a.slots(), std::move(polys[next])));
    ++next;
  }
  return out;
}

}  // namespace theo
