// BConv of the CPU backend against exact CRT arithmetic in GMP.

#include <gmp.h>

#include <algorithm>
#include <numeric>

#include "ring/bconv_test_util.h"

namespace theo::test {
namespace {

u32 mod_u32(const Mpz& x, u32 m) {
  return static_cast<u32>(mpz_fdiv_ui(x.v, m));  // fdiv: non-negative remainder
}

class BConvTest : public BConvFixture {
 protected:
  Basis random_basis(u32 size, const std::vector<PrimeId>& pool) {
    std::vector<PrimeId> ids = pool;
    std::shuffle(ids.begin(), ids.end(), rng_);
    ids.resize(size);
    return Basis(ids);
  }

  // Checks `y` = bconv(x) for every coefficient: the exact formula of the contract, bit for bit,
  // and independently that y = X + e*Q (mod every d_i) for one integer e with |e| <= |S|/2.
  void check(const Basis& src, const Basis& dst, const std::vector<u32>& x,
             const std::vector<u32>& y) {
    const u32 n = be_->n();
    std::vector<u32> s(src.size), d(dst.size);
    for (u32 j = 0; j < src.size; ++j)
      s[j] = be_->modulus(src[j]).q;
    for (u32 i = 0; i < dst.size; ++i)
      d[i] = be_->modulus(dst[i]).q;
    Mpz q_big, hat, hat_inv, t, sum, crt, e, r;
    mpz_set_ui(q_big.v, 1);
    for (u32 sj : s)
      mpz_mul_ui(q_big.v, q_big.v, sj);
    std::vector<Mpz> hats(src.size);
    std::vector<u32> hat_invs(src.size);
    for (u32 j = 0; j < src.size; ++j) {
      mpz_divexact_ui(hats[j].v, q_big.v, s[j]);
      mpz_set_ui(t.v, s[j]);
      ASSERT_NE(mpz_invert(hat_inv.v, hats[j].v, t.v), 0);
      hat_invs[j] = static_cast<u32>(mpz_get_ui(hat_inv.v));
    }
    const long half = static_cast<long>(src.size / 2);
    for (u32 c = 0; c < n; ++c) {
      mpz_set_ui(sum.v, 0);
      mpz_set_ui(crt.v, 0);
      for (u32 j = 0; j < src.size; ++j) {
        const u32 xj = x[j * n + c];
        const u32 tj = mul_mod_ref(xj, hat_invs[j], s[j]);
        const long centered = tj > s[j] / 2 ? static_cast<long>(tj) - s[j] : static_cast<long>(tj);
        mpz_mul_si(t.v, hats[j].v, centered);
        mpz_add(sum.v, sum.v, t.v);  // exact: sum_j t_j * Q/s_j
        mpz_addmul_ui(crt.v, hats[j].v, tj);
      }
      mpz_mod(crt.v, crt.v, q_big.v);  // X in [0, Q)
      for (u32 i = 0; i < dst.size; ++i)
        ASSERT_EQ(y[i * n + c], mod_u32(sum, d[i])) << "formula, coeff " << c << " dst " << i;

      // The bound |e| <= |S|/2 holds for the centered X in (-Q/2, Q/2]; for X in [0, Q), e lies
      // in [-ceil(|S|/2), ceil(|S|/2) - 1] instead.
      mpz_tdiv_q_2exp(r.v, q_big.v, 1);
      if (mpz_cmp(crt.v, r.v) > 0) mpz_sub(crt.v, crt.v, q_big.v);
      // Independent of the formula: some |e| <= |S|/2 must explain every output limb at once.
      bool found = false;
      for (long ev = -half; ev <= half && !found; ++ev) {
        mpz_mul_si(r.v, q_big.v, ev);
        mpz_add(r.v, r.v, crt.v);
        bool all = true;
        for (u32 i = 0; i < dst.size && all; ++i)
          all = y[i * n + c] == mod_u32(r, d[i]);
        found = all;
      }
      ASSERT_TRUE(found) << "no |e| <= " << half << " with y = X + eQ, coeff " << c;
      // And the formula's own e is integral and within the bound.
      mpz_sub(e.v, sum.v, crt.v);
      ASSERT_TRUE(mpz_divisible_p(e.v, q_big.v));
      mpz_divexact(e.v, e.v, q_big.v);
      ASSERT_LE(2 * mpz_get_si(e.v), static_cast<long>(src.size)) << "coeff " << c;
      ASSERT_GE(2 * mpz_get_si(e.v), -static_cast<long>(src.size)) << "coeff " << c;
    }
  }

