#pragma once
// Shared helpers of the circuits tests: the small insecure bootstrapping preset, suites sharing one
// Env, and precision reporting (bits = -log2 max abs error, printed so that they show in the test
// log).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "theo/circuits/circuits.h"

namespace theo::test {

// presets/test_boot_n12.json: N = 2^12, Delta = 2^40, 3 user levels above a 2-prime level 0 (like
// bootparam_40) and 13 bootstrapping levels; made by generate_prime_system (log_n 12, log_scale
// 40, levels 3, boot_levels 13, cts 2, stc 2). Insecure (CI only).
inline ParameterSet boot_test_params() {
  return load_preset("test_boot_n12");
}

// An Env on the small bootstrapping preset with a Bootstrapper of `cfg` and its keys.
struct BootEnv : Env {
  explicit BootEnv(const BootstrapConfig& cfg)
      : Env(boot_test_params()), boot(ctx, cfg), keys(boot.generate_keys(keygen, sk, false)) {}

  Bootstrapper boot;
  BootstrappingKeys keys;
};

// A Bootstrapper of `cfg` on `ctx` with keys and encryptions from fixed seeds, so that every
// backend and every Optimizations setting holds the same words for the same inputs.
struct SeededBootEnv : KeyedContext {
  SeededBootEnv(ContextPtr context, const BootstrapConfig& cfg, std::uint8_t keygen_seed = 5,
                std::uint8_t encryptor_seed = 9)
      : KeyedContext(std::move(context), keygen_seed),
        encryptor(ctx, sk, seed_of(encryptor_seed)),
        decryptor(ctx, sk),
        boot(ctx, cfg),
        keys(boot.generate_keys(keygen, sk, false)) {}

  Ciphertext encrypt(const std::vector<Cplx>& z, u32 level) {
    return encryptor.encrypt(encoder.encode(z, level));
  }
  std::vector<Cplx> decrypt(const Ciphertext& ct) { return encoder.decode(decryptor.decrypt(ct)); }

  Encryptor encryptor;
  Decryptor decryptor;
  Bootstrapper boot;
  BootstrappingKeys keys;
};

// A suite whose tests share one Env on generated_params(LogN, Levels), made before the suite's
// first test and dropped after its last (key generation dominates these tests' time).
template <u32 LogN, u32 Levels>
class SharedEnvSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { env_ = std::make_unique<Env>(generated_params(LogN, Levels)); }
  static void TearDownTestSuite() { env_.reset(); }
  inline static std::unique_ptr<Env> env_;
};

inline double bits(const std::vector<Cplx>& got, const std::vector<Cplx>& want) {
  const double e = max_abs_error(got, want);
  return e > 0 ? -std::log2(e) : 1000.0;
}

inline void print_bits(const char* what, double b) {
  std::printf("[precision] %-40s %.2f bits\n", what, b);
  std::fflush(stdout);
}

}  // namespace theo::test
