#pragma once
// Key generation. Without a seed the generator is seeded from the operating system; with a seed
// every key it produces (in the same call order) is bit-identical across runs and backends.

#include <memory>
#include <span>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"
#include "theo/math/prng.h"

namespace theo {

class ThreadPool;  // src/common/thread_pool.h

class KeyGenerator {
 public:
  explicit KeyGenerator(std::shared_ptr<const Context> ctx);
  KeyGenerator(std::shared_ptr<const Context> ctx, const Prng::Seed& seed);

  // Dense secret: hamming weight = dense_hamming_weight (N/2 when the set says 0).
  SecretKey create_secret_key();
  // Sparse secret (bootstrapping): hamming weight = sparse_hamming_weight; ParameterError if 0.
  SecretKey create_sparse_secret_key();
  SecretKey create_secret_key_with_weight(u32 hamming_weight);

  PublicKey create_public_key(const SecretKey& sk);
  RelinKey create_relin_key(const SecretKey& sk);
  // Keys for left rotations by each r (any sign, taken mod N/2), plus conjugation on request.
  GaloisKeys create_galois_keys(const SecretKey& sk, std::span<const int> rotations,
                                bool with_conjugation = false);
  GaloisKeys create_galois_keys(const SecretKey& sk, std::initializer_list<int> rotations,
                                bool with_conjugation = false) {
    return create_galois_keys(sk, std::span<const int>(rotations.begin(), rotations.size()),
                              with_conjugation);
  }
  GaloisKeys create_conjugation_key(const SecretKey& sk) {
    return create_galois_keys(sk, std::span<const int>{}, true);
  }
  // Adds keys for more Galois elements to an existing set.
  void add_galois_keys(const SecretKey& sk, std::span<const u32> galois_elements, GaloisKeys& keys);
  // Generic switching key s' -> s; s' given in the NTT domain over key_basis().
  SwitchingKey create_switching_key(const SecretKey& sk, ConstPolyRef s_prime);

  // While on, every switching key made (relinearization, Galois, generic) is compact
  // (SwitchingKey::make_compact): each a_k is expanded into one scratch polynomial while b_k is
  // computed and is never kept, so a compact key set never holds more than its b halves. Making
  // full keys and compacting them afterwards gives the same keys but leaves the freed halves as
  // holes in the heap (3.9 vs 5.7 GiB peak for n16_s40_boot's min-keys set on the CPU).
  void set_compact_keys(bool on) { compact_keys_ = on; }
  bool compact_keys() const { return compact_keys_; }

 private:
  // A fresh 32-byte seed from the CSPRNG for one uniform polynomial, expanded on the backend
  // (Backend::sample_uniform): only the seed crosses the host bus.
  Prng::Seed next_seed();
  // `count` Gaussian error polynomials: the keystream is drawn in order (so the values equal
  // `count` calls of sample_gaussian), the table scans run on all hardware threads.
  std::vector<std::vector<i32>> sample_errors(u32 count);
  // Small signed coefficients (secret, error) sampled on the host -> NTT domain over `basis`.
  RnsPoly small_poly_ntt(std::span<const i32> coeffs, const Basis& basis);

  std::shared_ptr<const Context> ctx_;
  Prng prng_;
  // BConv from the first prime of spread_basis_ to the others, cached for small_poly_ntt.
  Basis spread_basis_;
  std::shared_ptr<const BConvPlan> spread_plan_;
  std::shared_ptr<ThreadPool> pool_;  // made on first use by sample_errors
  bool compact_keys_ = false;
};

}  // namespace theo
