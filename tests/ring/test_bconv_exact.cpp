// Exact BConv (plans made with exact = true): the output is the exact centered lift of x mod Q,
// checked against GMP, plus the contract's double-precision formula bit for bit.

#include <gmp.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ring/bconv_test_util.h"

namespace theo::test {
namespace {

class BConvExactTest : public BConvFixture {
 protected:
  // Converts `x` (words over src) exactly and checks every output word against the centered CRT
  // lift of x computed in GMP.
  void run_case(const Basis& src, const Basis& dst, const std::vector<u32>& x) {
    SCOPED_TRACE("src " + to_string(src) + " dst " + to_string(dst));
    const u32 n = be_->n();
    RnsPoly in = from_words(*be_, src, x);
    RnsPoly out = be_->make_poly(dst);
    const auto plan = be_->make_bconv(src, dst, /*exact=*/true);
    ASSERT_TRUE(plan->table().exact);
    be_->bconv(*plan, in.cref(), out.ref());
    const auto y = words(*be_, out);

    Mpz q_big, half, crt, hat, t;
    mpz_set_ui(q_big.v, 1);
    for (u32 j = 0; j < src.size; ++j)
      mpz_mul_ui(q_big.v, q_big.v, be_->modulus(src[j]).q);
    mpz_tdiv_q_2exp(half.v, q_big.v, 1);
    const auto& table = plan->table();
    for (u32 c = 0; c < n; ++c) {
      mpz_set_ui(crt.v, 0);
      double acc = 0.0;
      for (u32 j = 0; j < src.size; ++j) {
        const u32 sj = be_->modulus(src[j]).q;
        const u32 tj = mul_mod_ref(x[j * n + c], table.src_hat_inv[j], sj);
        mpz_divexact_ui(hat.v, q_big.v, sj);
        mpz_addmul_ui(crt.v, hat.v, tj);
        const double centered = tj > sj / 2 ? static_cast<double>(tj) - sj : tj;
        acc = acc + centered * table.src_inv[j];
      }
      mpz_mod(crt.v, crt.v, q_big.v);
      if (mpz_cmp(crt.v, half.v) > 0) mpz_sub(crt.v, crt.v, q_big.v);  // X in (-Q/2, Q/2]
      // Away from a tie (|frac(acc)| near 1/2) the formula's v is the true rounding, so the output
      // is X itself modulo every destination prime.
      const double frac = acc - std::floor(acc);
      if (std::abs(frac - 0.5) < 1e-9) continue;
      for (u32 i = 0; i < dst.size; ++i) {
        const u32 di = be_->modulus(dst[i]).q;
        ASSERT_EQ(y[i * n + c], static_cast<u32>(mpz_fdiv_ui(crt.v, di)))
            << "coeff " << c << " dst limb " << i;
      }
    }

    expect_matmul_agrees(*plan, x, y);
  }
};

TEST_F(BConvExactTest, RandomInputsGiveTheCenteredLift) {
  std::vector<PrimeId> all(40);
  std::iota(all.begin(), all.end(), PrimeId{0});
  for (u32 round = 0; round < 10; ++round) {
    std::shuffle(all.begin(), all.end(), rng_);
    const u32 s_size = 1 + uniform(16);
    const u32 d_size = 1 + uniform(20);
    const Basis src(std::vector<PrimeId>(all.begin(), all.begin() + s_size));
    const Basis dst(std::vector<PrimeId>(all.begin() + s_size, all.begin() + s_size + d_size));
    run_case(src, dst, random_words(*be_, src));
  }
}

// Small signed values (as after a ModDown's rounding) come out exactly, with no e*Q term.
TEST_F(BConvExactTest, SmallValuesAreReproducedExactly) {
  const Basis src{0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33};
  const Basis dst{1, 2, 4, 5};
  const u32 n = be_->n();
  std::vector<i64> value(n);
  std::vector<u32> x(static_cast<std::size_t>(src.size) * n);
  for (u32 c = 0; c < n; ++c) {
    value[c] = static_cast<i64>(uniform(1u << 30)) - (i64{1} << 29);
    for (u32 j = 0; j < src.size; ++j) {
      const i64 q = be_->modulus(src[j]).q;
      x[j * n + c] = static_cast<u32>(((value[c] % q) + q) % q);
    }
  }
  run_case(src, dst, x);
  RnsPoly in = from_words(*be_, src, x);
  RnsPoly out = be_->make_poly(dst);
  be_->bconv(*be_->make_bconv(src, dst, true), in.cref(), out.ref());
  const auto y = words(*be_, out);
  for (u32 i = 0; i < dst.size; ++i) {
    const i64 d = be_->modulus(dst[i]).q;
    for (u32 c = 0; c < n; ++c)
      ASSERT_EQ(y[i * n + c], static_cast<u32>(((value[c] % d) + d) % d));
  }
}

}  // namespace
}  // namespace theo::test
