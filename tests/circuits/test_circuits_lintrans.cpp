// Linear transforms (BSGS, hoisted and min-keys) and the factored homomorphic DFT, against the
// plaintext matrix product.

#include <bit>
#include <random>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

DiagonalMatrix random_matrix(u32 slots, const std::vector<u32>& diags) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  DiagonalMatrix m;
  m.slots = slots;
  for (u32 k : diags) {
    auto& d = m.diagonals[k % slots];
    d.resize(slots);
    for (auto& x : d)
      x = Cplx(u(rng), u(rng)) * 0.25;
  }
  return m;
}

TEST(HomomorphicDft, FactorsMatchTheSpecialFft) {
  for (u32 log_slots : {3u, 6u}) {
    const u32 n = 1u << log_slots;
    const auto u = random_slots(n);
    for (u32 levels = 1; levels <= log_slots; ++levels) {
      // SlotToCoeff on bit-reversed coefficients = decoding.
      std::vector<Cplx> z = bit_reverse(u);
      for (const auto& m : slot_to_coeff_matrices(n, levels, 1.0))
        z = m.apply(z);
      EXPECT_LT(max_abs_error(z, special_dft(u)), 1e-12);
      // CoeffToSlot inverts it (up to the bit reversal).
      std::vector<Cplx> back = special_dft(u);
      for (const auto& m : coeff_to_slot_matrices(n, levels, 1.0))
        back = m.apply(back);
      EXPECT_LT(max_abs_error(bit_reverse(back), u), 1e-12);
    }
  }
}

class LinTrans : public SharedEnvSuite<12, 4> {
 protected:
  void run(const char* name, u32 slots, const std::vector<u32>& diags, bool min_keys) {
    Env& e = *env_;
    const DiagonalMatrix m = random_matrix(slots, diags);
    const u32 level = e.ctx->max_level();
    const LinearTransform lt(e.encoder, m, level, std::nullopt, {0, min_keys, std::nullopt});
    const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, lt.rotations());
    const auto x = random_slots(slots);
    const Ciphertext out = lt.evaluate(e.evaluator, e.encrypt(x, level), gk);
    EXPECT_EQ(out.level(), level - 1);
    const double b = bits(e.decrypt(out), m.apply(x));
    print_bits(name, b);
    EXPECT_GT(b, 20);
  }
};

TEST_F(LinTrans, DenseBandFullSlots) {
  std::vector<u32> d;
  for (u32 k = 0; k < 9; ++k)
    d.push_back(k);
  for (u32 k = 1; k < 8; ++k)
    d.push_back(2048 - k);
  run("16 diagonals, 2048 slots, BSGS hoisted", 2048, d, false);
}

TEST_F(LinTrans, StridedSparseSlots) {
  run("strided diagonals, 64 slots", 64, {0, 4, 8, 60, 56, 12, 32}, false);
}

TEST_F(LinTrans, MinKeys) {
  run("16 diagonals, 256 slots, min keys", 256, {0, 1, 2, 3, 5, 7, 11, 250, 255, 128}, true);
}

TEST_F(LinTrans, HomomorphicDftRoundTrip) {
  Env& e = *env_;
  const u32 n = 256, levels = 2;
  const u32 top = e.ctx->max_level();
  std::vector<LinearTransform> lts;
  const auto cts = coeff_to_slot_matrices(n, levels, 1.0);
  const auto stc = slot_to_coeff_matrices(n, levels, 1.0);
  for (u32 i = 0; i < levels; ++i)
    lts.emplace_back(e.encoder, cts[i], top - i);
  for (u32 i = 0; i < levels; ++i)
    lts.emplace_back(e.encoder, stc[i], top - levels - i);
  std::vector<int> rots;
  for (const auto& lt : lts)
    for (int r : lt.rotations())
      rots.push_back(r);
  const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, rots);
  const auto z = random_slots(n);
  Ciphertext ct = e.encrypt(z, top);
  for (u32 i = 0; i < levels; ++i)
    ct = lts[i].evaluate(e.evaluator, ct, gk);
  std::vector<Cplx> u = e.decrypt(ct);
  // CoeffToSlot output holds the bit-reversed coefficients of z's encoding.
  const double bc = bits(special_dft(bit_reverse(u)), z);
  print_bits("CoeffToSlot (2 levels, 256 slots)", bc);
  EXPECT_GT(bc, 20);
  for (u32 i = levels; i < 2 * levels; ++i)
    ct = lts[i].evaluate(e.evaluator, ct, gk);
  const double b = bits(e.decrypt(ct), z);
  print_bits("CoeffToSlot + SlotToCoeff round trip", b);
  EXPECT_GT(b, 20);
}

TEST(Pow2Steps, SignedPowersOfTwoSumToTheRotation) {
  constexpr u32 kSlots = 1u << 12;
  for (i64 r = -300; r < static_cast<i64>(kSlots) + 300; r += 7) {
    const std::vector<int> steps = pow2_steps(r, kSlots);
    i64 sum = 0;
    for (const int s : steps) {
      ASSERT_TRUE(std::has_single_bit(static_cast<u32>(s < 0 ? -s : s))) << s;
      ASSERT_LE(2 * (s < 0 ? -s : s), static_cast<int>(kSlots));
      sum += s;
    }
    const i64 want = ((r % kSlots) + kSlots) % kSlots;
    EXPECT_EQ(((sum % kSlots) + kSlots) % kSlots, want) << r;
    EXPECT_LE(steps.size(), static_cast<std::size_t>(std::popcount(static_cast<u32>(want))));
  }
  // 2^k - 1 costs two rotations, and a right rotation by a power of two one.
  EXPECT_EQ(pow2_steps(1023, kSlots).size(), 2u);
  EXPECT_EQ(pow2_steps(-16, kSlots), std::vector<int>{-16});
}

}  // namespace
}  // namespace theo::test
