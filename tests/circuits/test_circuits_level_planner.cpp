// The level planner: static plans (where bootstrapping goes, how many, rejection of steps deeper
// than one bootstrapping provides) and the run-time planner on the small bootstrapping preset.

#include <functional>
#include <random>
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

TEST(LevelPlanner, CompositeStepDeeperThanOneBootstrapping) {
  // The ReLU of Lee et al.: sign components 4, 4, 5 and the product, 14 levels > 13.
  const LevelBudget budget(13);
  const LevelStep relu{"relu", 14, {4, 4, 5, 1}};
  const std::vector<LevelStep> steps{{"conv", 1}, relu, {"conv", 1}, relu};
  const LevelPlan plan = budget.plan(steps, 13);
  // 13 -> 12 -> 8 -> 4, boot before the 5: 13 -> 8 -> 7; 6 -> 2, boot before the second 4:
  // 13 -> 9 -> 4 -> 3.
  EXPECT_EQ(plan.bootstraps, 2u);
  EXPECT_FALSE(plan.steps[1].bootstrap_before);
  EXPECT_EQ(plan.steps[1].bootstrap_inside, (std::vector<u32>{2}));
  EXPECT_EQ(plan.steps[1].level_out, 7u);
  EXPECT_EQ(plan.steps[3].bootstrap_inside, (std::vector<u32>{1}));
  EXPECT_EQ(plan.steps[3].level_out, 3u);
  EXPECT_NE(plan.describe().find("[bootstrap before component 3]"), std::string::npos);
  // A component deeper than a bootstrapping, or components that do not add up: named errors.
  EXPECT_THROW((void)budget.plan(std::vector<LevelStep>{{"bad", 14, {14}}}, 16), LevelError);
  EXPECT_THROW((void)budget.plan(std::vector<LevelStep>{{"sum", 9, {4, 4}}}, 16), LevelError);
}

// Every op's inputs at or above its depth, levels as the plan says, with the plan's refreshes.
void check_plan(const LevelProgram& prog, const ProgramPlan& plan, std::vector<u32> levels,
                u32 refreshed) {
  ASSERT_EQ(plan.ops.size(), prog.ops().size());
  u32 boots = 0;
  for (std::size_t k = 0; k < prog.ops().size(); ++k) {
    const auto& op = prog.ops()[k];
    for (const u32 v : plan.ops[k].bootstrap_before) {
      levels[v] = refreshed;
      ++boots;
    }
    u32 lo = 1000;
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      EXPECT_EQ(plan.ops[k].input_levels[i], levels[op.inputs[i]]);
      lo = std::min(lo, levels[op.inputs[i]]);
    }
    ASSERT_GE(lo, op.depth) << op.name;
    levels.push_back(lo - op.depth);
    EXPECT_EQ(plan.ops[k].level_out, levels.back());
  }
  EXPECT_EQ(boots, plan.bootstraps);
}

// The fewest bootstrappings by brute force (every subset of every op's inputs).
u32 brute_force(const LevelProgram& prog, const std::vector<u32>& start, u32 refreshed) {
  u32 best = 1000;
  std::function<void(std::size_t, std::vector<u32>, u32)> go = [&](std::size_t k,
                                                                   std::vector<u32> lv, u32 c) {
    if (c >= best) return;
    if (k == prog.ops().size()) {
      best = c;
      return;
    }
    const auto& op = prog.ops()[k];
    const u32 n = static_cast<u32>(op.inputs.size());
    for (u32 mask = 0; mask < (1u << n); ++mask) {
      std::vector<u32> l = lv;
      u32 extra = 0;
      for (u32 i = 0; i < n; ++i)
        if (mask >> i & 1 && l[op.inputs[i]] != refreshed) {
          l[op.inputs[i]] = refreshed;
          ++extra;
        }
      u32 lo = 1000;
      for (const u32 v : op.inputs)
        lo = std::min(lo, l[v]);
      if (lo < op.depth) continue;
      l.push_back(lo - op.depth);
      go(k + 1, l, c + extra);
    }
  };
  go(0, start, 0);
  return best;
}

TEST(LevelPlanner, ProgramPlanIsOptimal) {
  std::mt19937_64 rng{std::random_device{}()};
  for (int trial = 0; trial < 40; ++trial) {
    LevelProgram prog(2);
    std::uniform_int_distribution<u32> depth(0, 6), pick(0, 100);
    for (int k = 0; k < 9; ++k) {
      const u32 a = prog.values() - 1 - pick(rng) % std::min<u32>(3, prog.values());
      const u32 b = prog.values() - 1 - pick(rng) % std::min<u32>(3, prog.values());
      prog.add("op" + std::to_string(k), a == b ? std::vector<u32>{a} : std::vector<u32>{a, b},
               depth(rng));
    }
    const std::vector<u32> start{9, 4};
    const LevelBudget budget(8);
    const ProgramPlan plan = budget.plan(prog, start);
    check_plan(prog, plan, start, 8);
    EXPECT_EQ(plan.bootstraps, brute_force(prog, start, 8)) << plan.describe(prog);
  }
}

TEST(LevelPlanner, ProgramWithAReluAndAResidualBranch) {
  // conv -> AppReLU (x kept for the product) -> conv, + the block input: the ResNet basic block.
  const u32 comps[] = {4, 4, 5};
  LevelProgram prog(1);
  const u32 h = 0;
  const u32 x1 = prog.add("conv1", {h}, 1);
  const u32 y1 = prog.add_composite("relu1", x1, comps, true);
  const u32 z = prog.add("conv2", {y1}, 1);
  const u32 x2 = prog.add("add", {z, h}, 0);
  prog.add_composite("relu2", x2, comps, true);
  const LevelBudget budget(13);
  const std::vector<u32> start{16};
  const ProgramPlan plan = budget.plan(prog, start);
  std::printf("%s", plan.describe(prog).c_str());
  check_plan(prog, plan, start, 13);
  EXPECT_EQ(plan.bootstraps, brute_force(prog, start, 13));
  EXPECT_GE(plan.bootstraps, 2u);  // 30 levels from 16, 13 per bootstrapping
  EXPECT_NE(plan.describe(prog).find("[bootstrap"), std::string::npos);
  // An op no bootstrapping can hold, and a program without bootstrapping: named errors.
  LevelProgram deep(1);
  deep.add("too deep", {0}, 14);
  try {
    (void)budget.plan(deep, std::vector<u32>{13});
    FAIL() << "expected LevelError";
  } catch (const LevelError& e) {
    EXPECT_NE(std::string(e.what()).find("too deep"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)LevelBudget::without_bootstrapping().plan(prog, start), LevelError);
  EXPECT_THROW((void)budget.plan(prog, std::vector<u32>{16, 16}), ParameterError);
  EXPECT_THROW(prog.add("bad", {99}, 1), ParameterError);
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
