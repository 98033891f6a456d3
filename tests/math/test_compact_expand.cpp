// The compact-key expansion (math/compact_expand.h): the ChaCha block function against libsodium
// and the published reduced-round vectors, the nonce layout (no two (key, digit, prime, stream,
// block) share a ChaCha input), determinism, exact uniformity of the sampler, the spill streams on
// moduli where rejection is frequent, and a chi-square test per prime of bootparam_40.

#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "math/compact_expand.h"
#include "theo/errors.h"
#include "theo/math/params.h"

namespace theo {
namespace {

namespace ce = compact_expand;
using Seed = std::array<std::uint8_t, 32>;

// Fresh randomness every run; the seed is printed so a failure can be replayed.
std::mt19937_64& rng() {
  static std::mt19937_64 r = [] {
    const u64 s = std::random_device{}() | (static_cast<u64>(std::random_device{}()) << 32);
    std::printf("test_compact_expand: random seed %llu\n", static_cast<unsigned long long>(s));
    return std::mt19937_64(s);
  }();
  return r;
}

Seed random_seed() {
  Seed s;
  for (auto& b : s)
    b = static_cast<std::uint8_t>(rng()());
  return s;
}

// Digits 0 .. digits - 1 of one limb, digit k at [k n, (k + 1) n).
std::vector<u32> expand(const Seed& seed, u32 rounds, u32 key_index, u32 digits, u32 q, u32 n) {
  std::vector<u32> out(static_cast<std::size_t>(digits) * n);
  ce::expand_limb(ce::make_key(seed), rounds, key_index, digits, q, n, out);
  return out;
}

std::vector<u32> digit_of(const std::vector<u32>& limb, u32 k, u32 n) {
  return {limb.begin() + static_cast<std::ptrdiff_t>(k) * n,
          limb.begin() + static_cast<std::ptrdiff_t>(k + 1) * n};
}

std::array<u32, 16> block(u32 rounds, const ce::Key& k, const ce::Nonce& nc) {
  std::array<u32, 16> w{};
  if (rounds == 8) ce::chacha_block<8>(k, nc, w.data());
  if (rounds == 12) ce::chacha_block<12>(k, nc, w.data());
  if (rounds == 20) ce::chacha_block<20>(k, nc, w.data());
  return w;
}

std::vector<u32> bootparam_40_primes() {
  const ParameterSet p = load_preset("bootparam_40");
  std::vector<u32> q;
  for (const auto* list : {&p.terminal_primes, &p.main_primes, &p.auxiliary_primes})
    for (const u64 x : *list)
      q.push_back(static_cast<u32>(x));
  return q;
}

TEST(CompactExpand, ChaCha20MatchesLibsodium) {
  ASSERT_GE(sodium_init(), 0);
  for (int trial = 0; trial < 20; ++trial) {
    const Seed key = random_seed();
    const ce::Nonce nc{static_cast<u32>(rng()()), static_cast<u32>(rng()()),
                       static_cast<u32>(rng()()), static_cast<u32>(rng()())};
    std::uint8_t nonce[12];
    for (int i = 0; i < 4; ++i) {
      nonce[i] = static_cast<std::uint8_t>(nc.w13 >> (8 * i));
      nonce[4 + i] = static_cast<std::uint8_t>(nc.w14 >> (8 * i));
      nonce[8 + i] = static_cast<std::uint8_t>(nc.w15 >> (8 * i));
    }
    std::array<std::uint8_t, 64> zeros{}, ks{};
    crypto_stream_chacha20_ietf_xor_ic(ks.data(), zeros.data(), ks.size(), nonce, nc.w12,
                                       key.data());
    const auto w = block(20, ce::make_key(key), nc);
    for (u32 i = 0; i < 16; ++i) {
      const u32 expect = static_cast<u32>(ks[4 * i]) | (static_cast<u32>(ks[4 * i + 1]) << 8) |
                         (static_cast<u32>(ks[4 * i + 2]) << 16) |
                         (static_cast<u32>(ks[4 * i + 3]) << 24);
      ASSERT_EQ(w[i], expect) << "word " << i;
    }
  }
}

TEST(CompactExpand, ReducedRoundVectors) {
  // ChaCha8 / 12 / 20, 256-bit zero key, zero counter and nonce: the first keystream block of the
  // published ChaCha test vectors (Strombergson, TC1), as little-endian words.
  const u32 expect8[4] = {0x2fef003eu, 0xd6405f89u, 0xe8b85b7fu, 0xa1a5091fu};
  const u32 expect12[4] = {0x6a9af49bu, 0x53f95507u, 0x12ce1f81u, 0xd583265fu};
  const u32 expect20[4] = {0xade0b876u, 0x903df1a0u, 0xe56a5d40u, 0x28bd8653u};
  const ce::Key zero{};
  const ce::Nonce nc{0, 0, 0, 0};
  const auto w8 = block(8, zero, nc), w12 = block(12, zero, nc), w20 = block(20, zero, nc);
  for (u32 i = 0; i < 4; ++i) {
    EXPECT_EQ(w8[i], expect8[i]);
    EXPECT_EQ(w12[i], expect12[i]);
    EXPECT_EQ(w20[i], expect20[i]);
  }
  EXPECT_EQ(w8[15], 0x42fe0c0eu);
  EXPECT_EQ(w12[15], 0xbe261341u);
  EXPECT_EQ(w20[15], 0x8665eeb2u);
}

TEST(CompactExpand, NonceLayoutIsInjective) {
  // Decoding the four words gives the fields back, for random fields in range.
  for (int trial = 0; trial < 100000; ++trial) {
    const u32 counter = static_cast<u32>(rng()()), key = static_cast<u32>(rng()());
    const u32 digit = static_cast<u32>(rng()()) & 0xFFFFu,
              stream = static_cast<u32>(rng()()) & 0xFFu;
    const u32 q = static_cast<u32>(rng()()) | 1u;
    const ce::Nonce nc = ce::nonce_words(counter, key, digit, stream, q);
    ASSERT_EQ(nc.w12, counter);
    ASSERT_EQ(nc.w13, key);
    ASSERT_EQ(nc.w14 >> 24, ce::kDomain);
    ASSERT_EQ((nc.w14 >> 16) & 0xFFu, stream);
    ASSERT_EQ(nc.w14 & 0xFFFFu, digit);
    ASSERT_EQ(nc.w15, q);
  }
  // Every (key, digit, prime, stream, block) of a bootparam_40-sized key set has its own input:
  // 80 keys x (4 digits + the spill pools) x 59 primes x 3 streams x 4 blocks.
  const std::vector<u32> primes = bootparam_40_primes();
  std::set<std::tuple<u32, u32, u32, u32>> seen;
  std::size_t count = 0;
  for (u32 key = 0; key < 80; ++key)
    for (const u32 digit : {0u, 1u, 2u, 3u, ce::kSpillDigit})
      for (const u32 q : primes)
        for (u32 stream = 0; stream < 3; ++stream)
          for (u32 b = 0; b < 4096; b += 1365) {
            const ce::Nonce nc = ce::nonce_words(b, key, digit, stream, q);
            seen.emplace(nc.w12, nc.w13, nc.w14, nc.w15);
            ++count;
          }
  EXPECT_EQ(seen.size(), count);
}

TEST(CompactExpand, DeterministicFromSeedKeyDigitPrime) {
  const Seed seed = random_seed();
  const u32 q = 1081212929;  // bootparam_40 main prime, 24% of 32-bit candidates rejected
  const u32 n = 4096;
  for (const u32 rounds : {8u, 12u, 20u}) {
    const auto a = expand(seed, rounds, 3, 3, q, n);
    EXPECT_EQ(a, expand(seed, rounds, 3, 3, q, n)) << rounds << " rounds";
    for (const u32 v : a)
      ASSERT_LT(v, q);
    // Any change of the inputs gives other words: seed, key index, prime, rounds; and the digits
    // of one limb differ from each other.
    Seed other = seed;
    other[7] ^= 1;
    EXPECT_NE(a, expand(other, rounds, 3, 3, q, n));
    EXPECT_NE(a, expand(seed, rounds, 4, 3, q, n));
    EXPECT_NE(a, expand(seed, rounds, 3, 3, 1074266113, n));
    EXPECT_NE(a, expand(seed, rounds == 8 ? 12 : 8, 3, 3, q, n));
    EXPECT_NE(digit_of(a, 0, n), digit_of(a, 1, n));
    EXPECT_NE(digit_of(a, 1, n), digit_of(a, 2, n));
    // The digits a lower level uses are a prefix: 2 digits are the first 2 of 3.
    const auto two = expand(seed, rounds, 3, 2, q, n);
    EXPECT_TRUE(std::equal(two.begin(), two.end(), a.begin()));
    // The first half of a longer limb is the shorter limb (blocks are independent).
    const auto longer = expand(seed, rounds, 3, 3, q, 2 * n);
    for (u32 k = 0; k < 3; ++k) {
      const auto d = digit_of(longer, k, 2 * n), short_d = digit_of(a, k, n);
      EXPECT_TRUE(std::equal(short_d.begin(), short_d.end(), d.begin())) << "digit " << k;
    }
  }
}

TEST(CompactExpand, TwoLimbsNeverShareKeystream) {
  // The primary words of different (key, digit, prime) limbs of one seed: no 32-bit word repeats
  // across them beyond what 2^32 birthday collisions allow, and no 16-word block repeats.
  const ce::Key key = ce::make_key(random_seed());
  std::set<std::array<u32, 16>> blocks;
  std::size_t count = 0;
  for (u32 k = 0; k < 4; ++k)
    for (u32 d = 0; d < 4; ++d)
      for (const u32 q : {1081212929u, 974258177u, 2147352577u})
        for (u32 b = 0; b < 64; ++b)
          for (u32 stream = 0; stream < 2; ++stream) {
            blocks.insert(block(8, key, ce::nonce_words(b, k, d, stream, q)));
            ++count;
          }
  EXPECT_EQ(blocks.size(), count);
}

TEST(CompactExpand, SamplerIsExactlyUniform) {
  // Lemire's sampler: every residue v has exactly floor(2^32 / q) accepted candidates. The
  // candidates mapping to v are the c with floor(c q / 2^32) = v, an interval of at most
  // ceil(2^32 / q) + 1 values; count the accepted ones for random v.
  for (const u32 q :
       {1081212929u, 974258177u, 485621761u, 2147352577u, 0x80000001u, 0xBFFFFFFFu, 30539777u}) {
    const ce::Sampler s = ce::make_sampler(q);
    EXPECT_EQ(s.t, static_cast<u32>((u64{1} << 32) % q));
    const u64 per = (u64{1} << 32) / q;
    for (int trial = 0; trial < 2000; ++trial) {
      const u64 v = rng()() % q;
      const u64 lo = (v << 32) / q;  // first c whose floor(c q / 2^32) can be v
      u64 accepted = 0;
      for (u64 c = lo; c < (u64{1} << 32) && c <= lo + per + 2; ++c) {
        u32 got = 0;
        if (ce::sample(s, static_cast<u32>(c), got) && got == v) ++accepted;
      }
      ASSERT_EQ(accepted, per) << "q " << q << " v " << v;
    }
  }
}

// Chi-square of `words` over `bins` equal-width bins of [0, q), and its p < 1e-9 threshold
// (Wilson-Hilferty), so that fresh random seeds do not make the test flaky.
std::pair<double, double> chi_square(const std::vector<u32>& words, u32 q, u32 bins) {
  std::vector<double> count(bins, 0), size(bins, 0);
  for (const u32 v : words)
    count[static_cast<u64>(v) * bins / q] += 1;
  for (u64 v0 = 0; v0 < bins; ++v0) {
    // Values v with floor(v bins / q) = v0: [ceil(v0 q / bins), ceil((v0 + 1) q / bins)).
    const u64 lo = (v0 * q + bins - 1) / bins, hi = ((v0 + 1) * q + bins - 1) / bins;
    size[v0] = static_cast<double>(hi - lo);
  }
  double chi = 0;
  for (u32 b = 0; b < bins; ++b) {
    const double e = static_cast<double>(words.size()) * size[b] / q;
    chi += (count[b] - e) * (count[b] - e) / e;
  }
  const double k = bins - 1, z = 6.0;  // z: 1e-9 upper tail
  const double limit = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  return {chi, limit};
}

TEST(CompactExpand, ChiSquareUniformPerPrimeOfBootparam40) {
  const Seed seed = random_seed();
  for (const u32 q : bootparam_40_primes()) {
    const auto a = expand(seed, 8, 0, 2, q, 1u << 15);
    const auto [chi, limit] = chi_square(a, q, 256);
    EXPECT_LT(chi, limit) << "q " << q;
    // The low byte too (q is not a multiple of 256, the bins differ in size by one value).
    std::vector<double> low(256, 0);
    for (const u32 v : a)
      low[v & 255u] += 1;
    double chi_low = 0;
    const double e = static_cast<double>(a.size()) / 256;
    for (const double c : low)
      chi_low += (c - e) * (c - e) / e;
    EXPECT_LT(chi_low, limit) << "q " << q << " low byte";
  }
}

TEST(CompactExpand, RejectionAndSpillPoolsOnAFrequentRejectionModulus) {
  // q = 3 * 2^30 - 1: 2^32 mod q = 2^30 + 1, a quarter of all candidates rejected. Reducing
  // candidates mod q without rejection would make [0, 2^30 + 1) twice as likely (1/2 instead of
  // 1/3 of the words).
  const u32 q = 3u * (1u << 30) - 1u;
  const ce::Key key = ce::make_key(random_seed());
  const ce::Sampler s = ce::make_sampler(q);
  ASSERT_EQ(s.t, (1u << 30) + 1u);
  const u32 n = 1u << 14, digits = 4;
  std::vector<u32> a(static_cast<std::size_t>(digits) * n);
  const u64 spills = ce::expand_limb(key, 8, 7, digits, q, n, a);
  // Rebuild every word from the definition, independently of expand_block's loop: per block, the
  // pool's accepted words in order, taken by the rejected positions in digit, then position order.
  u64 rejected = 0, low = 0, pool_blocks = 0;
  for (u32 b = 0; b < n / 16; ++b) {
    std::vector<u32> pool;
    u32 stream = 0;
    std::size_t used = 0;
    for (u32 k = 0; k < digits; ++k) {
      const auto primary = block(8, key, ce::nonce_words(b, 7, k, 0, q));
      for (u32 j = 0; j < 16; ++j) {
        u32 v = 0;
        if (!ce::sample(s, primary[j], v)) {
          ++rejected;
          while (used == pool.size()) {
            const auto sp = block(8, key, ce::nonce_words(b, 7, ce::kSpillDigit, ++stream, q));
            for (const u32 c : sp) {
              u32 w = 0;
              if (ce::sample(s, c, w)) pool.push_back(w);
            }
          }
          v = pool[used++];
        }
        ASSERT_EQ(a[static_cast<std::size_t>(k) * n + 16 * b + j], v)
            << "block " << b << " digit " << k << " word " << j;
        low += v < (1u << 30) + 1u ? 1 : 0;
      }
    }
    pool_blocks += stream;
  }
  EXPECT_EQ(spills, pool_blocks);
  const double words = static_cast<double>(a.size());
  EXPECT_NEAR(static_cast<double>(rejected) / words, 0.25, 0.02);
  // 64 positions per pool, 16 rejected on average, 12 accepted per spill block: 1-3 blocks.
  EXPECT_GT(static_cast<double>(spills) / (n / 16), 1.2);
  EXPECT_NEAR(static_cast<double>(low) / words, 1.0 / 3, 0.01);
  const auto [chi, limit] = chi_square(a, q, 256);
  EXPECT_LT(chi, limit);
}

TEST(CompactExpand, RejectsBadArguments) {
  const ce::Key key{};
  std::vector<u32> out(64);
  EXPECT_THROW(ce::expand_limb(key, 10, 0, 2, 1081212929, 32, out), ParameterError);
  EXPECT_THROW(ce::expand_limb(key, 8, 0, 2, 1081212928, 32, out), ParameterError);
  EXPECT_THROW(ce::expand_limb(key, 8, 0, 0, 1081212929, 32, out), ParameterError);
  EXPECT_THROW(ce::expand_limb(key, 8, 0, ce::kSpillDigit, 1081212929, 32, out), ParameterError);
  EXPECT_THROW(ce::expand_limb(key, 8, 0, 2, 1081212929, 20, out), ParameterError);
  EXPECT_THROW(ce::expand_limb(key, 8, 0, 3, 1081212929, 32, out), ParameterError);
  EXPECT_NO_THROW(ce::expand_limb(key, 8, 0, 2, 1081212929, 32, out));
}

}  // namespace
}  // namespace theo
