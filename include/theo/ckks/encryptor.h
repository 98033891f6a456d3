#pragma once
// Encryption (public-key or secret-key mode) and decryption. Unseeded instances draw randomness
// from the operating system; a seeded instance is deterministic (same seed, same words).
//
// Secret-key ciphertexts keep the seed of their uniform part `a` (= c1), so they serialize at half
// the size (see serialization.h).

#include <memory>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"
#include "theo/math/prng.h"

namespace theo {

class Encryptor {
 public:
  Encryptor(std::shared_ptr<const Context> ctx, const PublicKey& pk);
  Encryptor(std::shared_ptr<const Context> ctx, const PublicKey& pk, const Prng::Seed& seed);
  Encryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk);
  Encryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk, const Prng::Seed& seed);

  // Encrypts at the plaintext's level and scale.
  Ciphertext encrypt(const Plaintext& pt);
  // Encryption of zero at `level` with scale `scale` (default Delta_level).
  Ciphertext encrypt_zero(u32 level);

  bool is_secret_key_mode() const { return sk_ != nullptr; }

 private:
  // What the public constructors share: the checks of the Context and of the one key given.
  Encryptor(std::shared_ptr<const Context> ctx, const PublicKey* pk, const SecretKey* sk,
            Prng prng);
  Ciphertext encrypt_impl(const RnsPoly* message, u32 level, long double scale, u32 slots);
  std::shared_ptr<const Context> ctx_;
  const PublicKey* pk_ = nullptr;
  const SecretKey* sk_ = nullptr;
  Prng prng_;
};

class Decryptor {
 public:
  Decryptor(std::shared_ptr<const Context> ctx, const SecretKey& sk);
  // c0 + c1 s (+ c2 s^2), at the ciphertext's level and scale.
  Plaintext decrypt(const Ciphertext& ct) const;

 private:
  std::shared_ptr<const Context> ctx_;
  const SecretKey* sk_;
};

// The uniform polynomial `a` of a seeded secret-key ciphertext, in the NTT domain over the level's
// basis: Backend::sample_uniform(seed, stream 0), expanded on the backend. Limb words depend only
// on (seed, prime), so the `a` of a lower level is a prefix of the limbs of a higher one.
RnsPoly expand_seeded_uniform(const Context& ctx, const Prng::Seed& seed, u32 level);

}  // namespace theo
