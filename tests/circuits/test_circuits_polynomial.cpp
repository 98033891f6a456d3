// Chebyshev interpolation and homomorphic polynomial evaluation against the plaintext series.

#include <numbers>

#include "circuits_test_util.h"
#include "theo/model/traffic.h"

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

// evaluate_batch runs several ciphertexts as one group: the words of evaluate() on each, for a
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

// Lazy relinearization and rescaling (Optimizations::Circuits::lazy_polynomial) against the
// depth-optimal recursion it replaces: the same levels and default output scale, fewer key
// switches and rescales (each one conversion pass), and no less precision, for series that need
// the affine map, lowered basis elements and T_(m+n) products, and for the cosine of EvalMod.
TEST(PolynomialLazy, FewerKeySwitchesAndRescalesAtLeastThePrecision) {
  struct Outcome {
    double bits = 0;
    double key_switches = 0;  // relinearizations (KeyMult passes)
    double conversions = 0;   // ModDowns and rescales (BConv passes)
    u32 level = 0;
    long double scale = 0;
  };
  const auto run = [](bool lazy, const ChebyshevSeries& p, const std::vector<double>& x) {
    auto rec = std::make_shared<TrafficRecorder>();
    ContextOptions o = test_options();
    o.optimizations.circuits.lazy_polynomial = lazy;
    o.wrap_backend = record_traffic(rec);
    SeededKeys k(Context::create(generated_params(12, 10), o), 3, 4);
    const PolynomialEvaluator pe(k.evaluator, k.rlk);
    std::vector<Cplx> z(x.begin(), x.end());
    const Ciphertext ct = k.encrypt(z, k.ctx->max_level());
    rec->clear();
    const Ciphertext out = pe.evaluate(ct, p);
    const auto ops = rec->by_op();
    const auto calls = [&](const char* op) {
      const auto it = ops.find(op);
      return it == ops.end() ? 0.0 : static_cast<double>(it->second.calls);
    };
    const std::vector<Cplx> got = k.encoder.decode(Decryptor(k.ctx, k.sk).decrypt(out));
    std::vector<Cplx> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      want[i] = p(x[i]);
    return Outcome{bits(std::vector<Cplx>(got.begin(), got.begin() + x.size()), want),
                   calls("key_mult_add_scaled"), calls("bconv_matmul"), out.level(),
                   out.scale() / k.ctx->default_scale(out.level())};
  };
  std::mt19937_64 rng{std::random_device{}()};
  const auto inputs = [&](double a, double b) {
    std::uniform_real_distribution<double> u(a, b);
    std::vector<double> x(2048);
    for (double& v : x)
      v = u(rng);
    return x;
  };
  const EvalMod mod(EvalModParams{});
  struct Case {
    const char* name;
    ChebyshevSeries p;
    std::vector<double> x;
  } cases[] = {
      {"tanh(4x) degree 63", chebyshev_fit([](double t) { return std::tanh(4 * t); }, -1, 1, 63),
       inputs(-1, 1)},
      {"sigmoid on [-8, 8] degree 31",
       chebyshev_fit([](double t) { return 1 / (1 + std::exp(-t)); }, -8, 8, 31), inputs(-8, 8)},
      {"EvalMod cosine (degree 15)", mod.cosine(), inputs(-1, 1)},
      {"exp degree 5", chebyshev_fit([](double t) { return std::exp(t); }, -1, 1, 5),
       inputs(-1, 1)},
  };
  for (const Case& c : cases) {
    const Outcome before = run(false, c.p, c.x);
    const Outcome after = run(true, c.p, c.x);
    std::printf(
        "[lazy] %-28s bits %.2f -> %.2f, key switches %.0f -> %.0f, conversions %.0f -> "
        "%.0f\n",
        c.name, before.bits, after.bits, before.key_switches, after.key_switches,
        before.conversions, after.conversions);
    EXPECT_EQ(after.level, before.level) << c.name;
    EXPECT_NEAR(static_cast<double>(after.scale), 1.0, 1e-12) << c.name;
    EXPECT_LE(after.key_switches, before.key_switches) << c.name;
    EXPECT_LE(after.conversions, before.conversions) << c.name;
    EXPECT_GT(after.bits, before.bits - 1.0) << c.name;
  }
}

}  // namespace
}  // namespace theo::test
