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

// The batched group (bootstrapping's real and imaginary parts) gives, word for word, what
// evaluate() gives on each ciphertext alone; fresh random inputs.
void run_batch(const EvalModParams& params) {
  Env e(boot_test_params());
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator pe(e.evaluator, rlk);
  const EvalMod mod(params);
  // Slots in [-0.9, 0.9]: the cosine's input range.
  std::vector<Cplx> y0 = random_slots(512), y1 = random_slots(512);
  for (Cplx& v : y0)
    v = 0.9 * v.real();
  for (Cplx& v : y1)
    v = 0.9 * v.real();
  const u32 top = e.ctx->max_level() - 2;
  const Ciphertext c0 = e.encrypt(y0, top), c1 = e.encrypt(y1, top);
  const Ciphertext* const both[] = {&c0, &c1};
  const std::vector<Ciphertext> batch = mod.evaluate_batch(pe, e.evaluator, rlk, both, 4);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(hash_ct(*e.ctx, batch[0]), hash_ct(*e.ctx, mod.evaluate(pe, e.evaluator, rlk, c0, 4)));
  EXPECT_EQ(hash_ct(*e.ctx, batch[1]), hash_ct(*e.ctx, mod.evaluate(pe, e.evaluator, rlk, c1, 4)));
  EXPECT_EQ(batch[0].level(), batch[1].level());
  // A ciphertext at another level cannot join the batched group.
  const Ciphertext low = e.evaluator.level_down(c1, top - 1);
  const Ciphertext* const mixed[] = {&c0, &low};
  EXPECT_THROW(mod.evaluate_batch(pe, e.evaluator, rlk, mixed), ParameterError);
}

TEST(EvalMod, BatchMatchesSingle) {
  run_batch(EvalModParams::derive(32, 12, 2, 9));
}

TEST(EvalMod, BatchWithArcsineMatchesSingle) {
  run_batch(EvalModParams::derive(32, 12, 2, 11, 3));
}

// evaluate_batch_open leaves the last double angle to the caller: factor * u^2 - constant,
// relinearized and rescaled by multiply_sum_relin_rescale, gives evaluate()'s words; a circuit
// ending in the arcsine has no open tail.
TEST(EvalMod, OpenTailClosesToTheSameWords) {
  Env e(boot_test_params());
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator pe(e.evaluator, rlk);
  const EvalMod mod(EvalModParams::derive(32, 12, 2, 9));
  ASSERT_TRUE(mod.has_open_tail());
  std::vector<Cplx> y = random_slots(512);
  for (Cplx& v : y)
    v = 0.9 * v.real();
  const u32 top = e.ctx->max_level() - 2;
  const Ciphertext ct = e.encrypt(y, top);
  const Ciphertext* const one[] = {&ct};
  EvalMod::OpenTail tail;
  const std::vector<Ciphertext> u = mod.evaluate_batch_open(pe, e.evaluator, rlk, one, 4, tail);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].level(), top - mod.params().depth() + 1);
  const Ciphertext* const a[] = {&u[0]};
  Ciphertext closed =
      e.evaluator.multiply_sum_relin_rescale(a, a, u[0].level(), rlk, nullptr, tail.factor);
  e.evaluator.add_const_inplace(closed, -tail.constant);
  EXPECT_EQ(hash_ct(*e.ctx, closed), hash_ct(*e.ctx, mod.evaluate(pe, e.evaluator, rlk, ct, 4)));
  const EvalMod with_arcsine(EvalModParams::derive(32, 12, 2, 11, 3));
  EXPECT_FALSE(with_arcsine.has_open_tail());
  EXPECT_THROW(with_arcsine.evaluate_batch_open(pe, e.evaluator, rlk, one, 1, tail),
               ParameterError);
}

TEST(EvalMod, DerivedForSparseKey) {
  const EvalModParams p = EvalModParams::derive(32, 12, 2, 9);
  run(p, "EvalMod h=32 (derived), sin(2 pi x)", 24);
}

TEST(EvalMod, WithArcsine) {
  const EvalModParams p = EvalModParams::derive(32, 12, 2, 11, 3);
  run(p, "EvalMod h=32 + arcsine, 2 pi eps", 24);
}

// A gain that is not a power of two rides on the cosine's coefficients and the double angles'
// constants: gain * sin(2 pi x), as precise as the gain 1 relative to the gain.
TEST(EvalMod, RealGain) {
  Env e(boot_test_params());
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  const PolynomialEvaluator pe(e.evaluator, rlk);
  const EvalMod mod(EvalModParams{});
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int> ii(-11, 11);
  std::uniform_real_distribution<double> eps(-1.0 / 512, 1.0 / 512);
  std::vector<Cplx> y(512), want(512);
  const double gain = 20.37;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double x = ii(rng) + eps(rng);
    y[i] = x / mod.input_divisor();
    want[i] = gain * std::sin(2 * std::numbers::pi * x);
  }
  const u32 top = e.ctx->max_level() - 2;
  const Ciphertext ct = e.encrypt(y, top);
  const Ciphertext out = mod.evaluate(pe, e.evaluator, rlk, ct, gain);
  EXPECT_EQ(out.level(), top - mod.params().depth());
  const double b = bits(e.decrypt(out), want) + std::log2(gain);
  print_bits("EvalMod, gain 20.37 (relative)", b);
  EXPECT_GT(b, 16);
  EXPECT_THROW(mod.evaluate(pe, e.evaluator, rlk, ct, 0.0), ParameterError);
}

}  // namespace
}  // namespace theo::test
