// CrtReconstructor against straightforward GMP computations, on fresh random inputs.

#include <gmp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmp_test_util.h"
#include "theo/errors.h"
#include "theo/math/bigint.h"

namespace theo {
namespace {

using Z = test::Mpz;
using Q = test::Mpq;

// Random source for inputs; the seed is fresh per run and printed on failure.
class BigintTest : public ::testing::Test {
 protected:
  BigintTest() : seed_(std::random_device{}()), rng_(seed_) {
    gmp_randinit_mt(state_);
    gmp_randseed_ui(state_, seed_);
  }
  ~BigintTest() override { gmp_randclear(state_); }
  void SetUp() override { std::cout << "[ seed     ] " << seed_ << "\n"; }

  // `count` distinct random primes of exactly `bits` bits (via mpz_nextprime).
  std::vector<u64> random_primes(unsigned count, unsigned bits) {
    std::vector<u64> out;
    Z p;
    while (out.size() < count) {
      mpz_urandomb(p.v, state_, bits - 1);
      mpz_setbit(p.v, bits - 1);
      mpz_nextprime(p.v, p.v);
      if (mpz_sizeinbase(p.v, 2) != bits) continue;
      const u64 q = mpz_get_ui(p.v);
      if (std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
    }
    return out;
  }

  std::vector<u64> random_residues(const std::vector<u64>& primes) {
    std::vector<u64> r;
    for (u64 q : primes)
      r.push_back(std::uniform_int_distribution<u64>(0, q - 1)(rng_));
    return r;
  }

  void expect_random_residues_reconstruct(unsigned count, unsigned bits);

  unsigned long seed_;
  std::mt19937_64 rng_;
  gmp_randstate_t state_;
};

void product(const std::vector<u64>& primes, mpz_t q) {
  mpz_set_ui(q, 1);
  for (u64 p : primes)
    mpz_mul_ui(q, q, p);
}

// Primes, their reconstructor and their product Q computed apart from it (the reference).
struct Moduli {
  explicit Moduli(std::vector<u64> p) : primes(std::move(p)), crt(primes) { product(primes, q.v); }
  std::vector<u64> primes;
  CrtReconstructor crt;
  Z q;
};

// Reference: x satisfies x = r_i mod q_i for all i and 0 <= x < Q.
void expect_is_crt_solution(const mpz_t x, const std::vector<u64>& primes,
                            const std::vector<u64>& residues) {
  Z q;
  product(primes, q.v);
  ASSERT_GE(mpz_sgn(x), 0);
  ASSERT_LT(mpz_cmp(x, q.v), 0);
  for (std::size_t i = 0; i < primes.size(); ++i) {
    ASSERT_EQ(mpz_fdiv_ui(x, primes[i]), residues[i] % primes[i]) << "limb " << i;
  }
}

// 50 random residue vectors over `count` random primes of `bits` bits reconstruct to their CRT
// solution.
void BigintTest::expect_random_residues_reconstruct(unsigned count, unsigned bits) {
  SCOPED_TRACE(std::to_string(count) + " primes of " + std::to_string(bits) + " bits");
  const auto primes = random_primes(count, bits);
  CrtReconstructor crt(primes);
  Z x;
  for (int trial = 0; trial < 50; ++trial) {
    const auto r = random_residues(primes);
    crt.reconstruct(r, x.v);
    expect_is_crt_solution(x.v, primes, r);
  }
}

TEST_F(BigintTest, ModulusIsProduct) {
  Moduli moduli(random_primes(20, 31));
  auto& [primes, crt, q] = moduli;
  EXPECT_EQ(mpz_cmp(crt.modulus(), q.v), 0);
  EXPECT_EQ(crt.size(), primes.size());
  std::vector<char> buf(mpz_sizeinbase(q.v, 10) + 2);
  mpz_get_str(buf.data(), 10, q.v);
  EXPECT_EQ(crt.modulus_string(), std::string(buf.data()));
  EXPECT_NEAR(crt.log2_modulus(), static_cast<double>(mpz_sizeinbase(q.v, 2)), 1.0);
}

TEST_F(BigintTest, RandomResiduesReconstruct) {
  for (unsigned count : {1u, 2u, 5u, 30u, 60u})
    expect_random_residues_reconstruct(count, 31);
}

TEST_F(BigintTest, RoundTripFromRandomInteger) {
  Moduli moduli(random_primes(60, 31));
  auto& [primes, crt, q] = moduli;
  Z x, y;
  for (int trial = 0; trial < 50; ++trial) {
    mpz_urandomm(x.v, state_, q.v);
    std::vector<u64> r64;
    std::vector<u32> r32;
    for (u64 p : primes) {
      r64.push_back(mpz_fdiv_ui(x.v, p));
      r32.push_back(static_cast<u32>(r64.back()));
    }
    crt.reconstruct(r64, y.v);
    EXPECT_EQ(mpz_cmp(x.v, y.v), 0);
    crt.reconstruct(r32, y.v);
    EXPECT_EQ(mpz_cmp(x.v, y.v), 0);
  }
}

TEST_F(BigintTest, SixtyFourBitModuli) {
  expect_random_residues_reconstruct(8, 61);
}

TEST_F(BigintTest, UnreducedResiduesAreReduced) {
  const auto primes = random_primes(4, 31);
  CrtReconstructor crt(primes);
  auto r = random_residues(primes);
  std::vector<u64> shifted = r;
  for (std::size_t i = 0; i < r.size(); ++i)
    shifted[i] += 3 * primes[i];
  Z a, b;
  crt.reconstruct(r, a.v);
  crt.reconstruct(shifted, b.v);
  EXPECT_EQ(mpz_cmp(a.v, b.v), 0);
}

TEST_F(BigintTest, CenteredMatchesDefinition) {
  Moduli moduli(random_primes(30, 31));
  auto& [primes, crt, q] = moduli;
  Z half, x, c, expect;
  mpz_fdiv_q_2exp(half.v, q.v, 1);
  for (int trial = 0; trial < 100; ++trial) {
    const auto r = random_residues(primes);
    crt.reconstruct(r, x.v);
    crt.reconstruct_centered(r, c.v);
    mpz_set(expect.v, x.v);
    if (mpz_cmp(x.v, half.v) > 0) mpz_sub(expect.v, x.v, q.v);
    EXPECT_EQ(mpz_cmp(c.v, expect.v), 0);
    // In (-Q/2, Q/2]: 2c in (-Q, Q].
    mpz_mul_2exp(expect.v, c.v, 1);
    EXPECT_LE(mpz_cmp(expect.v, q.v), 0);
    mpz_neg(expect.v, expect.v);
    EXPECT_LT(mpz_cmp(expect.v, q.v), 0);
  }
}

TEST_F(BigintTest, EdgeCases) {
  Moduli moduli(random_primes(60, 31));
  auto& [primes, crt, q] = moduli;
  Z x;

  std::vector<u64> zero(primes.size(), 0);
  crt.reconstruct(zero, x.v);
  EXPECT_EQ(mpz_sgn(x.v), 0);
  crt.reconstruct_centered(zero, x.v);
  EXPECT_EQ(mpz_sgn(x.v), 0);
  EXPECT_EQ(crt.centered_to_long_double(zero, 1024.0L), 0.0L);

  // Q - 1 and its centered form -1.
  std::vector<u64> minus_one;
  for (u64 p : primes)
    minus_one.push_back(p - 1);
  crt.reconstruct(minus_one, x.v);
  mpz_add_ui(x.v, x.v, 1);
  EXPECT_EQ(mpz_cmp(x.v, q.v), 0);
  crt.reconstruct_centered(minus_one, x.v);
  EXPECT_EQ(mpz_cmp_si(x.v, -1), 0);
  EXPECT_EQ(crt.centered_to_long_double(minus_one, 4.0L), -0.25L);

  // The boundary: floor(Q/2) stays positive, floor(Q/2) + 1 becomes negative (Q odd).
  Z half, y;
  mpz_fdiv_q_2exp(half.v, q.v, 1);
  for (int delta : {0, 1}) {
    mpz_add_ui(y.v, half.v, static_cast<unsigned long>(delta));
    std::vector<u64> r;
    for (u64 p : primes)
      r.push_back(mpz_fdiv_ui(y.v, p));
    crt.reconstruct_centered(r, x.v);
    if (delta == 0) {
      EXPECT_EQ(mpz_cmp(x.v, half.v), 0);
    } else {
      mpz_sub(y.v, y.v, q.v);
      EXPECT_EQ(mpz_cmp(x.v, y.v), 0);
      EXPECT_LT(mpz_sgn(x.v), 0);
    }
  }
}

TEST_F(BigintTest, SinglePrime) {
  const std::vector<u64> primes{2147483647u};  // 2^31 - 1
  CrtReconstructor crt(primes);
  Z x;
  const std::vector<u64> r{123456789u};
  crt.reconstruct(r, x.v);
  EXPECT_EQ(mpz_get_ui(x.v), 123456789u);
  const std::vector<u64> big{2147483646u};
  crt.reconstruct_centered(big, x.v);
  EXPECT_EQ(mpz_get_si(x.v), -1);
  const std::vector<u32> r32{1073741823u};  // floor(q/2): stays positive
  crt.reconstruct_centered(r32, x.v);
  EXPECT_EQ(mpz_get_si(x.v), 1073741823);
}

TEST_F(BigintTest, InvalidInputsThrow) {
  EXPECT_THROW(CrtReconstructor(std::vector<u64>{}), ParameterError);
  EXPECT_THROW(CrtReconstructor(std::vector<u64>{7, 11, 7}), ParameterError);
  EXPECT_THROW(CrtReconstructor(std::vector<u64>{6, 9}), ParameterError);
  EXPECT_THROW(CrtReconstructor(std::vector<u64>{1}), ParameterError);
  CrtReconstructor crt(std::vector<u64>{7, 11});
  Z x;
  EXPECT_THROW(crt.reconstruct(std::vector<u64>{1}, x.v), ParameterError);
  EXPECT_THROW(crt.centered_to_long_double(std::vector<u64>{1, 2}, 0.0L), ParameterError);
  EXPECT_THROW(crt.centered_to_long_double(std::vector<u64>{1, 2},
                                           std::numeric_limits<long double>::infinity()),
               ParameterError);
}

TEST_F(BigintTest, MoveKeepsTables) {
  const auto primes = random_primes(5, 31);
  CrtReconstructor a(primes);
  CrtReconstructor b(std::move(a));
  const auto r = random_residues(primes);
  Z x;
  b.reconstruct(r, x.v);
  expect_is_crt_solution(x.v, primes, r);
}

// ---- conversion to long double ------------------------------------------------------------------

// v as an exact rational.
void to_mpq(long double v, mpq_t out) {
  int e = 0;
  const long double f = std::frexp(std::fabs(v), &e);
  constexpr int kDigits = std::numeric_limits<long double>::digits;
  long double m = std::ldexp(f, kDigits);  // integer
  Z z;
  for (int k = (kDigits + 31) / 32; k >= 0; --k) {
    const long double scale = std::ldexp(1.0L, 32 * k);
    const long double chunk = std::floor(m / scale);
    mpz_mul_2exp(z.v, z.v, 32);
    mpz_add_ui(z.v, z.v, static_cast<unsigned long>(chunk));
    m -= chunk * scale;
  }
  if (v < 0) mpz_neg(z.v, z.v);
  mpq_set_z(out, z.v);
  const int shift = e - kDigits;
  if (shift >= 0) {
    mpq_mul_2exp(out, out, static_cast<mp_bitcnt_t>(shift));
  } else {
    mpq_div_2exp(out, out, static_cast<mp_bitcnt_t>(-shift));
  }
}

// |x / d - got| <= ulp(got) / 2, checked exactly.
void expect_correctly_rounded(const mpz_t x, long double d, long double got) {
  ASSERT_TRUE(std::isfinite(got));
  Q exact, dq, gq, err, half_ulp;
  mpq_set_z(exact.v, x);
  to_mpq(d, dq.v);
  mpq_div(exact.v, exact.v, dq.v);
  to_mpq(got, gq.v);
  mpq_sub(err.v, exact.v, gq.v);
  mpq_abs(err.v, err.v);
  int e = 0;
  std::frexp(got, &e);
  constexpr int kDigits = std::numeric_limits<long double>::digits;
  mpq_set_ui(half_ulp.v, 1, 1);
  const int shift = e - kDigits - 1;
  if (shift >= 0) {
    mpq_mul_2exp(half_ulp.v, half_ulp.v, static_cast<mp_bitcnt_t>(shift));
  } else {
    mpq_div_2exp(half_ulp.v, half_ulp.v, static_cast<mp_bitcnt_t>(-shift));
  }
  EXPECT_LE(mpq_cmp(err.v, half_ulp.v), 0);
  // Sign agrees.
  EXPECT_EQ(mpz_sgn(x) * (d < 0 ? -1 : 1), got < 0 ? -1 : 1);
}

TEST_F(BigintTest, CenteredToLongDoubleHugeValues) {
  // 50 primes of 31 bits: Q ~ 2^1550, so centered values reach ~2^1549.
  const auto primes = random_primes(50, 31);
  CrtReconstructor crt(primes);
  Z c;
  for (long double d : {1.0L, 0x1p40L, 0x1p40L * 1.0000123L, 3.0L, 0x1p1500L, -7.5L}) {
    for (int trial = 0; trial < 40; ++trial) {
      const auto r = random_residues(primes);
      crt.reconstruct_centered(r, c.v);
      const long double got = crt.centered_to_long_double(r, d);
      expect_correctly_rounded(c.v, d, got);
    }
  }
}

TEST_F(BigintTest, CenteredToLongDoubleSmallValuesAreExact) {
  // x = a small signed message m, embedded mod Q: the result is m / d exactly when representable.
  Moduli moduli(random_primes(30, 31));
  auto& [primes, crt, q] = moduli;
  std::uniform_int_distribution<i64> dist(-(i64{1} << 52), i64{1} << 52);
  for (int trial = 0; trial < 200; ++trial) {
    const i64 m = dist(rng_);
    std::vector<u64> r;
    for (u64 p : primes) {
      const i64 v = m % static_cast<i64>(p);
      r.push_back(static_cast<u64>(v < 0 ? v + static_cast<i64>(p) : v));
    }
    EXPECT_EQ(crt.centered_to_long_double(r, 0x1p30L), static_cast<long double>(m) / 0x1p30L);
  }
}

TEST_F(BigintTest, RoundsTiesToEven) {
  if (std::numeric_limits<long double>::digits != 64) GTEST_SKIP() << "x87 long double only";
  Z x("18446744073709551617");  // 2^64 + 1: a tie between 2^64 and 2^64 + 2
  EXPECT_EQ(mpz_div_to_long_double(x.v, 1.0L), 0x1p64L);
  Z y("18446744073709551619");  // 2^64 + 3: tie, rounds to 2^64 + 4 (even mantissa)
  EXPECT_EQ(mpz_div_to_long_double(y.v, 1.0L), 0x1p64L + 4.0L);
  Z z("-18446744073709551621");  // -(2^64 + 5): tie, rounds to -(2^64 + 4)
  EXPECT_EQ(mpz_div_to_long_double(z.v, 1.0L), -(0x1p64L + 4.0L));
  Z w("36893488147419103233");  // 2^65 + 1: below the tie, rounds down to 2^65
  EXPECT_EQ(mpz_div_to_long_double(w.v, 1.0L), 0x1p65L);
}

TEST_F(BigintTest, RandomLargeDivisionIsCorrectlyRounded) {
  Z x;
  std::uniform_real_distribution<double> frac(1.0, 2.0);
  std::uniform_int_distribution<int> exps(-200, 1400);
  for (int trial = 0; trial < 500; ++trial) {
    const auto bits = static_cast<mp_bitcnt_t>(1 + trial * 3);
    mpz_urandomb(x.v, state_, bits);
    if (trial % 2) mpz_neg(x.v, x.v);
    const long double d = std::ldexp(static_cast<long double>(frac(rng_)), exps(rng_));
    if (mpz_sgn(x.v) == 0) continue;
    expect_correctly_rounded(x.v, d, mpz_div_to_long_double(x.v, d));
  }
}

}  // namespace
}  // namespace theo
