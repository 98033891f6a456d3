// Context tables: prime order, level windows, default scales (matching math's level_log2_scales),
// key-switching digits and unique ids.

#include <cstdlib>
#include <string>

#include "ckks_test_util.h"

namespace theo::test {
namespace {

TEST(Context, PrimeTableAndLevelWindows) {
  const ParameterSet p = load_preset("bootparam_40");
  const auto ctx = make_context(p);
  const u32 T = static_cast<u32>(p.terminal_primes.size());
  const u32 M = static_cast<u32>(p.main_primes.size());
  EXPECT_EQ(ctx->prime(0), p.terminal_primes[T - 1]);
  EXPECT_EQ(ctx->prime(static_cast<PrimeId>(T - 1)), p.terminal_primes[0]);
  EXPECT_EQ(ctx->prime(static_cast<PrimeId>(T)), p.main_primes[0]);
  EXPECT_EQ(ctx->prime(static_cast<PrimeId>(T + M)), p.auxiliary_primes[0]);
  EXPECT_EQ(ctx->dnum(), (T + M + p.alpha() - 1) / p.alpha());
  for (u32 l = 0; l <= ctx->max_level(); ++l) {
    const LevelData& lv = ctx->level(l);
    EXPECT_EQ(lv.limbs, p.limbs_at(l));
    EXPECT_EQ(lv.q_basis, Basis::range(T - p.level_config[l][1], lv.limbs));
    EXPECT_NEAR(lv.log2_q, p.log2_q(l), 1e-9);
    u32 covered = 0;
    for (const DigitPlan& d : lv.digits)
      covered += d.count;
    EXPECT_EQ(covered, lv.limbs);
  }
  // Level 9 = 14 limbs, 16 = 23, 28 = 47 (the anchor's figures).
  EXPECT_EQ(ctx->level(9).limbs, 14u);
  EXPECT_EQ(ctx->level(16).limbs, 23u);
  EXPECT_EQ(ctx->level(28).limbs, 47u);
}

TEST(Context, DefaultScalesMatchMath) {
  const ParameterSet p = load_preset("bootparam_40");
  const auto ctx = make_context(p);
  const std::vector<double> want = level_log2_scales(p);
  for (u32 l = 0; l <= p.default_encryption_level && l < want.size(); ++l) {
    EXPECT_NEAR(static_cast<double>(std::log2(ctx->default_scale(l))), want[l], 1e-9) << l;
    // The anchor's own primes keep every non-bootstrapping level within ~0.1 bit of 2^40.
    EXPECT_LT(std::abs(want[l] - 40.0), 0.11) << l;
  }
}

TEST(Context, UniqueIdsAndThreadSafeSharing) {
  const ParameterSet p = generated_params(12, 2);
  const auto a = make_context(p);
  const auto b = make_context(p);
  EXPECT_NE(a->id(), b->id());
  EXPECT_THROW((void)a->level(a->max_level() + 1), LevelError);
}

// BackendChoice::kAuto that falls back to the CPU keeps ContextOptions::threads (make_backend).
TEST(Context, AutoBackendOnTheCpuKeepsThreads) {
  if (cuda_available() || std::getenv("THEO_BACKEND") != nullptr) {
    GTEST_SKIP() << "the automatic choice is not the CPU here";
  }
  ContextOptions options = test_options(BackendChoice::kAuto);
  for (const unsigned threads : {1u, 3u}) {
    options.threads = threads;
    const auto ctx = Context::create(load_preset("test_n12"), options);
    EXPECT_EQ(ctx->backend().kind(), BackendKind::kCpu);
    EXPECT_EQ(ctx->backend().name(), "cpu (" + std::to_string(threads) + " threads)");
  }
}

}  // namespace
}  // namespace theo::test
