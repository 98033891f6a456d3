// The encrypted-ML building blocks against their plaintext computations, in bits: rotate-and-sum
// (radix 2 and hoisted radix 4/8, both directions), the merged reduction of several ciphertexts,
// masked low-degree polynomials, packed matrix-vector / matrix-matrix products, and the
// least-squares activation fits (HELR's published coefficients).

#include <random>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

constexpr u32 kSlots = 2048;  // N = 2^12, full slots

std::vector<Cplx> rotl(const std::vector<Cplx>& v, i64 r) {
  const i64 n = static_cast<i64>(v.size());
  std::vector<Cplx> out(v.size());
  for (i64 p = 0; p < n; ++p)
    out[p] = v[((p + r) % n + n) % n];
  return out;
}

std::vector<Cplx> real_slots(std::size_t n, double lo = -1, double hi = 1) {
  static std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<Cplx> v(n);
  for (auto& x : v)
    x = u(rng);
  return v;
}

struct Fixture {
  Env e{generated_params(12, 6)};
  RelinKey rlk = e.keygen.create_relin_key(e.sk);
  GaloisKeys keys(std::vector<int> rots) { return e.keygen.create_galois_keys(e.sk, rots, true); }
};

TEST(MlBlocks, RotateSumBothDirectionsAndRadices) {
  Fixture f;
  const auto z = random_slots(kSlots);
  for (const u32 radix : {2u, 4u, 8u}) {
    for (const int stride : {1, 16, -1, -64}) {
      const u32 count = 32;
      auto rots = rotate_sum_rotations(stride, count, kSlots, radix);
      GaloisKeys gk = f.keys(rots);
      const Ciphertext out = rotate_sum(f.e.evaluator, f.e.encrypt(z, 3), stride, count, gk, radix);
      std::vector<Cplx> want(kSlots, 0);
      for (u32 t = 0; t < count; ++t) {
        const auto r = rotl(z, static_cast<i64>(t) * stride);
        for (u32 p = 0; p < kSlots; ++p)
          want[p] += r[p];
      }
      EXPECT_EQ(out.level(), 3u);
      const double b = bits(f.e.decrypt(out), want);
      print_bits(("rotate_sum radix " + std::to_string(radix) + " stride " + std::to_string(stride))
                     .c_str(),
                 b);
      EXPECT_GE(b, 20);
    }
  }
  EXPECT_THROW((void)rotate_sum_rotations(1, 3, kSlots), ParameterError);
}

// Four ciphertexts of 16 rows x 128 columns, each reduced along its rows; merged: 4 * 2 + 3 + 5
// rotations instead of 4 * 7, the sums of ciphertext c at slot 128 a + 32 c.
void merged_inner_reduction(u32 post_radix) {
  Fixture f;
  const u32 width = 128, cts = 4, share = width / cts;
  std::vector<std::vector<Cplx>> in;
  std::vector<Ciphertext> enc;
  for (u32 c = 0; c < cts; ++c) {
    in.push_back(random_slots(kSlots));
    enc.push_back(f.e.encrypt(in.back(), 3));
  }
  std::vector<std::vector<std::complex<double>>> masks(cts,
                                                       std::vector<std::complex<double>>(kSlots));
  std::vector<int> shifts;
  const double factor = 0.5;
  for (u32 c = 0; c < cts; ++c) {
    for (u32 p = 0; p < kSlots; ++p)
      masks[c][p] = (p % width) < share ? factor : 0.0;
    shifts.push_back(-static_cast<int>(share * c));
  }
  const MergedReduction red(f.e.encoder, 3, kSlots, {64, 32}, masks, shifts, {16, 8, 4, 2, 1},
                            post_radix);
  GaloisKeys gk = f.keys(red.rotations());
  std::vector<const Ciphertext*> ptrs;
  for (const auto& c : enc)
    ptrs.push_back(&c);
  const Ciphertext out = red.apply(f.e.evaluator, ptrs, gk);
  EXPECT_EQ(out.level(), 2u);
  const auto got = f.e.decrypt(out);
  double err = 0;
  for (u32 a = 0; a < kSlots / width; ++a) {
    for (u32 c = 0; c < cts; ++c) {
      Cplx want = 0;
      for (u32 j = 0; j < width; ++j)
        want += in[c][a * width + j];
      err = std::max(err, std::abs(got[a * width + share * c] - factor * want));
    }
  }
  const double b = -std::log2(err);
  print_bits("merged reduction (4 cts, 128-wide rows)", b);
  EXPECT_GE(b, 18);
  EXPECT_THROW(red.apply(f.e.evaluator, std::span<const Ciphertext* const>(ptrs.data(), 2), gk),
               ParameterError);
}

TEST(MlBlocks, MergedInnerReduction) {
  merged_inner_reduction(2);
}
TEST(MlBlocks, MergedInnerReductionHoistedRadix8) {
  merged_inner_reduction(8);
}

