// The composite minimax sign and AppReLU: the Remez fit (equioscillation, error against a dense
// sample), the composite's error and depth, and both evaluated on encrypted data (N = 2^12,
// insecure test parameters) against the plaintext composite and against sign / ReLU.

#include <cmath>
#include <random>

#include "circuits/circuits_test_util.h"
#include "theo/circuits/composite_sign.h"

namespace theo::test {
namespace {

double log2_of(double e) {
  return e > 0 ? std::log2(e) : -1000.0;
}

TEST(CompositeSign, RemezEquioscillates) {
  for (const u32 degree : {7u, 15u, 27u}) {
    const double lower = std::ldexp(1.0, -9);
    const OddMinimaxFit f = minimax_odd_sign(degree, lower);
    // A dense independent sample: the maximum is the equioscillation level, reached at both ends.
    double dense = 0;
    for (u32 i = 0; i <= 200000; ++i) {
      const double x = lower * std::pow(1 / lower, i / 200000.0);
      dense = std::max(dense, std::abs(f.series(x) - 1));
    }
    std::printf("[fit] degree %2u on [2^-9, 1]: error 2^%.3f after %u exchanges\n", degree,
                log2_of(f.error), f.iterations);
    EXPECT_NEAR(dense, f.error, 1e-7 * f.error);
    EXPECT_NEAR(std::abs(f.series(lower) - 1), f.error, 1e-6 * f.error);
    EXPECT_NEAR(std::abs(f.series(1.0) - 1), f.error, 1e-6 * f.error);
    // n + 1 alternations: count sign changes of p - 1 between points where |p - 1| ~ error.
    int alternations = 0, last = 0;
    for (u32 i = 0; i <= 200000; ++i) {
      const double x = lower + (1 - lower) * i / 200000.0;
      const double e = f.series(x) - 1;
      if (std::abs(e) < 0.999 * f.error) continue;
      const int s = e > 0 ? 1 : -1;
      if (s != last) ++alternations;
      last = s;
    }
    EXPECT_GE(alternations, static_cast<int>((degree + 1) / 2 + 1)) << "degree " << degree;
    for (u32 k = 0; k <= degree; k += 2)
      EXPECT_EQ(f.series.coeffs[k], 0.0);  // odd
  }
}

TEST(CompositeSign, Alpha13ErrorAndDepth) {
  const CompositeSign s = CompositeSign::alpha13();
  EXPECT_EQ(s.name(), "15-15-27");
  EXPECT_EQ(s.depth(), 13u);
  EXPECT_EQ(s.component_depths(), (std::vector<u32>{4, 4, 5}));
  const double eps = std::ldexp(1.0, -9);
  const double err = s.max_error(eps, 1.0);
  std::printf("[sign] 15-15-27, eps 2^-9: stage errors %.5f %.5f 2^%.2f; measured 2^%.2f\n",
              s.stage_errors()[0], s.stage_errors()[1], log2_of(s.stage_errors()[2]), log2_of(err));
  EXPECT_LE(err, std::ldexp(1.0, -13));
  EXPECT_NEAR(err, s.error(), 0.05 * s.error());
  // Every component stays within [-1 - tau, 1 + tau] on [-1, 1] (no blow-up between stages).
  for (u32 i = 0; i <= 4000; ++i) {
    const double x = -1 + 2.0 * i / 4000;
    EXPECT_LE(std::abs(s(x)), 1 + s.error() + 1e-12);
  }
  // The same depth with a larger last degree is more precise (the "same or better").
  const CompositeSign s31 = CompositeSign::fit({15, 15, 31}, eps);
  EXPECT_EQ(s31.depth(), 13u);
  EXPECT_LT(s31.max_error(eps, 1.0), err);
  // At eps = 2^-13 no depth-13 composite is precise (see composite_sign.h).
  const CompositeSign wide = CompositeSign::fit({15, 15, 27}, std::ldexp(1.0, -13));
  std::printf("[sign] 15-15-27, eps 2^-13: error 2^%.2f\n", log2_of(wide.error()));
  EXPECT_GT(wide.error(), 0.25);
}

TEST(CompositeSign, AppReluError) {
  const CompositeSign s = CompositeSign::alpha13();
  for (const double bound : {1.0, 8.0, 20.0}) {
    const double e = s.relu_max_error(bound);
    std::printf("[relu] AppReLU 15-15-27 on [-%g, %g]: max error %.3g = B 2^%.2f\n", bound, bound,
                e, log2_of(e / bound));
    EXPECT_LE(e, bound * std::ldexp(1.0, -12));
  }
  EXPECT_EQ(s.relu(0.5), 0.5 * (1 + s(0.5)) / 2);
}

TEST(CompositeSign, RejectsBadArguments) {
  EXPECT_THROW(minimax_odd_sign(8, 0.1), ParameterError);
  EXPECT_THROW(minimax_odd_sign(65, 0.1), ParameterError);
  EXPECT_THROW(minimax_odd_sign(7, 0.0), ParameterError);
  EXPECT_THROW(minimax_odd_sign(7, 1.0), ParameterError);
  EXPECT_THROW(CompositeSign::fit({}, 0.01), ParameterError);
  EXPECT_THROW(CompositeSign::fit({15, 4}, 0.01), ParameterError);
  EXPECT_THROW(CompositeSign::fit({15}, -1), ParameterError);
}

// Sign and AppReLU on encrypted slots: 14 levels (13 for the sign, 1 for the product).
TEST(CompositeSign, EncryptedMatchesPlaintext) {
  Env e(generated_params(12, 14));
  const CompositeSign s = CompositeSign::alpha13();
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator poly(e.evaluator, rlk);
  const CompositeSignEvaluator cse(poly, e.evaluator, rlk, s);
  std::mt19937_64 rng{std::random_device{}()};
  const double eps = s.eps();
  // Half the slots in the hard region eps <= |x| <= 8 eps, the rest anywhere in [-1, 1].
  std::uniform_real_distribution<double> u(-1, 1), near(eps, 8 * eps);
  const u32 slots = e.ctx->max_slots();
  std::vector<double> x(slots);
  for (u32 i = 0; i < slots; ++i)
    x[i] = i % 2 ? u(rng) : (i % 4 ? 1 : -1) * near(rng);
  const Ciphertext ct = e.encryptor.encrypt(e.encoder.encode(std::span<const double>(x), 14));
  const Ciphertext sg = cse.sign(ct);
  EXPECT_EQ(sg.level(), 1u);
  const Ciphertext rl = cse.relu(ct);
  EXPECT_EQ(rl.level(), 0u);
  const std::vector<double> got_s = e.encoder.decode_real(e.decryptor.decrypt(sg));
  const std::vector<double> got_r = e.encoder.decode_real(e.decryptor.decrypt(rl));
  double vs_plain = 0, vs_sign = 0, relu_plain = 0, relu_exact = 0;
  for (u32 i = 0; i < slots; ++i) {
    vs_plain = std::max(vs_plain, std::abs(got_s[i] - s(x[i])));
    if (std::abs(x[i]) >= eps) {
      vs_sign = std::max(vs_sign, std::abs(got_s[i] - (x[i] > 0 ? 1.0 : -1.0)));
    }
    relu_plain = std::max(relu_plain, std::abs(got_r[i] - s.relu(x[i])));
    relu_exact = std::max(relu_exact, std::abs(got_r[i] - std::max(x[i], 0.0)));
  }
  print_bits("encrypted sign vs plaintext composite", -log2_of(vs_plain));
  print_bits("encrypted sign vs sign, |x| >= 2^-9", -log2_of(vs_sign));
  print_bits("encrypted AppReLU vs plaintext AppReLU", -log2_of(relu_plain));
  print_bits("encrypted AppReLU vs ReLU on [-1, 1]", -log2_of(relu_exact));
  EXPECT_LE(vs_sign, std::ldexp(1.0, -13));
  EXPECT_GT(-log2_of(vs_plain), 16);
  EXPECT_GT(-log2_of(relu_plain), 20);
  EXPECT_LE(relu_exact, std::ldexp(1.0, -9));
}

}  // namespace
}  // namespace theo::test
