// 32-bit modular arithmetic (include/theo/math/modarith.h) against __int128 reference arithmetic:
// edge values and >= 10^6 fresh random values per prime (seed printed on failure).

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "theo/math/modarith.h"
#include "theo/math/primes.h"

namespace {

using namespace theo;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

constexpr int kRandomPerPrime = 1'000'000;

// Primes of every size class the library uses: tiny, ~2^20, ~2^25, ~2^30, and the largest NTT
// primes just below 2^31 (plus 2^31 - 1 itself, the largest allowed modulus, not NTT-friendly).
std::vector<u32> test_primes() {
  std::vector<u32> v = {3,        17,         65537,     786433,     1179649,    33292289,
                        30539777, 1073479681, 998244353, 2147352577, 2130706433, 2147483647u};
  for (u32 q : find_ntt_primes(16, 20, 2))
    v.push_back(q);
  for (u32 q : find_ntt_primes(16, 25, 2))
    v.push_back(q);
  for (u32 q : find_ntt_primes(16, 30, 2))
    v.push_back(q);
  for (u32 q : find_ntt_primes(10, 31, 3))
    v.push_back(q);  // largest below 2^31 for N = 2^10
  for (u32 q : find_ntt_primes(17, 31, 2))
    v.push_back(q);
  return v;
}

// A generator from a fresh seed, which the trace of every failure in its scope names.
struct SeededRng {
  static u64 fresh_seed() {
    std::random_device rd;
    return (static_cast<u64>(rd()) << 32) ^ rd();
  }
  const u64 seed = fresh_seed();
  const ::testing::ScopedTrace trace{__FILE__, __LINE__, "seed=" + std::to_string(seed)};
  std::mt19937_64 rng{seed};
};

// 2^-32 mod q, cached for the last q.
u64 inv_2_32(u32 q) {
  thread_local u32 last_q = 0;
  thread_local u64 last_inv = 0;
  if (q != last_q) {
    last_q = q;
    last_inv = inv_mod(static_cast<u32>((u64{1} << 32) % q), q);
  }
  return last_inv;
}

// x * 2^-32 mod q (canonical) by reference arithmetic.
u32 ref_redc(i128 x, u32 q) {
  const i128 inv2_32 = static_cast<i128>(inv_2_32(q));
  i128 r = (x % q) * inv2_32 % q;
  if (r < 0) r += q;
  return static_cast<u32>(r);
}

// Checks smr(x) against Cheddar Alg. 2's contract.
void check_smr(i64 x, const Modulus& m) {
  const i32 y = smr(x, m);
  ASSERT_GT(y, -static_cast<i64>(m.q)) << "x=" << x << " q=" << m.q;
  ASSERT_LT(y, static_cast<i64>(m.q)) << "x=" << x << " q=" << m.q;
  // y * 2^32 == x (mod q)
  const i128 d = static_cast<i128>(y) * (i128{1} << 32) - x;
  ASSERT_EQ(d % m.q, 0) << "x=" << x << " q=" << m.q << " y=" << y;
  ASSERT_EQ(canon(y, m.q), ref_redc(x, m.q));
}

TEST(ModArith, ModulusConstants) {
  for (u32 q : test_primes()) {
    const Modulus m = make_modulus(q);
    EXPECT_EQ(m.q, q);
    EXPECT_EQ(static_cast<u32>(m.qinv) * q, 1u) << q;
    EXPECT_EQ(m.r_mod, (u64{1} << 32) % q) << q;
    EXPECT_EQ(m.r2_mod, static_cast<u32>((static_cast<u128>(1) << 64) % q)) << q;
  }
  // Usable at compile time.
  static_assert(make_modulus(786433).r_mod == (u64{1} << 32) % 786433);
  static_assert(inverse_mod_2_32(2147483647u) * 2147483647u == 1u);
  static_assert(pow_mod(3, 786432, 786433) == 1);
  static_assert(mul_mod_ref(786432, 786432, 786433) == 1);
}

TEST(ModArith, MulhiS32) {
  const i32 vals[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MIN + 1, 123456789, -987654321};
  for (i32 a : vals)
    for (i32 b : vals)
      EXPECT_EQ(mulhi_s32(a, b), static_cast<i32>((static_cast<i64>(a) * b) >> 32))
          << a << " " << b;
}

TEST(ModArith, SmrEdgeValues) {
  for (u32 q : test_primes()) {
    const Modulus m = make_modulus(q);
    const i64 Q = q, B = static_cast<i64>(q) << 31;  // the input bound q * 2^31
    const i64 edges[] = {0,
                         1,
                         -1,
                         Q - 1,
                         -(Q - 1),
                         Q,
                         -Q,
                         Q + 1,
                         (Q - 1) * (Q - 1),
                         -(Q - 1) * (Q - 1),
                         B - 1,
                         -B,
                         -B + 1,
                         B - 2,
                         B / 2,
                         -B / 2,
                         (i64{1} << 32) - 1,
                         i64{1} << 32,
                         -(i64{1} << 32),
                         (i64{1} << 32) + 1,
                         B - (i64{1} << 32),
                         -B + (i64{1} << 32) - 1};
    for (i64 x : edges) {
      if (x < -B || x >= B) continue;
      SCOPED_TRACE("q=" + std::to_string(q) + " x=" + std::to_string(x));
      check_smr(x, m);
    }
    // Every low word near the extremes, to hit z = mullo(x_lo, m) = INT32_MIN / INT32_MAX.
    for (i64 k = 0; k < 64; ++k) {
      check_smr(B - 1 - k, m);
      check_smr(-B + k, m);
    }
  }
}

TEST(ModArith, SmrRandom) {
  SeededRng gen;
  for (u32 q : test_primes()) {
    const Modulus m = make_modulus(q);
    const i64 B = static_cast<i64>(q) << 31;
    std::uniform_int_distribution<i64> dist(-B, B - 1);
    for (int i = 0; i < kRandomPerPrime; ++i) {
      const i64 x = dist(gen.rng);
      const i32 y = smr(x, m);
      if (!(y > -static_cast<i64>(q) && y < static_cast<i64>(q)) ||
          (static_cast<i128>(y) * (i128{1} << 32) - x) % q != 0) {
        FAIL() << "seed=" << gen.seed << " q=" << q << " x=" << x << " smr=" << y;
      }
    }
  }
}

TEST(ModArith, MultiplicationRandom) {
  SeededRng gen;
  for (u32 q : test_primes()) {
    const Modulus m = make_modulus(q);
    std::uniform_int_distribution<u32> res(0, q - 1);
    std::uniform_int_distribution<u32> word(0, UINT32_MAX);
    const i64 half = static_cast<i64>(q) - 1;
    std::uniform_int_distribution<i64> signed_res(-half, half);
    for (int i = 0; i < kRandomPerPrime; ++i) {
      const u32 a = res(gen.rng), b = res(gen.rng);
      const u32 ab = static_cast<u32>(static_cast<u64>(a) * b % q);
      // mul_mod, mul_mod_ref
      const u32 mm = mul_mod(a, b, m);
      if (mm != ab || mul_mod_ref(a, b, q) != ab)
        FAIL() << "seed=" << gen.seed << " q=" << q << " mul_mod(" << a << "," << b << ")=" << mm
               << " want " << ab;
      // mont_mul: a*b*2^-32, canonical; also with signed operands (|ab| < q^2 < q*2^31)
      const u32 mo = mont_mul(a, b, m);
      if (mo != ref_redc(static_cast<i128>(a) * b, q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " mont_mul(" << a << "," << b << ")=" << mo;
      const i64 sa = signed_res(gen.rng), sb = signed_res(gen.rng);
      const u32 ms = mont_mul(sa, sb, m);
      if (ms >= q || ms != ref_redc(static_cast<i128>(sa) * sb, q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " mont_mul(" << sa << "," << sb
               << ")=" << ms;
      // Constant multiplication as the library does it: smr(a * mont(c)) == a * c.
      const u32 cm = to_mont(b, m);
      if (cm != static_cast<u32>((static_cast<u64>(b) << 32) % q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " to_mont(" << b << ")=" << cm;
      if (canon(smr(static_cast<i64>(a) * cm, m), q) != ab)
        FAIL() << "seed=" << gen.seed << " q=" << q << " smr(a*mont(c)) a=" << a << " c=" << b;
      if (from_mont(cm, m) != b || from_mont(a, m) != ref_redc(a, q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " from_mont a=" << a << " c=" << b;
      // Shoup: any u32 input, constant w < q.
      const u32 x = word(gen.rng);
      const ShoupConst sc = make_shoup(b, q);
      const u32 want = static_cast<u32>(static_cast<u64>(x) % q * b % q);
      const u32 lazy = shoup_mul_lazy(x, sc, q);
      if (shoup_mul(x, sc, q) != want || lazy >= 2 * static_cast<u64>(q) || lazy % q != want)
        FAIL() << "seed=" << gen.seed << " q=" << q << " shoup x=" << x << " w=" << b;
      // add / sub / neg
      if (add_mod(a, b, q) != static_cast<u32>((static_cast<u64>(a) + b) % q) ||
          sub_mod(a, b, q) != static_cast<u32>((static_cast<u64>(a) + q - b) % q) ||
          neg_mod(a, q) != static_cast<u32>((q - a) % q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " add/sub/neg a=" << a << " b=" << b;
    }
  }
}

TEST(ModArith, EdgeOperands) {
  for (u32 q : test_primes()) {
    const Modulus m = make_modulus(q);
    const u32 vals[] = {0, 1, 2, q / 2, q / 2 + 1, q - 2, q - 1};
    for (u32 a : vals) {
      for (u32 b : vals) {
        SCOPED_TRACE("q=" + std::to_string(q) + " a=" + std::to_string(a) +
                     " b=" + std::to_string(b));
        const u32 ab = static_cast<u32>(static_cast<u64>(a) * b % q);
        EXPECT_EQ(mul_mod(a, b, m), ab);
        EXPECT_EQ(mont_mul(a, b, m), ref_redc(static_cast<i128>(a) * b, q));
        EXPECT_EQ(shoup_mul(a, make_shoup(b, q), q), ab);
        EXPECT_EQ(shoup_mul(UINT32_MAX, make_shoup(b, q), q),
                  static_cast<u32>(u64{UINT32_MAX} % q * b % q));
        EXPECT_EQ(add_mod(a, b, q), static_cast<u32>((static_cast<u64>(a) + b) % q));
        EXPECT_EQ(sub_mod(a, b, q), static_cast<u32>((static_cast<u64>(a) + q - b) % q));
      }
      EXPECT_EQ(neg_mod(a, q), (q - a) % q);
      EXPECT_EQ(from_mont(to_mont(a, m), m), a);
      EXPECT_EQ(canon(static_cast<i32>(a), q), a);
      if (a) {
        EXPECT_EQ(canon(-static_cast<i32>(a), q), q - a);
      }
      EXPECT_EQ(reduce_once(a, q), a);
      EXPECT_EQ(reduce_once(a + q, q), a);
      const i32 c = center(a, q);
      EXPECT_TRUE(2 * static_cast<i64>(c) > -static_cast<i64>(q) &&
                  2 * static_cast<i64>(c) <= static_cast<i64>(q))
          << c;
      EXPECT_EQ(canon(c, q), a);
    }
    EXPECT_EQ(to_mont(1, m), m.r_mod);
    EXPECT_EQ(mul_mod(m.r_mod, 1, m), m.r_mod);
  }
}

TEST(ModArith, PowAndInverse) {
  SeededRng gen;
  auto pow_ref = [](u32 b, u64 e, u32 q) {
    u128 r = 1 % q, x = b % q;
    for (; e; e >>= 1, x = x * x % q)
      if (e & 1) r = r * x % q;
    return static_cast<u32>(r);
  };
  for (u32 q : test_primes()) {
    EXPECT_EQ(pow_mod(0, 0, q), 1u);
    EXPECT_EQ(pow_mod(0, 5, q), 0u);
    EXPECT_EQ(pow_mod(q - 1, 2, q), 1u);
    EXPECT_EQ(inv_mod(0, q), 0u);
    EXPECT_EQ(inv_mod(1, q), 1u);
    EXPECT_EQ(inv_mod(q - 1, q), q - 1);
    std::uniform_int_distribution<u32> res(1, q - 1);
    for (int i = 0; i < 20000; ++i) {
      const u32 a = res(gen.rng);
      const u64 e = gen.rng();
      if (pow_mod(a, e, q) != pow_ref(a, e, q))
        FAIL() << "seed=" << gen.seed << " q=" << q << " a=" << a << " e=" << e;
      if (pow_mod(a, q - 1, q) != 1) FAIL() << "Fermat q=" << q << " a=" << a;
      const u32 inv = inv_mod(a, q);
      if (static_cast<u64>(a) * inv % q != 1)
        FAIL() << "seed=" << gen.seed << " q=" << q << " inv_mod(" << a << ")";
      if (pow_mod(a + q, e, q) != pow_mod(a, e, q))
        FAIL() << "unreduced base q=" << q << " a=" << a;
    }
  }
}

}  // namespace
