// Linear combinations and double hoisting (Q_l u P ciphertexts) against plaintext arithmetic.

#include <gtest/gtest.h>

#include "ckks_test_util.h"

namespace theo::test {
namespace {

constexpr u32 kLogN = 12;

// The plaintexts over Q_l u P (Evaluator::extend).
std::vector<ExtendedPlaintext> extended(const Evaluator& ev, const std::vector<Plaintext>& pts) {
  std::vector<const Plaintext*> ptrs;
  for (const Plaintext& p : pts)
    ptrs.push_back(&p);
  return ev.extend(ptrs);
}

class HoistingTest : public ::testing::Test {
 protected:
  static Env& env() {
    static Env e(generated_params(kLogN, 6));
    return e;
  }
};

TEST_F(HoistingTest, LinearCombinationAcrossLevelsMatchesPlaintext) {
  Env& e = env();
  const u32 slots = e.ctx->max_slots();
  const auto x = random_slots(slots), y = random_slots(slots), z = random_slots(slots);
  const Ciphertext cx = e.encrypt(x, 5), cy = e.encrypt(y, 4), cz = e.encrypt(z, 3);
  const Ciphertext* terms[] = {&cx, &cy, &cz};
  const double coeffs[] = {0.75, -1.5, 0.125};
  const long double delta = e.ctx->default_scale(3);
  const Ciphertext sum =
      e.evaluator.rescale(e.evaluator.linear_combination(terms, coeffs, 3, delta * delta));
  EXPECT_EQ(sum.level(), 2u);
  EXPECT_NEAR(static_cast<double>(sum.scale() / e.ctx->default_scale(2)), 1.0, 1e-9);
  std::vector<Cplx> want(slots);
  for (u32 i = 0; i < slots; ++i)
    want[i] = coeffs[0] * x[i] + coeffs[1] * y[i] + coeffs[2] * z[i];
  EXPECT_LT(report("linear_combination", kLogN, e.decrypt(sum), want), -18.0);
}

TEST_F(HoistingTest, LinearCombinationRejectsBadInput) {
  Env& e = env();
  const Ciphertext c = e.encrypt(random_slots(8), 2);
  const Ciphertext* terms[] = {&c};
  const double coeffs[] = {1.0, 2.0};
  EXPECT_THROW(e.evaluator.linear_combination(terms, std::span<const double>(coeffs, 2), 2, 1.0L),
               ParameterError);
  EXPECT_THROW(e.evaluator.linear_combination(terms, std::span<const double>(coeffs, 1), 3, 1.0L),
               LevelError);
}

// One pass over all products, bit-exact with a product and an addition per term.
TEST_F(HoistingTest, MultiplyPlainSumMatchesProductsAndAdditions) {
  Env& e = env();
  const u32 slots = e.ctx->max_slots(), level = 4;
  std::vector<Ciphertext> cts;
  std::vector<Plaintext> pts;
  std::vector<std::vector<Cplx>> xs, ds;
  for (int k = 0; k < 3; ++k) {
    xs.push_back(random_slots(slots));
    ds.push_back(random_slots(slots));
    cts.push_back(e.encrypt(xs.back(), level));
    pts.push_back(e.encoder.encode(ds.back(), level));
  }
  const Ciphertext* c[] = {&cts[0], &cts[1], &cts[2]};
  const Plaintext* p[] = {&pts[0], &pts[1], &pts[2]};
  const Ciphertext fused = e.evaluator.multiply_plain_sum(c, p);
  Ciphertext ref = e.evaluator.multiply_plain(cts[0], pts[0]);
  for (int k = 1; k < 3; ++k)
    e.evaluator.add_inplace(ref, e.evaluator.multiply_plain(cts[k], pts[k]));
  EXPECT_EQ(hash_ct(*e.ctx, fused), hash_ct(*e.ctx, ref));
  EXPECT_EQ(fused.level(), level);
  std::vector<Cplx> want(slots);
  for (u32 i = 0; i < slots; ++i)
    want[i] = xs[0][i] * ds[0][i] + xs[1][i] * ds[1][i] + xs[2][i] * ds[2][i];
  EXPECT_LT(report("multiply_plain_sum", kLogN, e.decrypt(e.evaluator.rescale(fused)), want),
            -18.0);
  // Bad input: counts, levels.
  EXPECT_THROW(e.evaluator.multiply_plain_sum(std::span<const Ciphertext* const>(c, 2),
                                              std::span<const Plaintext* const>(p, 3)),
               ParameterError);
  const Ciphertext low = e.encrypt(xs[0], level - 1);
  const Ciphertext* mixed[] = {&cts[0], &low};
  EXPECT_THROW(e.evaluator.multiply_plain_sum(mixed, std::span<const Plaintext* const>(p, 2)),
               LevelError);
}

TEST_F(HoistingTest, DoubleHoistedSumOfRotationsMatchesPlaintext) {
  Env& e = env();
  const u32 slots = e.ctx->max_slots();
  const std::vector<int> rots = {0, 1, 5, -3};
  const GaloisKeys keys = e.keygen.create_galois_keys(e.sk, rots);
  const auto x = random_slots(slots);
  const u32 level = 4;
  const Ciphertext ct = e.encrypt(x, level);
  // sum_r d_r (.) rot_r(x), then a giant rotation by 2, all in Q_l u P, one ModDown + rescale.
  std::vector<std::vector<Cplx>> diags;
  std::vector<Plaintext> pts;
  const long double cs = e.ctx->default_scale(level);
  for (std::size_t k = 0; k < rots.size(); ++k) {
    diags.push_back(random_slots(slots));
    pts.push_back(e.encoder.encode(diags.back(), level, cs));
  }
  const std::vector<ExtendedPlaintext> ext = extended(e.evaluator, pts);
  const std::vector<ExtendedCiphertext> babies =
      e.evaluator.rotate_hoisted_extended(ct, rots, keys);
  std::vector<const ExtendedCiphertext*> c_ptrs;
  std::vector<const ExtendedPlaintext*> e_ptrs;
  for (std::size_t k = 0; k < rots.size(); ++k) {
    c_ptrs.push_back(&babies[k]);
    e_ptrs.push_back(&ext[k]);
  }
  ExtendedCiphertext acc = e.evaluator.multiply_plain_sum(c_ptrs, e_ptrs);
  const Ciphertext down = e.evaluator.mod_down(std::move(acc));
  const int giant[] = {1};
  ExtendedCiphertext rotated =
      std::move(e.evaluator.rotate_hoisted_extended(down, giant, keys).front());
  const Ciphertext out = e.evaluator.mod_down_rescale(std::move(rotated));
  EXPECT_EQ(out.level(), level - 1);
  std::vector<Cplx> inner(slots, 0.0), want(slots);
  for (std::size_t k = 0; k < rots.size(); ++k)
    for (u32 i = 0; i < slots; ++i)
      inner[i] += diags[k][i] * x[(i + slots + rots[k]) % slots];
  for (u32 i = 0; i < slots; ++i)
    want[i] = inner[(i + 1) % slots];
  EXPECT_LT(report("double hoisting", kLogN, e.decrypt(out), want), -18.0);
  EXPECT_TRUE(acc.empty());  // consumed
  EXPECT_THROW(e.evaluator.mod_down(std::move(acc)), ContextError);
}

// Several giant-step sums over shared baby steps in one call give the words of one
// multiply_plain_sum per sum (terms in any order, some babies left out of some sums).
TEST_F(HoistingTest, MultiplyPlainSumsMatchesOneSumEach) {
  Env& e = env();
  const u32 slots = e.ctx->max_slots();
  const std::vector<int> rots = {0, 1, 5, -3};
  const GaloisKeys keys = e.keygen.create_galois_keys(e.sk, rots);
  const u32 level = 4;
  const Ciphertext ct = e.encrypt(random_slots(slots), level);
  std::vector<Plaintext> pts;
  for (int k = 0; k < 6; ++k)
    pts.push_back(e.encoder.encode(random_slots(slots), level, e.ctx->default_scale(level)));
  const std::vector<ExtendedPlaintext> ext = extended(e.evaluator, pts);
  const std::vector<ExtendedCiphertext> babies =
      e.evaluator.rotate_hoisted_extended(ct, rots, keys);
  using T = Evaluator::PlainTerm;
  const std::vector<std::vector<T>> terms = {{{0, &ext[0]}, {1, &ext[1]}, {3, &ext[2]}},
                                             {{2, &ext[3]}, {0, &ext[4]}},
                                             {{3, &ext[5]}, {1, &ext[0]}, {2, &ext[1]}}};
  const std::vector<ExtendedCiphertext> sums = e.evaluator.multiply_plain_sums(babies, terms);
  ASSERT_EQ(sums.size(), terms.size());
  for (std::size_t g = 0; g < terms.size(); ++g) {
    std::vector<const ExtendedCiphertext*> c;
    std::vector<const ExtendedPlaintext*> p;
    for (const T& t : terms[g]) {
      c.push_back(&babies[t.ct]);
      p.push_back(t.pt);
    }
    const ExtendedCiphertext one = e.evaluator.multiply_plain_sum(c, p);
    EXPECT_EQ(hash_poly(*e.ctx, sums[g].c0, hash_poly(*e.ctx, sums[g].c1)),
              hash_poly(*e.ctx, one.c0, hash_poly(*e.ctx, one.c1)))
        << "sum " << g;
    EXPECT_EQ(sums[g].scale, one.scale);
  }
  const std::vector<std::vector<T>> bad = {{{7, &ext[0]}}};
  EXPECT_THROW(e.evaluator.multiply_plain_sums(babies, bad), ParameterError);
}

}  // namespace
}  // namespace theo::test
