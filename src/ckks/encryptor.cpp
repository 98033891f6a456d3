#include "theo/ckks/encryptor.h"

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "theo/ckks/key_switcher.h"
#include "theo/errors.h"

namespace theo {

namespace {

const std::shared_ptr<const Context>& require_context(const std::shared_ptr<const Context>& ctx,
                                                      const char* who) {
  if (!ctx) throw ContextError(std::string(who) + ": the Context is null");
  return ctx;
}

}  // namespace

RnsPoly expand_seeded_uniform(const Context& ctx, const Prng::Seed& seed, u32 level) {
  Backend& be = ctx.backend();
  RnsPoly a = be.make_poly(ctx.level(level).q_basis);
  be.sample_uniform(seed, 0, a.ref());
  return a;
}

Encryptor::Encryptor(std::shared_ptr<const Context> ctx, const PublicKey* pk, const SecretKey* sk,
                     Prng prng)
    : ctx_(require_context(ctx, "Encryptor")), pk_(pk), sk_(sk), prng_(std::move(prng)) {
  if (pk_ != nullptr) detail::require_usable(*ctx_, *pk_, "Encryptor: public key");
  if (sk_ != nullptr) detail::require_usable(*ctx_, *sk_, "Encryptor: secret key");
}
Encryptor::Encryptor(std::shared_ptr<const Context> ctx, const PublicKey& pk)
    : Encryptor(std::move(ctx), &pk, nullptr, Prng()) {}
Encryptor::Encryptor(std::shared_ptr<const Context> ctx, const PublicKey& pk,
                     const Prng::Seed& seed)
    : Encryptor(std::move(ctx), &pk, nullptr, Prng(seed)) {}
Encryptor::Encryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk)
    : Encryptor(std::move(ctx), nullptr, &sk, Prng()) {}
Encryptor::Encryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk,
                     const Prng::Seed& seed)
    : Encryptor(std::move(ctx), nullptr, &sk, Prng(seed)) {}

Ciphertext Encryptor::encrypt(const Plaintext& pt) {
  detail::require_usable(*ctx_, pt, "Encryptor::encrypt: plaintext");
  return encrypt_impl(&pt.poly(), pt.level(), pt.scale(), pt.slots());
}

Ciphertext Encryptor::encrypt_zero(u32 level) {
  const LevelData& lv = ctx_->level(level);
  return encrypt_impl(nullptr, level, lv.scale, ctx_->max_slots());
}

Ciphertext Encryptor::encrypt_impl(const RnsPoly* message, u32 level, long double scale,
                                   u32 slots) {
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  const u32 n = ctx_->n();
  std::vector<RnsPoly> polys;
  std::optional<Prng::Seed> seed;
  if (sk_ != nullptr) {
    detail::require_usable(*ctx_, *sk_, "Encryptor: secret key");
    Prng::Seed s{};
    prng_.fill_bytes(s);
    RnsPoly a = expand_seeded_uniform(*ctx_, s, level);
    const std::vector<i32> e = sample_gaussian(prng_, n);
    RnsPoly c0 = detail::small_poly_ntt(*ctx_, e, lv.q_basis);
    RnsPoly as = be.make_poly(lv.q_basis);
    be.mul(a.cref(), sk_->ntt().slice(lv.first_id, lv.limbs), as.ref());
    be.sub(c0.cref(), as.cref(), c0.ref());
    polys.push_back(std::move(c0));
    polys.push_back(std::move(a));
    seed = s;
  } else {
    detail::require_usable(*ctx_, *pk_, "Encryptor: public key");
    // Encrypt zero over Q_l u P, then ModDown by P: the noise v*e + e0 + e1*s is divided by P,
    // leaving only the rounding of the division (as a key switch does), ~4 bits less at N = 2^16.
    const std::vector<i32> v = sample_ternary(prng_, n);
    const std::vector<i32> e0 = sample_gaussian(prng_, n);
    const std::vector<i32> e1 = sample_gaussian(prng_, n);
    const RnsPoly v_ntt = detail::small_poly_ntt(*ctx_, v, lv.pq_basis);
    RnsPoly c0 = detail::small_poly_ntt(*ctx_, e0, lv.pq_basis);
    RnsPoly c1 = detail::small_poly_ntt(*ctx_, e1, lv.pq_basis);
    const u32 alpha = ctx_->alpha();
    const u32 p_first = ctx_->q_max_limbs();
    for (const auto& [key, c] : {std::pair{&pk_->b(), &c0}, std::pair{&pk_->a(), &c1}}) {
      be.mul_add(v_ntt.slice(0, lv.limbs), key->slice(lv.first_id, lv.limbs), c->slice(0, lv.limbs),
                 c->slice(0, lv.limbs));
      be.mul_add(v_ntt.slice(lv.limbs, alpha), key->slice(p_first, alpha),
                 c->slice(lv.limbs, alpha), c->slice(lv.limbs, alpha));
    }
    polys.push_back(be.make_poly(lv.q_basis));
    polys.push_back(be.make_poly(lv.q_basis));
    const PolyRef in[] = {c0.ref(), c1.ref()};
    const PolyRef out0[] = {polys[0].ref()}, out1[] = {polys[1].ref()};
    KeySwitcher(ctx_).run({.level = level, .extended = in, .out0 = out0, .out1 = out1});
  }
  if (message != nullptr) be.add(polys[0].cref(), message->cref(), polys[0].ref());
  Ciphertext ct(ctx_->id(), level, scale, slots, std::move(polys));
  if (seed) ct.set_seed(*seed);
  return ct;
}

Decryptor::Decryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk)
    : ctx_(require_context(ctx, "Decryptor")), sk_(&sk) {
  detail::require_usable(*ctx_, sk, "Decryptor: secret key");
}

Plaintext Decryptor::decrypt(const Ciphertext& ct) const {
  detail::require_usable(*ctx_, ct, "Decryptor::decrypt: ciphertext");
  detail::require_usable(*ctx_, *sk_, "Decryptor: secret key");
  const LevelData& lv = ctx_->level(ct.level());
  Backend& be = ctx_->backend();
  const ConstPolyRef s = sk_->ntt().slice(lv.first_id, lv.limbs);
  RnsPoly m = be.make_poly(lv.q_basis);
  be.mul_add(ct.poly(1).cref(), s, ct.poly(0).cref(), m.ref());
  if (ct.size() == 3) {
    RnsPoly s2 = be.make_poly(lv.q_basis);
    be.mul(s, s, s2.ref());
    be.mul_add(ct.poly(2).cref(), s2.cref(), m.cref(), m.ref());
  }
  return Plaintext(ctx_->id(), ct.level(), ct.scale(), ct.slots(), std::move(m));
}

}  // namespace theo