TEST(MlBlocks, MaskedPolynomialMatchesPlaintext) {
  Fixture f;
  for (const u32 degree : {3u, 5u, 7u}) {
    // sigma(-8 x) on x in [-1, 1], masked to every 4th slot.
    const MonomialSeries p = sigmoid_least_squares(degree, 8).composed_with_scale(-8);
    std::vector<std::complex<double>> mask(kSlots);
    for (u32 i = 0; i < kSlots; ++i)
      mask[i] = (i % 4 == 0) ? 1.0 : 0.0;
    const MaskedPolynomial mp(f.e.encoder, p, mask, 5, kSlots);
    EXPECT_EQ(mp.depth(), degree == 3 ? 2u : 3u);
    const auto x = real_slots(kSlots);
    const Ciphertext out = mp.evaluate(f.e.evaluator, f.rlk, f.e.encrypt(x, 5));
    EXPECT_EQ(out.level(), 5 - mp.depth());
    std::vector<Cplx> want(kSlots);
    for (u32 i = 0; i < kSlots; ++i)
      want[i] = mask[i] * p(x[i].real());
    const double b = bits(f.e.decrypt(out), want);
    print_bits(("masked sigmoid degree " + std::to_string(degree)).c_str(), b);
    EXPECT_GE(b, 20);
  }
  EXPECT_THROW(MaskedPolynomial(f.e.encoder, MonomialSeries{{0.5, 1, 0, 1}}, {}, 1, kSlots),
               LevelError);
  EXPECT_THROW(MaskedPolynomial(f.e.encoder, MonomialSeries{{0.5, NAN}}, {}, 3, kSlots),
               ParameterError);
}

TEST(MlBlocks, PackedMatVecAndMatMat) {
  Fixture f;
  const u32 rows = 10, cols = 24;  // blocks of 32: 64 vectors at once
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> m(rows * cols);
  for (auto& v : m)
    v = u(rng);
  const PackedMatMul mm(f.e.encoder, m, rows, cols, 4, kSlots);
  EXPECT_EQ(mm.block(), 32u);
  GaloisKeys gk = f.keys(mm.rotations());
  std::vector<Cplx> x(kSlots, 0);
  for (u32 b = 0; b < kSlots / 32; ++b)
    for (u32 j = 0; j < cols; ++j)
      x[b * 32 + j] = u(rng);
  const Ciphertext out = mm.evaluate(f.e.evaluator, f.e.encrypt(x, 4), gk);
  EXPECT_EQ(out.level(), 3u);
  std::vector<Cplx> want(kSlots, 0);
  for (u32 b = 0; b < kSlots / 32; ++b)
    for (u32 i = 0; i < rows; ++i)
      for (u32 j = 0; j < cols; ++j)
        want[b * 32 + i] += m[i * cols + j] * x[b * 32 + j];
  const double b = bits(f.e.decrypt(out), want);
  print_bits("packed 10x24 matrix x 64 vectors", b);
  EXPECT_GE(b, 18);
  // The plaintext reference agrees with the direct product.
  EXPECT_LT(max_abs_error(mm.apply(x), want), 1e-12);
  std::vector<double> bad = m;
  bad[5] = NAN;
  EXPECT_THROW(PackedMatMul(f.e.encoder, bad, rows, cols, 4, kSlots), ParameterError);
  EXPECT_THROW(PackedMatMul(f.e.encoder, m, rows, cols + 1, 4, kSlots), ParameterError);
}

TEST(MlBlocks, LeastSquaresSigmoidMatchesHelr) {
  // Kim et al. 2018 / HELR: sigma3 on [-8, 8] = 0.5 + 0.15012 x - 0.001593 x^3.
  const MonomialSeries s3 = sigmoid_least_squares(3, 8);
  EXPECT_NEAR(s3.coeffs[0], 0.5, 1e-12);
  EXPECT_NEAR(s3.coeffs[1], 0.15012, 1e-5);
  EXPECT_NEAR(s3.coeffs[3], -0.001593, 1e-6);
  const MonomialSeries s7 = sigmoid_least_squares(7, 8);
  EXPECT_NEAR(s7.coeffs[1], 0.216895, 1e-5);
  EXPECT_NEAR(s7.coeffs[7], -1.19653e-6, 1e-9);
  const MonomialSeries s16 = sigmoid_least_squares(3, 16);  // HELR's MNIST choice
  EXPECT_NEAR(s16.coeffs[1], 0.0842675, 1e-6);
  EXPECT_NEAR(s16.coeffs[3], -0.000247362, 1e-8);
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  EXPECT_NEAR(max_error(sig, s3, -8, 8), 0.114, 2e-3);
  // The Chebyshev form is the same polynomial.
  const ChebyshevSeries c = s7.to_chebyshev(-8, 8);
  for (double x = -8; x <= 8; x += 0.37)
    EXPECT_NEAR(c(x), s7(x), 1e-12);
  EXPECT_THROW((void)sigmoid_least_squares(3, -1), ParameterError);
}

}  // namespace
}  // namespace theo::test
