#include "theo/ckks/key_generator.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "common/thread_pool.h"
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

Prng::Seed KeyGenerator::next_seed() {
  Prng::Seed seed;
  prng_.fill_bytes(seed);
  return seed;
}

std::vector<std::vector<i32>> KeyGenerator::sample_errors(u32 count) {
  const u32 n = ctx_->n();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count) * n * kGaussianBytesPerValue);
  prng_.fill_bytes(bytes);
  std::vector<std::vector<i32>> out(count, std::vector<i32>(n));
  // Pieces of 4096 values: enough work per task to hide the hand-off, enough tasks for 16 cores.
  constexpr u32 kPiece = 4096;
  const u32 pieces = (n + kPiece - 1) / kPiece;
  const auto map_piece = [&](std::size_t job) {
    const u32 poly = static_cast<u32>(job / pieces);
    const u32 first = static_cast<u32>(job % pieces) * kPiece;
    const u32 len = std::min(kPiece, n - first);
    const std::size_t byte0 = (static_cast<std::size_t>(poly) * n + first) * kGaussianBytesPerValue;
    gaussian_from_bytes(
        std::span<const std::uint8_t>(bytes).subspan(byte0, len * kGaussianBytesPerValue),
        std::span<i32>(out[poly]).subspan(first, len));
  };
  const std::size_t jobs = static_cast<std::size_t>(count) * pieces;
  const unsigned threads = std::thread::hardware_concurrency();
  if (threads > 1 && jobs > 1) {
    if (!pool_) pool_ = std::make_shared<ThreadPool>(threads);
    pool_->run(jobs, map_piece);
  } else {
    for (std::size_t j = 0; j < jobs; ++j)
      map_piece(j);
  }
  return out;
}

RnsPoly KeyGenerator::small_poly_ntt(std::span<const i32> coeffs, const Basis& basis) {
  Backend& be = ctx_->backend();
  RnsPoly poly = be.make_poly(basis);
  // Upload N words (residues modulo the first prime) instead of limbs x N, and let the backend
  // spread them: a BConv from one prime s is the centered lift t in (-s/2, s/2] reduced modulo
  // every other prime, which is exact for |coefficients| < s/2 (secrets and errors are tiny).
  const u32 q0 = ctx_->prime(basis[0]);
  std::vector<u32> host(coeffs.size());
  for (std::size_t i = 0; i < coeffs.size(); ++i) {
    if (static_cast<u32>(std::abs(coeffs[i])) >= q0 / 2) {
      throw ParameterError("KeyGenerator: small coefficient " + std::to_string(coeffs[i]) +
                           " is not below half the prime " + std::to_string(q0));
    }
    host[i] = detail::reduce_i64(coeffs[i], q0);
  }
  be.upload(host.data(), poly.slice(0, 1));
  if (basis.size > 1) {
    if (!spread_plan_ || !(spread_basis_ == basis)) {
      spread_plan_ = be.make_bconv(basis.slice(0, 1), basis.slice(1, basis.size - 1));
      spread_basis_ = basis;
    }
    be.bconv(*spread_plan_, poly.slice(0, 1), poly.slice(1, basis.size - 1));
  }
  const PolyRef refs[] = {poly.ref()};
  be.ntt(refs);
  return poly;
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
  RnsPoly ntt = small_poly_ntt(coeffs, ctx_->key_basis());
  return SecretKey(ctx_->id(), std::move(coeffs), hamming_weight, std::move(ntt));
}

PublicKey KeyGenerator::create_public_key(const SecretKey& sk) {
  detail::require_usable(*ctx_, sk, "create_public_key: secret key");
  Backend& be = ctx_->backend();
  // Over Q_max u P: encryption works at Q_l u P and divides by P (see Encryptor), which shrinks
  // the v*e term of fresh ciphertexts to the rounding noise of one ModDown.
  const Basis q_basis = ctx_->key_basis();
  RnsPoly a = be.make_poly(q_basis);
  const UniformSeed a_seed{next_seed(), ExpansionScheme::kChaCha20Wide};
  be.sample_uniform(a_seed.seed, 0, a.ref());
  const std::vector<i32> e = sample_gaussian(prng_, ctx_->n());
  RnsPoly b = small_poly_ntt(e, q_basis);
  RnsPoly as = be.make_poly(q_basis);
  be.mul(a.cref(), sk.ntt().slice(0, q_basis.size), as.ref());
  be.sub(b.cref(), as.cref(), b.ref());
  return PublicKey(ctx_->id(), std::move(b), std::move(a), a_seed);
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
  // Compact: every a_k in one scratch polynomial, dropped with the key's seed kept.
  RnsPoly scratch;
  if (compact_keys_) scratch = be.make_poly(basis);
  // One seed per key; digit k expands the stream k of it.
  const Prng::Seed seed = next_seed();
  const std::vector<std::vector<i32>> errors = sample_errors(ctx_->dnum());
  for (u32 k = 0; k < ctx_->dnum(); ++k) {
    RnsPoly own;
    if (!compact_keys_) own = be.make_poly(basis);
    RnsPoly& a = compact_keys_ ? scratch : own;
    be.sample_uniform(seed, k, a.ref());
    RnsPoly b = small_poly_ntt(errors[k], basis);
    be.mul(a.cref(), sk.ntt().cref(), tmp.ref());
    be.sub(b.cref(), tmp.cref(), b.ref());
    const u32 lo = k * alpha;
    const u32 count = std::min(q_max, lo + alpha) - lo;
    const std::span<const u32> consts(p_mod.data() + lo, count);
    be.mul_scalar_add(s_prime.slice(lo, count), consts, b.slice(lo, count), b.slice(lo, count));
    bs.push_back(std::move(b));
    if (!compact_keys_) as.push_back(std::move(own));
  }
  return SwitchingKey(ctx_->id(), std::move(bs), std::move(as),
                      UniformSeed{seed, ExpansionScheme::kChaCha20Wide});
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

// ---- SwitchingKey storage --------------------------------------------------------------------

const RnsPoly& SwitchingKey::a(u32 chunk) const {
  if (compact()) {
    throw ContextError(
        "SwitchingKey::a: this key is compact (its a halves are kept as their seed); key "
        "switching expands them where it reads them");
  }
  return a_.at(chunk);
}

void SwitchingKey::make_compact() {
  if (empty()) throw ParameterError("SwitchingKey::make_compact: the key is empty");
  if (compact()) return;
  if (!a_seed_ || a_seed_->scheme != ExpansionScheme::kChaCha20Wide) {
    throw ParameterError(
        "SwitchingKey::make_compact: the key has no seed its a halves can be expanded from "
        "(keys loaded from an expanded file keep their words)");
  }
  a_.clear();
  a_.shrink_to_fit();
}

std::size_t SwitchingKey::stored_words() const {
  std::size_t words = 0;
  for (const RnsPoly& p : b_)
    words += p.words();
  for (const RnsPoly& p : a_)
    words += p.words();
  return words;
}

}  // namespace theo
