#pragma once
// Cryptographically secure, seedable PRNG (ChaCha20 from libsodium) and the samplers the scheme
// needs. The default constructor seeds from the operating system; a fixed seed is for tests and for
// bit-exact cross-backend checks only.

#include <array>
#include <span>
#include <vector>

#include "theo/common.h"

namespace theo {

class Prng {
 public:
  static constexpr std::size_t kSeedBytes = 32;
  using Seed = std::array<std::uint8_t, kSeedBytes>;

  Prng();                        // seeded from the OS (libsodium randombytes)
  explicit Prng(const Seed& seed);
  static Seed os_seed();

  // Raw keystream.
  void fill_bytes(std::span<std::uint8_t> out);
  u64 next_u64();
  u32 next_u32();
  // Uniform in [0, bound) without modulo bias; bound >= 1.
  u32 uniform(u32 bound);
  u64 uniform64(u64 bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform_real();
  // Derives an independent child generator (e.g. for per-key or per-limb streams).
  Prng fork();

 private:
  void refill();
  Seed key_{};
  u64 counter_ = 0;  // block counter
  std::array<std::uint8_t, 512> buf_{};
  std::size_t pos_ = 512;
};

// n values in {-1, 0, 1} with exactly h nonzeros (uniform positions and signs).
std::vector<i32> sample_ternary_hw(Prng& prng, u32 n, u32 h);
// n values in {-1, 0, 1} with P(0) = 1/2.
std::vector<i32> sample_ternary(Prng& prng, u32 n);
// n rounded Gaussian values, standard deviation sigma (default 3.2), cut at 6 sigma.
std::vector<i32> sample_gaussian(Prng& prng, u32 n, double sigma = 3.2);

}  // namespace theo
