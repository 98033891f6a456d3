// Chebyshev interpolation and homomorphic polynomial evaluation against the plaintext series.

#include <numbers>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

TEST(Chebyshev, FitIsAccurate) {
  const auto f = [](double x) { return std::sin(x); };
  const ChebyshevSeries p = chebyshev_fit(f, -3, 3, 25);
  EXPECT_LT(chebyshev_max_error(f, p), 1e-13);
}

struct PolyCase {
  const char* name;
  std::function<double(double)> f;
  double a, b;
  u32 degree;
  double min_bits;
};

class PolynomialEval : public SharedEnvSuite<12, 10> {
 protected:
  void run(const PolyCase& c) {
    Env& e = *env_;
    const RelinKey rlk = e.keygen.create_relin_key(e.sk);
    const PolynomialEvaluator pe(e.evaluator, rlk);
    const ChebyshevSeries p = chebyshev_fit(c.f, c.a, c.b, c.degree);
    const std::size_t n = e.ctx->max_slots();
    std::vector<Cplx> x(n), want(n);
    auto slots = random_slots(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = c.a + (c.b - c.a) * (0.5 + 0.5 * slots[i].real());
      want[i] = p(x[i].real());
    }
    const u32 top = e.ctx->max_level();
    const Ciphertext ct = e.encrypt(x, top);
    const Ciphertext out = pe.evaluate(ct, p);
    EXPECT_EQ(out.level(), top - pe.levels_consumed(ct, p));
    EXPECT_NEAR(static_cast<double>(out.scale() / e.ctx->default_scale(out.level())), 1.0, 1e-9);
    const double b = bits(e.decrypt(out), want);
    print_bits(c.name, b);
    EXPECT_GT(b, c.min_bits);
  }
};

TEST_F(PolynomialEval, SigmoidDegree31) {
  run({"sigmoid on [-8,8], degree 31", [](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8, 31,
       20});
}

TEST_F(PolynomialEval, SinDegree15) {
  run({"sin on [-pi,pi], degree 15", [](double x) { return std::sin(x); }, -std::numbers::pi,
       std::numbers::pi, 15, 20});
}

TEST_F(PolynomialEval, OddDegree63OnUnitInterval) {
  // [-1, 1]: no affine level; degree 63 = 6 levels exactly.
  run({"tanh(4x) on [-1,1], degree 63", [](double x) { return std::tanh(4 * x); }, -1, 1, 63, 18});
}

// evaluate_batch runs several ciphertexts in lockstep: the words of evaluate() on each, for a
// series that needs the affine map and lowered basis elements, and for a constant series.
TEST_F(PolynomialEval, BatchMatchesSingle) {
  Env& e = *env_;
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator pe(e.evaluator, rlk);
  const u32 top = e.ctx->max_level();
  std::vector<Ciphertext> cts;
  for (int i = 0; i < 3; ++i) {
    std::vector<Cplx> x = random_slots(e.ctx->max_slots());
    for (Cplx& v : x)
      v = 2.0 * v.real();
    cts.push_back(e.encrypt(x, top));
  }
  const Ciphertext* const ptrs[] = {&cts[0], &cts[1], &cts[2]};
  ChebyshevSeries constant;
  constant.coeffs = {0.75};
  for (const ChebyshevSeries& p :
       {chebyshev_fit([](double x) { return std::sin(x); }, -2, 2, 27), constant}) {
    const std::vector<Ciphertext> batch = pe.evaluate_batch(ptrs, p);
    ASSERT_EQ(batch.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(hash_ct(*e.ctx, batch[i]), hash_ct(*e.ctx, pe.evaluate(cts[i], p)))
          << "ciphertext " << i << ", degree " << p.degree();
    }
  }
  const Ciphertext* const none[] = {nullptr};
  EXPECT_THROW(pe.evaluate_batch(none, constant), ParameterError);
}

TEST_F(PolynomialEval, LowDegrees) {
  for (u32 d : {1u, 2u, 3u, 4u, 5u, 8u}) {
    run({"exp on [-1,1], low degree", [](double x) { return std::exp(x); }, -1, 1, d, 20});
  }
}

}  // namespace
}  // namespace theo::test