  void run_case(const Basis& src, const Basis& dst, const std::vector<u32>& x) {
    SCOPED_TRACE("src " + to_string(src) + " dst " + to_string(dst));
    RnsPoly in = from_words(*be_, src, x);
    RnsPoly out = be_->make_poly(dst);
    const auto plan = be_->make_bconv(src, dst);
    be_->bconv(*plan, in.cref(), out.ref());
    const auto y = words(*be_, out);
    check(src, dst, x, y);
    expect_matmul_agrees(*plan, x, y);
  }
};

TEST_F(BConvTest, TableMatchesBigIntegers) {
  const Basis src{3, 7, 11, 0}, dst{1, 7, 20};
  const BConvTable t = make_bconv_table(be_->ring(), src, dst);
  Mpz q_big, hat, inv, m;
  mpz_set_ui(q_big.v, 1);
  for (u32 j = 0; j < src.size; ++j)
    mpz_mul_ui(q_big.v, q_big.v, be_->ring().primes[src[j]]);
  for (u32 j = 0; j < src.size; ++j) {
    const u32 sj = be_->ring().primes[src[j]];
    mpz_divexact_ui(hat.v, q_big.v, sj);
    mpz_set_ui(m.v, sj);
    mpz_invert(inv.v, hat.v, m.v);
    EXPECT_EQ(t.src_hat_inv[j], mpz_get_ui(inv.v));
    EXPECT_TRUE(t.src_inv.empty());
    for (u32 i = 0; i < dst.size; ++i)
      EXPECT_EQ(t.matrix[i * src.size + j], mod_u32(hat, be_->ring().primes[dst[i]]));
  }
}

TEST_F(BConvTest, ExactTableHoldsInverseAndModulus) {
  const Basis src{3, 7, 11, 0}, dst{1, 7, 20};
  const BConvTable t = make_bconv_table(be_->ring(), src, dst, true);
  ASSERT_TRUE(t.exact);
  Mpz q_big;
  mpz_set_ui(q_big.v, 1);
  for (u32 j = 0; j < src.size; ++j) {
    const u32 sj = be_->ring().primes[src[j]];
    mpz_mul_ui(q_big.v, q_big.v, sj);
    EXPECT_EQ(t.src_inv[j], 1.0 / sj);
  }
  for (u32 i = 0; i < dst.size; ++i)
    EXPECT_EQ(t.q_mod_dst[i], mod_u32(q_big, be_->ring().primes[dst[i]]));
}

TEST_F(BConvTest, RandomBasesOfSizeOneToTwentyFour) {
  std::vector<PrimeId> all(40);
  std::iota(all.begin(), all.end(), PrimeId{0});
  for (u32 round = 0; round < 14; ++round) {
    const u32 s_size = round < 4 ? round + 1 : 1 + uniform(24);
    const u32 d_size = round < 4 ? 24 - round : 1 + uniform(24);
    const Basis src = random_basis(s_size, all);
    Basis dst;
    if (round % 2 == 0) {
      // Disjoint from src.
      std::vector<PrimeId> rest;
      for (PrimeId id : all)
        if (src.find(id) < 0) rest.push_back(id);
      dst = random_basis(std::min<u32>(d_size, static_cast<u32>(rest.size())), rest);
    } else {
      dst = random_basis(d_size, all);  // overlaps src by chance, often
    }
    run_case(src, dst, random_words(*be_, src));
  }
}

// src primes contained in dst: BConv then reproduces x itself on those limbs.
TEST_F(BConvTest, OverlappingPrimesReproduceTheInput) {
  const Basis src{0, 1, 2, 3, 4}, dst{4, 9, 2, 30};
  const auto x = random_words(*be_, src);
  run_case(src, dst, x);
  RnsPoly in = from_words(*be_, src, x);
  RnsPoly out = be_->make_poly(dst);
  be_->bconv(*be_->make_bconv(src, dst), in.cref(), out.ref());
  const auto y = words(*be_, out);
  const u32 n = be_->n();
  for (u32 c = 0; c < n; ++c) {
    EXPECT_EQ(y[0 * n + c], x[4 * n + c]);
    EXPECT_EQ(y[2 * n + c], x[2 * n + c]);
  }
}

// Every t_j at its extreme +-(s_j - 1)/2 with one sign per coefficient, into the largest primes:
// the longest exact sums the lazy accumulation has to survive.
TEST_F(BConvTest, ExtremeCenteredTermsWithLargestPrimes) {
  std::vector<PrimeId> big;  // mixed_ring puts the primes just below 2^31 at ids 0, 3, 6, ...
  for (PrimeId id = 0; id < 40; id = static_cast<PrimeId>(id + 3))
    big.push_back(id);
  const Basis src(std::vector<PrimeId>(big.begin(), big.begin() + 7));
  std::vector<PrimeId> more;
  for (PrimeId id = 1; id < 40; ++id)
    if (src.find(id) < 0) more.push_back(id);
  std::vector<PrimeId> src24 = src.to_vector();
  src24.insert(src24.end(), more.begin(), more.begin() + 17);
  for (const Basis& s : {src, Basis(src24)}) {
    const Basis dst(std::vector<PrimeId>(big.begin() + 7, big.end()));
    const Basis d = s.size == 7 ? dst : Basis{big[7], big[8]};
    const BConvTable t = make_bconv_table(be_->ring(), s, d);
    const u32 n = be_->n();
    std::vector<u32> x(static_cast<std::size_t>(s.size) * n);
    for (u32 c = 0; c < n; ++c) {
      const bool positive = c % 2 == 0;
      for (u32 j = 0; j < s.size; ++j) {
        const u32 q = be_->modulus(s[j]).q;
        const u32 tj = positive ? (q - 1) / 2 : q - (q - 1) / 2;  // centered +-(q-1)/2
        // x_j = t_j * (Q/s_j) mod s_j, the inverse of the const-mult step.
        x[j * n + c] = mul_mod_ref(tj, inv_mod(t.src_hat_inv[j], q), q);
      }
    }
    run_case(s, d, x);
  }
}

TEST_F(BConvTest, LargerDegreeUsesEveryTile) {
  auto be = make_cpu_backend(mixed_ring(13, 12));
  const Basis src = Basis::range(0, 9), dst = Basis::range(9, 3);
  const auto x = random_words(*be, src);
  RnsPoly in = from_words(*be, src, x);
  RnsPoly out = be->make_poly(dst);
  be->bconv(*be->make_bconv(src, dst), in.cref(), out.ref());
  const auto y = words(*be, out);
  // Same data through a backend of degree 2^10 tile by tile is not possible; instead compare
  // against the single-threaded backend, then spot-check exactness with GMP below.
  auto serial = make_cpu_backend(be->ring(), 1);
  RnsPoly in1 = from_words(*serial, src, x);
  RnsPoly out1 = serial->make_poly(dst);
  serial->bconv(*serial->make_bconv(src, dst), in1.cref(), out1.ref());
  EXPECT_EQ(words(*serial, out1), y);
  const u32 n = be->n();
  Mpz q_big, hat, acc, tmp, m;
  mpz_set_ui(q_big.v, 1);
  for (u32 j = 0; j < src.size; ++j)
    mpz_mul_ui(q_big.v, q_big.v, be->modulus(src[j]).q);
  for (u32 c : {0u, 1u, 255u, 256u, 4095u, n - 1, uniform(n)}) {
    mpz_set_ui(acc.v, 0);
    for (u32 j = 0; j < src.size; ++j) {
      const u32 q = be->modulus(src[j]).q;
      mpz_divexact_ui(hat.v, q_big.v, q);
      mpz_set_ui(m.v, q);
      mpz_invert(tmp.v, hat.v, m.v);
      const u32 tj = mul_mod_ref(x[j * n + c], static_cast<u32>(mpz_get_ui(tmp.v)), q);
      mpz_mul_si(tmp.v, hat.v, tj > q / 2 ? static_cast<long>(tj) - q : static_cast<long>(tj));
      mpz_add(acc.v, acc.v, tmp.v);
    }
    for (u32 i = 0; i < dst.size; ++i)
      EXPECT_EQ(y[i * n + c], mod_u32(acc, be->modulus(dst[i]).q)) << "coeff " << c;
  }
}

}  // namespace
}  // namespace theo::test
