#include "theo/ckks/key_generator.h"

#include <string>

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

KeyGenerator::KeyGenerator(std::shared_ptr<const Context> ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw ContextError("KeyGenerator: the Context is null");
}

KeyGenerator::KeyGenerator(std::shared_ptr<const Context> ctx, const Prng::Seed& seed)
    : ctx_(std::move(ctx)), prng_(seed) {
  if (!ctx_) throw ContextError("KeyGenerator: the Context is null");
}

SecretKey KeyGenerator::create_secret_key() {
  const u32 h = ctx_->params().dense_hamming_weight;
  return create_secret_key_with_weight(h == 0 ? ctx_->n() / 2 : h);
}

SecretKey KeyGenerator::create_sparse_secret_key() {
  const u32 h = ctx_->params().sparse_hamming_weight;
  if (h == 0) {
    throw ParameterError("sparse_hamming_weight is 0 in parameter set '" + ctx_->params().name +
                         "': it has no sparse secret");
  }
  return create_secret_key_with_weight(h);
}

SecretKey KeyGenerator::create_secret_key_with_weight(u32 hamming_weight) {
  if (hamming_weight == 0 || hamming_weight > ctx_->n()) {
    throw ParameterError("secret key hamming weight " + std::to_string(hamming_weight) +
                         " is not in [1, N]");
  }
  std::vector<i32> coeffs = sample_ternary_hw(prng_, ctx_->n(), hamming_weight);
  RnsPoly ntt = detail::small_poly_ntt(*ctx_, coeffs, ctx_->key_basis());
  return SecretKey(ctx_->id(), std::move(coeffs), hamming_weight, std::move(ntt));
}

PublicKey KeyGenerator::create_public_key(const SecretKey& sk) {
  detail::require_usable(*ctx_, sk, "create_public_key: secret key");
  Backend& be = ctx_->backend();
  // Over Q_max u P: encryption works at Q_l u P and divides by P (see Encryptor), which shrinks
  // the v*e term of fresh ciphertexts to the rounding noise of one ModDown.
  const Basis q_basis = ctx_->key_basis();
  RnsPoly a = detail::sample_uniform(*ctx_, prng_, q_basis);
  const std::vector<i32> e = sample_gaussian(prng_, ctx_->n());
  RnsPoly b = detail::small_poly_ntt(*ctx_, e, q_basis);
  RnsPoly as = be.make_poly(q_basis);
  be.mul(a.cref(), sk.ntt().slice(0, q_basis.size), as.ref());
  be.sub(b.cref(), as.cref(), b.ref());
  return PublicKey(ctx_->id(), std::move(b), std::move(a));
}

SwitchingKey KeyGenerator::create_switching_key(const SecretKey& sk, ConstPolyRef s_prime) {
  detail::require_usable(*ctx_, sk, "create_switching_key: secret key");
  const Basis basis = ctx_->key_basis();
  if (!(s_prime.basis == basis)) {
    throw ParameterError("create_switching_key: s' must be over Q_max u P (key_basis())");
  }
  Backend& be = ctx_->backend();
  const u32 alpha = ctx_->alpha();
  const u32 q_max = ctx_->q_max_limbs();
  // P mod every prime of Q_max: the gadget factor of the chunk that prime belongs to.
  std::vector<u32> p_mod(q_max);
  const Basis p_basis = ctx_->p_basis();
  for (u32 i = 0; i < q_max; ++i) {
    p_mod[i] = detail::product_mod(*ctx_, std::span<const PrimeId>(p_basis.ids.data(), alpha),
                                   ctx_->prime(static_cast<PrimeId>(i)));
  }
  std::vector<RnsPoly> bs, as;
  RnsPoly tmp = be.make_poly(basis);
  for (u32 k = 0; k < ctx_->dnum(); ++k) {
    RnsPoly a = detail::sample_uniform(*ctx_, prng_, basis);
    const std::vector<i32> e = sample_gaussian(prng_, ctx_->n());
    RnsPoly b = detail::small_poly_ntt(*ctx_, e, basis);
    be.mul(a.cref(), sk.ntt().cref(), tmp.ref());
    be.sub(b.cref(), tmp.cref(), b.ref());
    const u32 lo = k * alpha;
    const u32 count = std::min(q_max, lo + alpha) - lo;
    const std::span<const u32> consts(p_mod.data() + lo, count);
    be.mul_scalar_add(s_prime.slice(lo, count), consts, b.slice(lo, count), b.slice(lo, count));
    bs.push_back(std::move(b));
    as.push_back(std::move(a));
  }
  return SwitchingKey(ctx_->id(), std::move(bs), std::move(as));
}

RelinKey KeyGenerator::create_relin_key(const SecretKey& sk) {
  detail::require_usable(*ctx_, sk, "create_relin_key: secret key");
  Backend& be = ctx_->backend();
  RnsPoly s2 = be.make_poly(ctx_->key_basis());
  be.mul(sk.ntt().cref(), sk.ntt().cref(), s2.ref());
  return RelinKey(create_switching_key(sk, s2.cref()));
}

void KeyGenerator::add_galois_keys(const SecretKey& sk, std::span<const u32> galois_elements,
                                   GaloisKeys& keys) {
  detail::require_usable(*ctx_, sk, "add_galois_keys: secret key");
  if (keys.empty()) {
    keys = GaloisKeys(ctx_->id());
  } else {
    detail::require_usable(*ctx_, keys, "add_galois_keys: galois keys");
  }
  const u32 two_n = 2 * ctx_->n();
  for (const u32 g : galois_elements) {
    if (g % 2 == 0 || g >= two_n) {
      throw ParameterError("galois element " + std::to_string(g) + " is not odd and < 2N");
    }
  }
  Backend& be = ctx_->backend();
  RnsPoly s_g = be.make_poly(ctx_->key_basis());
  for (const u32 g : galois_elements) {
    if (g == 1 || keys.contains(g)) continue;
    be.automorphism(sk.ntt().cref(), g, s_g.ref());
    keys.insert(g, create_switching_key(sk, s_g.cref()));
  }
}

GaloisKeys KeyGenerator::create_galois_keys(const SecretKey& sk, std::span<const int> rotations,
                                            bool with_conjugation) {
  detail::require_usable(*ctx_, sk, "create_galois_keys: secret key");
  std::vector<u32> elements;
  for (const int r : rotations)
    elements.push_back(galois_element_for_rotation(r, ctx_->log_n()));
  if (with_conjugation) elements.push_back(galois_element_for_conjugation(ctx_->log_n()));
  GaloisKeys keys(ctx_->id());
  add_galois_keys(sk, elements, keys);
  return keys;
}

}  // namespace theo
