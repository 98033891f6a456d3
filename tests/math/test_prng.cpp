// Prng (ChaCha20) and samplers: determinism, independence, distribution sanity.
// Fixed seeds appear only where determinism is what is tested; everything statistical runs on a
// fresh OS seed, with tolerances of about 6 standard deviations.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "theo/errors.h"
#include "theo/math/prng.h"

namespace theo {
namespace {

Prng::Seed seed_of(std::uint8_t first) {
  Prng::Seed s{};
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<std::uint8_t>(first + 7 * i);
  return s;
}

TEST(Prng, KeystreamIsChaCha20) {
  // ChaCha20 with an all-zero key, nonce 0, block 0 (RFC 7539 A.1, test vector #1).
  Prng prng(Prng::Seed{});
  std::array<std::uint8_t, 32> got{};
  prng.fill_bytes(got);
  const std::array<std::uint8_t, 32> expect{0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90,
                                            0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28,
                                            0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a,
                                            0xa8, 0x36, 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7};
  EXPECT_EQ(got, expect);
}

TEST(Prng, SameSeedSameStream) {
  Prng a(seed_of(1)), b(seed_of(1));
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(a.next_u64(), b.next_u64());
  // Mixed request sizes consume the same keystream bytes.
  Prng c(seed_of(2)), d(seed_of(2));
  std::vector<std::uint8_t> bytes(3000);
  c.fill_bytes(bytes);
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const u32 w = d.next_u32();
    for (std::size_t k = 0; k < 4; ++k)
      ASSERT_EQ(bytes[i + k], (w >> (8 * k)) & 0xffu);
  }
}

TEST(Prng, SamplersAreDeterministic) {
  Prng a(seed_of(3)), b(seed_of(3));
  EXPECT_EQ(sample_ternary_hw(a, 4096, 192), sample_ternary_hw(b, 4096, 192));
  EXPECT_EQ(sample_ternary(a, 4096), sample_ternary(b, 4096));
  EXPECT_EQ(sample_gaussian(a, 4096), sample_gaussian(b, 4096));
  EXPECT_EQ(a.uniform(1000003), b.uniform(1000003));
  EXPECT_EQ(a.uniform64(u64{3} << 60), b.uniform64(u64{3} << 60));
  EXPECT_EQ(a.uniform_real(), b.uniform_real());
}

TEST(Prng, GaussianGoldenValues) {
  // Locks the sampler's output for one seed, so that a change of table, precision or platform
  // that would alter the samples (and break cross-backend / cross-machine reproducibility) shows.
  Prng prng(seed_of(4));
  const std::vector<i32> got = sample_gaussian(prng, 16);
  const std::vector<i32> expect{1, -1, -4, 4, -1, 1, 3, 6, -2, -2, -2, 3, -4, -1, -2, 1};
  EXPECT_EQ(got, expect);
}

TEST(Prng, DifferentSeedsDiffer) {
  Prng a(seed_of(5)), b(seed_of(6));
  int equal = 0;
  for (int i = 0; i < 64; ++i)
    equal += a.next_u64() == b.next_u64();
  EXPECT_EQ(equal, 0);
}

TEST(Prng, OsSeedingDiffers) {
  EXPECT_NE(Prng::os_seed(), Prng::os_seed());
  Prng a, b;
  std::array<u64, 4> xa{}, xb{};
  for (auto& x : xa)
    x = a.next_u64();
  for (auto& x : xb)
    x = b.next_u64();
  EXPECT_NE(xa, xb);
}

TEST(Prng, ForkIsDeterministicAndIndependent) {
  Prng a(seed_of(7)), b(seed_of(7));
  Prng ca = a.fork(), cb = b.fork();
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(ca.next_u64(), cb.next_u64());
  // The child stream is not the parent's continuation, nor the parent's start.
  Prng fresh(seed_of(7));
  Prng child = fresh.fork();
  Prng parent_again(seed_of(7));
  const u64 c0 = child.next_u64();
  EXPECT_NE(c0, fresh.next_u64());
  EXPECT_NE(c0, parent_again.next_u64());
  // Two forks of the same parent differ.
  Prng p(seed_of(8));
  Prng f1 = p.fork(), f2 = p.fork();
  EXPECT_NE(f1.next_u64(), f2.next_u64());
}

TEST(Prng, UniformArguments) {
  Prng prng;
  EXPECT_THROW(prng.uniform(0), ParameterError);
  EXPECT_THROW(prng.uniform64(0), ParameterError);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(prng.uniform(1), 0u);
    EXPECT_EQ(prng.uniform64(1), 0u);
    EXPECT_LT(prng.uniform(7), 7u);
    EXPECT_LT(prng.uniform64(~u64{0}), ~u64{0});
    const double r = prng.uniform_real();
    EXPECT_GE(r, 0.0);
    EXPECT_LT(r, 1.0);
  }
}

// Pearson chi-square statistic of `counts` against a uniform expectation.
double chi_square(const std::vector<u64>& counts, double expected) {
  double chi2 = 0;
  for (u64 c : counts)
    chi2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return chi2;
}

TEST(Prng, UniformChiSquare) {
  Prng prng;
  for (u32 bound : {2u, 10u, 97u, 1000u}) {
    const u64 samples = 200 * u64{bound} + 20000;
    std::vector<u64> counts(bound, 0);
    for (u64 i = 0; i < samples; ++i)
      ++counts[prng.uniform(bound)];
    const double df = bound - 1.0;
    const double chi2 = chi_square(counts, static_cast<double>(samples) / bound);
    // Mean df, standard deviation sqrt(2 df): 6 deviations plus slack for small df.
    EXPECT_LT(chi2, df + 6.0 * std::sqrt(2.0 * df) + 20.0) << "bound " << bound;
  }
}

