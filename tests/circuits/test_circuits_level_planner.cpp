// The level planner: static plans (where bootstrapping goes, how many, rejection of steps deeper
// than one bootstrapping provides) and the run-time planner on the small bootstrapping preset.

#include <vector>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

TEST(LevelPlanner, DepthHelpers) {
  EXPECT_EQ(depth::polynomial(0), 0u);
  EXPECT_EQ(depth::polynomial(1), 1u);
  EXPECT_EQ(depth::polynomial(3), 2u);
  EXPECT_EQ(depth::polynomial(4), 3u);
  EXPECT_EQ(depth::polynomial(7), 3u);
  EXPECT_EQ(depth::polynomial(8), 4u);
  EXPECT_EQ(depth::polynomial(7, true), 4u);
  // The planner's polynomial depth is the PolynomialEvaluator's.
  for (u32 d = 1; d < 64; ++d)
    EXPECT_EQ(depth::polynomial(d), PolynomialEvaluator::depth(d)) << d;
}

TEST(LevelPlanner, StaticPlanBootstrapsJustBeforeLevelsRunOut) {
  const LevelBudget budget(13);  // bootparam_40's output level, floor 0
  const std::vector<LevelStep> steps(32, LevelStep{"iteration", 6});
  const LevelPlan plan = budget.plan(steps, 16);
  // 16 -> 10 -> 4, boot -> 13 -> 7 -> 1, boot -> ...: two steps per span, the first span too.
  ASSERT_EQ(plan.steps.size(), 32u);
  EXPECT_FALSE(plan.steps[0].bootstrap_before);
  EXPECT_FALSE(plan.steps[1].bootstrap_before);
  EXPECT_TRUE(plan.steps[2].bootstrap_before);
  EXPECT_EQ(plan.steps[1].level_out, 4u);
  EXPECT_EQ(plan.steps[2].level_in, 13u);
  EXPECT_EQ(plan.steps[3].level_out, 1u);
  EXPECT_EQ(plan.bootstraps, 15u);
  EXPECT_EQ(budget.count_bootstraps(steps, 16), 15u);
  EXPECT_NE(plan.describe().find("[bootstrap before]"), std::string::npos);
  // Mixed depths: a step that fits exactly (c: 3 -> 0) does not bootstrap; the next one does.
  const std::vector<LevelStep> mixed{{"a", 5}, {"b", 5}, {"c", 3}, {"d", 1}};
  const LevelPlan m = budget.plan(mixed, 13);
  EXPECT_EQ(m.bootstraps, 1u);
  EXPECT_FALSE(m.steps[2].bootstrap_before);
  EXPECT_EQ(m.steps[2].level_out, 0u);
  EXPECT_TRUE(m.steps[3].bootstrap_before);
  EXPECT_EQ(m.steps[3].level_out, 12u);
}

TEST(LevelPlanner, RejectsADepthBootstrappingCannotProvide) {
  const LevelBudget budget(13);
  const std::vector<LevelStep> steps{{"ok", 6}, {"too deep", 14}};
  try {
    (void)budget.plan(steps, 16);
    FAIL() << "expected LevelError";
  } catch (const LevelError& e) {
    EXPECT_NE(std::string(e.what()).find("too deep"), std::string::npos) << e.what();
  }
  // Without bootstrapping, running out is an error too.
  const LevelBudget none = LevelBudget::without_bootstrapping();
  EXPECT_THROW((void)none.plan(std::vector<LevelStep>{{"x", 3}, {"y", 3}}, 5), LevelError);
  EXPECT_EQ(none.plan(std::vector<LevelStep>{{"x", 3}, {"y", 2}}, 5).bootstraps, 0u);
  EXPECT_THROW(LevelBudget(2, 3), LevelError);
}

TEST(LevelPlanner, RunTimeEnsureBootstrapsOnlyWhenNeeded) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  BootEnv e(cfg);
  LevelPlanner planner(e.boot, e.keys);
  EXPECT_EQ(planner.budget().refreshed_level(), e.boot.output_level());
  EXPECT_THROW((void)LevelBudget::of(e.boot, e.boot.output_level()), LevelError);
  EXPECT_EQ(LevelBudget::of(e.boot, 1).refreshed_level(), e.boot.output_level() - 1);

  const auto z = random_slots(64);
  Ciphertext ct = e.encrypt(z, 3);
  EXPECT_FALSE(planner.ensure(ct, 3, "fits"));
  EXPECT_EQ(ct.level(), 3u);
  ct = e.evaluator.level_down(ct, 1);
  EXPECT_TRUE(planner.ensure(ct, 3, "needs a refresh"));
  EXPECT_EQ(ct.level(), e.boot.output_level());
  EXPECT_EQ(planner.bootstraps(), 1u);
  const double b = bits(e.decrypt(ct), z);
  print_bits("value kept through ensure()", b);
  EXPECT_GE(b, 12);
  // A step deeper than any refresh: LevelError naming it, the ciphertext untouched.
  try {
    planner.ensure(ct, e.boot.output_level() + 1, "impossible step");
    FAIL() << "expected LevelError";
  } catch (const LevelError& err) {
    EXPECT_NE(std::string(err.what()).find("impossible step"), std::string::npos);
  }
  EXPECT_EQ(ct.level(), e.boot.output_level());
  EXPECT_EQ(planner.bootstraps(), 1u);
}

}  // namespace
}  // namespace theo::test
