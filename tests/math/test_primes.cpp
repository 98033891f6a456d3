// Primality, NTT prime search, primitive roots and the canonical NTT root.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "theo/errors.h"
#include "theo/math/modarith.h"
#include "theo/math/primes.h"

namespace {

using namespace theo;

TEST(Primes, MatchesSieveBelow2To22) {
  const u32 limit = 1u << 22;
  std::vector<bool> composite(limit, false);
  composite[0] = composite[1] = true;
  for (u32 i = 2; static_cast<u64>(i) * i < limit; ++i)
    if (!composite[i])
      for (u32 j = i * i; j < limit; j += i)
        composite[j] = true;
  for (u32 n = 0; n < limit; ++n)
    ASSERT_EQ(is_prime(n), !composite[n]) << n;
}

TEST(Primes, KnownPrimes) {
  const u64 primes[] = {
      2147483647ull,           4294967291ull,        4294967311ull,
      1000000007ull,           998244353ull,         2305843009213693951ull,  // 2^61-1
      18446744073709551557ull,  // largest 64-bit prime
      1125899908022273ull,     36028797019488257ull, 72057594038321153ull,
      4611686018427387847ull,   // largest prime below 2^62
      9223372036854775783ull};  // largest prime below 2^63
  for (u64 p : primes)
    EXPECT_TRUE(is_prime(p)) << p;
}

TEST(Primes, KnownComposites) {
  const u64 composites[] = {
      // Carmichael numbers
      561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 825265, 321197185, 5394826801ull,
      232250619601ull, 9746347772161ull, 1436697831295441ull,
      // strong pseudoprimes to the first k prime bases
      2047, 3277, 4033, 4681, 8321, 1373653, 25326001, 3215031751ull, 2152302898747ull,
      3474749660383ull, 341550071728321ull, 3825123056546413051ull,
      // strong pseudoprime to bases 2, 7, 61 (the bound of that base set)
      4759123141ull,
      // products of large primes, squares, Fermat numbers
      4294967297ull, 18446744030759878681ull /* (2^32-5)^2 */, 1000000016000000063ull,
      2147483647ull * 2147483629ull, 9223372036854775807ull, 18446744073709551615ull,
      // 2^31-ish odd composites next to anchor primes
      2147352579ull, 1073479683ull};
  for (u64 n : composites)
    EXPECT_FALSE(is_prime(n)) << n;
}

TEST(Primes, RandomAgainstTrialDivision) {
  std::random_device rd;
  const u64 seed = (static_cast<u64>(rd()) << 32) ^ rd();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto trial = [](u64 n) {
    if (n < 2) return false;
    for (u64 d = 2; d * d <= n; ++d)
      if (n % d == 0) return false;
    return true;
  };
  for (int i = 0; i < 300; ++i) {
    const u64 n = (rng() >> 24) | 1;  // < 2^40, odd
    ASSERT_EQ(is_prime(n), trial(n)) << "seed=" << seed << " n=" << n;
  }
  // Products of two random primes around 2^32 are composite.
  for (int i = 0; i < 200; ++i) {
    u64 a = (rng() >> 32) | 1, b = (rng() >> 32) | 1;
    while (!is_prime(a))
      a += 2;
    while (!is_prime(b))
      b += 2;
    ASSERT_FALSE(is_prime(a * b)) << "seed=" << seed << " " << a << "*" << b;
  }
}

TEST(Primes, FindNttPrimes) {
  for (u32 log_n = 10; log_n <= 17; ++log_n) {
    const u64 two_n = u64{2} << log_n;
    for (u32 k = 20; k <= 31; ++k) {
      const u32 count = 6;
      const auto ps = find_ntt_primes(log_n, k, count);
      ASSERT_EQ(ps.size(), count);
      const u64 c = u64{1} << k;
      std::set<u32> seen;
      u64 prev_d = 0;
      for (u32 q : ps) {
        EXPECT_TRUE(is_prime(q)) << q;
        EXPECT_EQ((q - 1) % two_n, 0u) << q << " log_n=" << log_n;
        EXPECT_LT(q, 1u << 31);
        EXPECT_TRUE(seen.insert(q).second) << "duplicate " << q;
        const u64 d = q > c ? q - c : c - q;
        EXPECT_GE(d, prev_d) << "not ordered by closeness to 2^" << k;
        prev_d = d;
      }
      // No closer NTT prime was skipped.
      const u64 lo = c > prev_d ? c - prev_d : 0;
      const u64 hi = std::min<u64>(c + prev_d + 1, u64{1} << 31);
      for (u32 q : ntt_primes_in_range(log_n, lo, hi)) {
        const u64 d = q > c ? q - c : c - q;
        if (d < prev_d) {
          EXPECT_TRUE(seen.count(q)) << "skipped " << q << " near 2^" << k << " log_n=" << log_n;
        }
      }
      // exclude
      const auto ex = find_ntt_primes(log_n, k, 3, {ps[0], ps[2]});
      EXPECT_EQ(ex[0], ps[1]);
      EXPECT_EQ(ex[1], ps[3]);
      EXPECT_EQ(ex[2], ps[4]);
    }
  }
  EXPECT_THROW(find_ntt_primes(17, 31, 100000), ParameterError);
  EXPECT_THROW(find_ntt_primes(9, 30, 1), ParameterError);
  EXPECT_THROW(find_ntt_primes(18, 30, 1), ParameterError);
  EXPECT_THROW(find_ntt_primes(16, 19, 1), ParameterError);
  EXPECT_THROW(find_ntt_primes(16, 32, 1), ParameterError);
  // The anchor files' auxiliary primes are the 12 NTT primes just below 2^31 for N = 2^16.
  const std::vector<u32> aux = {2147352577, 2146959361, 2146041857, 2144468993,
                                2142502913, 2135818241, 2135162881, 2135031809,
                                2134638593, 2132279297, 2130706433, 2130444289};
  EXPECT_EQ(find_ntt_primes(16, 31, 12), aux);
}

TEST(Primes, NttPrimesInRange) {
  for (u32 log_n : {10u, 13u, 16u}) {
    const u64 two_n = u64{2} << log_n;
    const u64 lo = (u64{1} << 25) - 12345, hi = (u64{1} << 25) + 4000000;
    std::vector<u32> brute;
    for (u64 v = lo; v < hi; ++v)
      if (v % two_n == 1 && is_prime(v)) brute.push_back(static_cast<u32>(v));
    EXPECT_EQ(ntt_primes_in_range(log_n, lo, hi), brute);
  }
  EXPECT_TRUE(ntt_primes_in_range(16, 100, 100).empty());
  EXPECT_EQ(ntt_primes_in_range(16, 0, 800000), (std::vector<u32>{786433}));
  EXPECT_THROW(ntt_primes_in_range(16, 0, (u64{1} << 32) + 1), ParameterError);
}

TEST(Primes, PrimitiveRoot) {
  for (u32 q :
       {3u, 5u, 7u, 17u, 65537u, 786433u, 998244353u, 2147352577u, 2147483647u, 33292289u}) {
    const u32 g = primitive_root(q);
    // g has order q - 1 ...
    std::vector<u32> factors;
    u32 m = q - 1;
    for (u32 p = 2; static_cast<u64>(p) * p <= m; ++p)
      if (m % p == 0) {
        factors.push_back(p);
        while (m % p == 0)
          m /= p;
      }
    if (m > 1) factors.push_back(m);
    for (u32 p : factors)
      EXPECT_NE(pow_mod(g, (q - 1) / p, q), 1u) << q;
    // ... and is the smallest generator.
    for (u32 h = 2; h < g; ++h) {
      bool gen = true;
      for (u32 p : factors)
        gen &= pow_mod(h, (q - 1) / p, q) != 1;
      EXPECT_FALSE(gen) << h << " is a smaller generator mod " << q;
    }
  }
  EXPECT_EQ(primitive_root(998244353u), 3u);
  EXPECT_EQ(primitive_root(2147483647u), 7u);
  EXPECT_THROW(primitive_root(1073479683u), ParameterError);
}

TEST(Primes, NttRootHasOrderExactly2N) {
  for (u32 log_n = 10; log_n <= 17; ++log_n) {
    const u32 n = 1u << log_n;
    for (u32 q : find_ntt_primes(log_n, 30, 4)) {
      const u32 psi = ntt_root(q, n);
      EXPECT_EQ(psi, pow_mod(primitive_root(q), (q - 1) / (2 * static_cast<u64>(n)), q));
      EXPECT_EQ(pow_mod(psi, 2 * static_cast<u64>(n), q), 1u);
      EXPECT_EQ(pow_mod(psi, n, q), q - 1) << "order of psi is not exactly 2N";
      EXPECT_EQ(ntt_root(q, n), psi);  // deterministic
    }
  }
  // Anchor primes (N = 2^16).
  for (u32 q : {30539777u, 37224449u, 974258177u, 485621761u, 2147352577u, 786433u}) {
    const u32 psi = ntt_root(q, 1u << 16);
    EXPECT_EQ(pow_mod(psi, 1u << 16, q), q - 1) << q;
  }
  EXPECT_THROW(ntt_root(1073479681u, 1u << 20), ParameterError);  // q != 1 mod 2^21
  EXPECT_THROW(ntt_root(1073479681u, 3), ParameterError);
}

}  // namespace
