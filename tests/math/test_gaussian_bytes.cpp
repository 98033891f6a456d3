// gaussian_from_bytes is sample_gaussian's map from keystream bytes to values: drawing the bytes of
// several polynomials at once and mapping them in pieces (as key generation does on all cores) must
// give the values of successive sample_gaussian calls.

#include <gtest/gtest.h>

#include <vector>

#include "theo/errors.h"
#include "theo/math/prng.h"

namespace theo {
namespace {

Prng::Seed seed_of(std::uint8_t tag) {
  Prng::Seed s{};
  s[0] = tag;
  s[31] = 0x5a;
  return s;
}

TEST(GaussianFromBytes, EqualsSuccessiveSampleGaussianCalls) {
  constexpr u32 kN = 3000, kPolys = 3;
  Prng sequential(seed_of(1));
  std::vector<std::vector<i32>> want;
  for (u32 k = 0; k < kPolys; ++k)
    want.push_back(sample_gaussian(sequential, kN));
  Prng batched(seed_of(1));
  std::vector<std::uint8_t> bytes(kPolys * kN * kGaussianBytesPerValue);
  batched.fill_bytes(bytes);
  for (u32 k = 0; k < kPolys; ++k) {
    std::vector<i32> got(kN);
    // Uneven pieces: the map is value by value.
    for (u32 first = 0; first < kN; first += 700) {
      const u32 len = std::min<u32>(700, kN - first);
      gaussian_from_bytes(
          std::span<const std::uint8_t>(bytes).subspan((k * kN + first) * kGaussianBytesPerValue,
                                                       len * kGaussianBytesPerValue),
          std::span<i32>(got).subspan(first, len));
    }
    EXPECT_EQ(got, want[k]) << "poly " << k;
  }
  // Both generators are at the same keystream position afterwards.
  EXPECT_EQ(sequential.next_u64(), batched.next_u64());
}

TEST(GaussianFromBytes, RejectsMismatchedSizesAndSigma) {
  std::vector<std::uint8_t> bytes(80);
  std::vector<i32> out(9);
  EXPECT_THROW(gaussian_from_bytes(bytes, out), ParameterError);
  out.resize(10);
  EXPECT_NO_THROW(gaussian_from_bytes(bytes, out));
  EXPECT_THROW(gaussian_from_bytes(bytes, out, 0.0), ParameterError);
}

}  // namespace
}  // namespace theo
