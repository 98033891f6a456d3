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

  Prng();                           // seeded from the OS (libsodium randombytes)
  explicit Prng(const Seed& seed);  // the ChaCha20 key; the stream starts at block 0, nonce 0
  static Seed os_seed();            // 32 bytes from the OS; throws Error if libsodium fails

  // Raw keystream; words are read little-endian from it on every platform.
  void fill_bytes(std::span<std::uint8_t> out);
  u64 next_u64();
  u32 next_u32();
  // Uniform in [0, bound) without modulo bias (rejection); throws ParameterError when bound = 0.
  u32 uniform(u32 bound);
  u64 uniform64(u64 bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform_real();
  // Derives an independent child generator (e.g. for per-key or per-limb streams): its key is the
  // next 32 bytes of this generator's keystream.
  Prng fork();

 private:
  void refill();
  Seed key_{};
  u64 counter_ = 0;  // block counter
  std::array<std::uint8_t, 512> buf_{};
  std::size_t pos_ = 512;
};

// n values in {-1, 0, 1} with exactly h nonzeros (uniform positions and signs). Throws
// ParameterError when h > n.
std::vector<i32> sample_ternary_hw(Prng& prng, u32 n, u32 h);
// n values in {-1, 0, 1} with P(0) = 1/2.
std::vector<i32> sample_ternary(Prng& prng, u32 n);
// n values of the discrete Gaussian of deviation sigma (default 3.2) on [-B, B], B = floor(6
// sigma): P(k) proportional to exp(-k^2 / (2 sigma^2)). Sampled from a 64-bit cumulative table
// computed in exact GMP arithmetic and scanned in full for every sample, so a seed gives the same
// values on every platform. Throws ParameterError unless 0 < sigma <= 2^20.
std::vector<i32> sample_gaussian(Prng& prng, u32 n, double sigma = 3.2);

// Keystream bytes sample_gaussian reads per value (one little-endian 64-bit word).
inline constexpr std::size_t kGaussianBytesPerValue = 8;
// sample_gaussian's map from those bytes to values: sample_gaussian(prng, n, sigma) equals
// gaussian_from_bytes(the next 8 n bytes of prng, sigma). A caller can draw the bytes of many
// polynomials in order and map them in parallel (key generation). Throws ParameterError unless
// bytes.size() == 8 out.size() and 0 < sigma <= 2^20.
void gaussian_from_bytes(std::span<const std::uint8_t> bytes, std::span<i32> out,
                         double sigma = 3.2);

}  // namespace theo