TEST(Prng, UniformHasNoModuloBias) {
  // bound = 3 * 2^30: plain (x mod bound) would return [0, 2^30) with probability 1/2, not 1/3.
  Prng prng;
  const u32 bound = 3u << 30;
  const int samples = 60000;
  int low = 0;
  for (int i = 0; i < samples; ++i) {
    const u32 x = prng.uniform(bound);
    ASSERT_LT(x, bound);
    low += x < (1u << 30);
  }
  const double sd = std::sqrt(samples * (1.0 / 3) * (2.0 / 3));
  EXPECT_NEAR(low, samples / 3.0, 6 * sd);
  // Same for 64 bits: bound = 3 * 2^62.
  const u64 bound64 = u64{3} << 62;
  low = 0;
  for (int i = 0; i < samples; ++i)
    low += prng.uniform64(bound64) < (u64{1} << 62);
  EXPECT_NEAR(low, samples / 3.0, 6 * sd);
}

TEST(Prng, UniformRealMoments) {
  Prng prng;
  const int n = 100000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = prng.uniform_real();
    sum += x;
    sum2 += x * x;
  }
  EXPECT_NEAR(sum / n, 0.5, 6 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12, 0.005);
}

TEST(Samplers, TernaryHammingWeightIsExact) {
  Prng prng;
  for (auto [n, h] : {std::pair<u32, u32>{1024, 0},
                      {1024, 1},
                      {1024, 64},
                      {65536, 192},
                      {65536, 32768},
                      {16, 16}}) {
    const auto s = sample_ternary_hw(prng, n, h);
    ASSERT_EQ(s.size(), n);
    u32 nonzero = 0;
    for (i32 v : s) {
      ASSERT_TRUE(v == -1 || v == 0 || v == 1);
      nonzero += v != 0;
    }
    EXPECT_EQ(nonzero, h) << "n " << n;
  }
  EXPECT_THROW(sample_ternary_hw(prng, 16, 17), ParameterError);
}

TEST(Samplers, TernaryHammingWeightSignsAndPositions) {
  Prng prng;
  // Signs: 2^15 nonzeros, about half positive.
  const auto s = sample_ternary_hw(prng, 1u << 16, 1u << 15);
  const long plus = std::count(s.begin(), s.end(), 1);
  EXPECT_NEAR(static_cast<double>(plus), 16384.0, 6 * std::sqrt(32768 * 0.25));
  // Positions: over many draws every position is hit about h/n of the time.
  const u32 n = 64, h = 8, trials = 20000;
  std::vector<u64> hits(n, 0);
  for (u32 t = 0; t < trials; ++t) {
    const auto v = sample_ternary_hw(prng, n, h);
    for (u32 i = 0; i < n; ++i)
      hits[i] += v[i] != 0;
  }
  const double p = static_cast<double>(h) / n;
  const double sd = std::sqrt(trials * p * (1 - p));
  for (u32 i = 0; i < n; ++i)
    EXPECT_NEAR(static_cast<double>(hits[i]), trials * p, 6 * sd) << i;
}

TEST(Samplers, TernaryDistribution) {
  Prng prng;
  const u32 n = 1u << 17;
  const auto s = sample_ternary(prng, n);
  const double zeros = static_cast<double>(std::count(s.begin(), s.end(), 0));
  const double plus = static_cast<double>(std::count(s.begin(), s.end(), 1));
  const double minus = static_cast<double>(std::count(s.begin(), s.end(), -1));
  EXPECT_EQ(zeros + plus + minus, n);
  EXPECT_NEAR(zeros, n / 2.0, 6 * std::sqrt(n * 0.25));
  EXPECT_NEAR(plus, n / 4.0, 6 * std::sqrt(n * 0.1875));
  EXPECT_NEAR(minus, n / 4.0, 6 * std::sqrt(n * 0.1875));
}

TEST(Samplers, GaussianMomentsAndBound) {
  Prng prng;
  for (double sigma : {3.2, 1.0, 10.0}) {
    const u32 n = 1u << 17;
    const auto s = sample_gaussian(prng, n, sigma);
    const i32 bound = static_cast<i32>(std::floor(6 * sigma));
    double sum = 0, sum2 = 0;
    for (i32 v : s) {
      ASSERT_LE(std::abs(v), bound) << "sigma " << sigma;
      sum += v;
      sum2 += static_cast<double>(v) * v;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    const double var_sd = std::sqrt(2.0 / n) * sigma * sigma;
    EXPECT_NEAR(mean, 0.0, 6 * sigma / std::sqrt(n)) << "sigma " << sigma;
    // The discrete Gaussian's variance is sigma^2 up to terms of order exp(-2 pi^2 sigma^2).
    EXPECT_NEAR(var, sigma * sigma, 6 * var_sd + 0.01) << "sigma " << sigma;
  }
  // Mass at zero for sigma = 3.2: sum over k of the normalized weights, about 0.1247.
  const auto s = sample_gaussian(prng, 1u << 17);
  const double zeros = static_cast<double>(std::count(s.begin(), s.end(), 0));
  EXPECT_NEAR(zeros / (1u << 17), 0.12467, 6 * std::sqrt(0.1247 * 0.8753 / (1u << 17)));
}

TEST(Samplers, GaussianArguments) {
  Prng prng;
  EXPECT_THROW(sample_gaussian(prng, 8, 0.0), ParameterError);
  EXPECT_THROW(sample_gaussian(prng, 8, -1.0), ParameterError);
  EXPECT_THROW(sample_gaussian(prng, 8, std::nan("")), ParameterError);
  // A tiny sigma has bound 0: all zeros.
  const auto s = sample_gaussian(prng, 64, 0.1);
  EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](i32 v) { return v == 0; }));
}

}  // namespace
}  // namespace theo
