// EvalMod on slots x = I + eps (|I| < K, |eps| small) encoded as y = x / (K + 1/4): the result must
// be sin(2 pi x) (= the plaintext model) with the arcsine correction off, 2 pi eps with it on.

#include <numbers>
#include <random>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

void run(const EvalModParams& params, const char* name, double min_bits) {
  Env e(boot_test_params());
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator pe(e.evaluator, rlk);
  const EvalMod mod(params);
  const u32 n = 512;
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int> ii(-static_cast<int>(params.k_bound) + 1,
                                        static_cast<int>(params.k_bound) - 1);
  std::uniform_real_distribution<double> eps(-1.0 / 512, 1.0 / 512);
  std::vector<Cplx> y(n), want(n), model(n);
  for (u32 i = 0; i < n; ++i) {
    const double ep = eps(rng);
    const double x = ii(rng) + ep;
    y[i] = x / mod.input_divisor();
    want[i] =
        params.arcsine_degree ? 2 * std::numbers::pi * ep : std::sin(2 * std::numbers::pi * x);
    model[i] = mod.reference(y[i].real());
  }
  const u32 top = e.ctx->max_level() - 2;
  const Ciphertext out = mod.evaluate(pe, e.evaluator, rlk, e.encrypt(y, top));
  EXPECT_EQ(out.level(), top - params.depth());
  const auto got = e.decrypt(out);
  const double b = bits(got, want);
  std::printf(
      "[evalmod] K=%u degree=%u r=%u arcsine=%u depth=%u model 2^%.1f, vs plaintext model "
      "%.2f bits\n",
      params.k_bound, params.degree, params.double_angles, params.arcsine_degree, params.depth(),
      std::log2(params.estimated_error), bits(got, model));
  print_bits(name, b);
  EXPECT_GT(b, min_bits);
}

TEST(EvalMod, DerivedForSparseKey) {
  const EvalModParams p = EvalModParams::derive(32, 12, 2, 9);
  run(p, "EvalMod h=32 (derived), sin(2 pi x)", 24);
}

TEST(EvalMod, WithArcsine) {
  const EvalModParams p = EvalModParams::derive(32, 12, 2, 11, 3);
  run(p, "EvalMod h=32 + arcsine, 2 pi eps", 24);
}

}  // namespace
}  // namespace theo::test
