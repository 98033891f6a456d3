// The key-switch planner decides without a backend (shapes, the policy and the cache in, a plan
// out), and every plan it can give computes the same words.

#include <gtest/gtest.h>

#include "ckks/ckks_test_util.h"
#include "ckks/keyswitch/dataflows.h"
#include "theo/plan/key_switch_plan.h"

namespace theo::test {
namespace {

ExecutionPolicy policy_of(const Optimizations& opt) {
  ExecutionRequest r;
  r.optimizations = opt;
  return ExecutionPolicy::make(r, Environment::none());
}

// Two levels: 3 limbs (one digit of alpha = 4) and 12 limbs (three digits), N = 2^12.
KeySwitchPlanner planner_of(const Optimizations& opt, std::size_t l2) {
  return KeySwitchPlanner(policy_of(opt), l2, 1u << 12, 4, {{3, 1}, {12, 3}});
}

TEST(KeySwitchPlan, DataflowNames) {
  EXPECT_EQ(dataflow_name(Dataflow::kAuto), "auto");
  EXPECT_EQ(dataflow_name(Dataflow::kDSOB), "DSOB");
  EXPECT_EQ(dataflow_name(Dataflow::kDPOB), "DPOB");
  EXPECT_EQ(dataflow_name(Dataflow::kDSOC), "DSOC");
  EXPECT_EQ(dataflow_name(Dataflow::kDPOC), "DPOC");
}

TEST(KeySwitchPlan, PlansWithoutABackend) {
  const std::size_t limb = std::size_t{1} << 14;  // 4 N bytes
  const KeySwitchPlanner all = planner_of(Optimizations::all(), 40u << 20);
  const KeySwitchFootprint f = all.footprint(1);
  EXPECT_EQ(f.mod_up, (12 + 3 * (12 + 4)) * limb);
  EXPECT_EQ(f.mod_down, (2 * 4 + 4 * 12) * limb);
  EXPECT_EQ(f.hoisted, 3 * (12 + 4) * limb);
  EXPECT_EQ(all.cache_bytes(), 40u << 20);

  const KeySwitchPlan p = all.plan(1, 5);
  EXPECT_EQ(p.dataflow, Dataflow::kDPOB);
  EXPECT_EQ(p.batch, 5u);  // five fit in 40 MB
  EXPECT_EQ(p.mod_up.digit_groups, 1u);
  EXPECT_FALSE(p.mod_up.transform_per_group);
  EXPECT_EQ(p.chunks, 1u);
  EXPECT_EQ(p.streams, 2u);
  EXPECT_TRUE(p.mod_down_together);
  EXPECT_EQ(all.plan(1, 5, 2).batch, 2u);  // a caller's batch size wins
  EXPECT_EQ(all.plan_hoisted(1, 7).batch, 7u);
  EXPECT_THROW(all.footprint(2), LevelError);

  // Cheddar's order without multi-poly caching: one key switch, one input, one digit at a time.
  Optimizations no_caching = Optimizations::all();
  no_caching.multi_poly_caching = false;
  const KeySwitchPlan serial = planner_of(no_caching, 40u << 20).plan(1, 5);
  EXPECT_EQ(serial.batch, 1u);
  EXPECT_EQ(serial.mod_up.digit_groups, 3u);
  EXPECT_TRUE(serial.mod_up.transform_per_group);
  EXPECT_TRUE(serial.mod_up.input_by_input);
  EXPECT_FALSE(serial.mod_down_together);
  EXPECT_EQ(planner_of(Optimizations::none(), 0).plan(1, 1).streams, 1u);

  // Dataflow::kAuto without a table: the footprint model. DPOB where its footprint times
  // kFootprintHeadroom (1/8) fits, else DPOC with the fewest chunks that fit: 12 + 3 ceil(16 / c)
  // limbs of 2 x 16 KiB within 8 x f.mod_up / 16 (30 limbs) gives c = 3.
  EXPECT_EQ(all.dataflow(1).choice, kDefaultChoice);
  EXPECT_EQ(all.dataflow(1).source, ChoiceSource::kModel);
  const KeySwitchPlanner modelled = planner_of(Optimizations::all(), f.mod_up / 16);
  EXPECT_EQ(modelled.dataflow(1).choice, (DataflowChoice{Dataflow::kDPOC, 3}));
  EXPECT_EQ(modelled.plan(1, 1).dataflow, Dataflow::kDPOC);
  EXPECT_EQ(modelled.plan(1, 1).chunks, 3u);
  EXPECT_EQ(modelled.plan(1, 2, 2).dataflow, Dataflow::kDPOB);  // batches: DPOB over the batch
  EXPECT_FALSE(modelled.output_chunked(0));
  EXPECT_TRUE(modelled.output_chunked(1));

  // Output chunking (Optimizations::output_chunking): with Auto, a lone key switch at a level
  // whose ModUp exceeds the cache runs DPOC with digits + 1 chunks.
  Optimizations chunking = Optimizations::all();
  chunking.output_chunking = true;
  const KeySwitchPlanner small = planner_of(chunking, f.mod_up - 1);
  EXPECT_TRUE(small.output_chunked(1));
  EXPECT_FALSE(small.output_chunked(0));  // one digit: nothing to chunk
  const KeySwitchPlan lone = small.plan(1, 1);
  EXPECT_EQ(lone.dataflow, Dataflow::kDPOC);
  EXPECT_EQ(lone.chunks, 4u);  // P, then each of the three digits' own limbs
  EXPECT_EQ(small.plan(1, 2, 2).dataflow, Dataflow::kDPOB);
  // Where the ModUp fits, the model's choice stands.
  EXPECT_EQ(planner_of(chunking, f.mod_up).dataflow(1).choice,
            planner_of(Optimizations::all(), f.mod_up).dataflow(1).choice);
  EXPECT_FALSE(planner_of(chunking, 0).output_chunked(1));  // no cache known (CPU): DPOB
  EXPECT_FALSE(planner_of(Optimizations::none(), 1).output_chunked(1));  // no caching: DPOB
}

ExecutionPolicy policy_with(const KeySwitchOptions& ks) {
  ExecutionRequest r;
  r.key_switching = ks;
  return ExecutionPolicy::make(r, Environment::none());
}

// A fixed dataflow at every level; Auto takes the tuning table where it has the level.
TEST(KeySwitchPlan, DataflowSelection) {
  KeySwitchOptions fixed;
  fixed.dataflow = Dataflow::kDSOC;
  fixed.chunks = 5;
  const KeySwitchPlanner f(policy_with(fixed), 40u << 20, 1u << 12, 4, {{3, 1}, {12, 3}});
  for (u32 l = 0; l < 2; ++l) {
    EXPECT_EQ(f.dataflow(l).choice, (DataflowChoice{Dataflow::kDSOC, 5}));
    EXPECT_EQ(f.dataflow(l).source, ChoiceSource::kFixed);
    EXPECT_EQ(f.plan(l, 1).dataflow, Dataflow::kDSOC);
    EXPECT_EQ(f.plan(l, 1).chunks, 5u);
  }
  EXPECT_THROW(f.dataflow(2), LevelError);

  TuningKey key;
  key.log_n = 12;
  key.alpha = 4;
  key.levels = {{3, 1, 4, 1u << 12}, {12, 3, 4, 1u << 12}};
  TuningTable table(key);
  table.set_level({1, {{kDefaultChoice, 10.0}, {{Dataflow::kDSOB, 1}, 8.0}}});
  const KeySwitchPlanner t(policy_with({}), 40u << 20, 1u << 12, 4, {{3, 1}, {12, 3}}, &table);
  EXPECT_EQ(t.dataflow(0).source, ChoiceSource::kModel);
  EXPECT_EQ(t.dataflow(1).source, ChoiceSource::kTable);
  EXPECT_EQ(t.plan(1, 1).dataflow, Dataflow::kDSOB);
  EXPECT_EQ(t.key_switch_shape(1), key.levels[1]);

  // Bad options are refused when the policy is made.
  KeySwitchOptions bad;
  bad.dataflow = Dataflow::kDPOB;
  bad.chunks = 4;
  EXPECT_THROW(policy_with(bad), ParameterError);
  // The default tuning directory comes from the environment as read.
  Environment env;
  env.xdg_cache_home = "/cache";
  ExecutionRequest r;
  EXPECT_EQ(ExecutionPolicy::make(r, env).key_switching().tuning.directory,
            std::filesystem::path("/cache/theodosian/tuning"));
  r.key_switching.tuning.directory = "/mine";
  EXPECT_EQ(ExecutionPolicy::make(r, env).key_switching().tuning.directory,
            std::filesystem::path("/mine"));
}

TEST(KeySwitchPlan, WorkLanes) {
  const ExecutionPolicy all = policy_of(Optimizations::all());
  EXPECT_EQ(plan_work_lanes(all, 2, false), WorkLanes::kTwoStreams);
  EXPECT_EQ(plan_work_lanes(all, 2, true), WorkLanes::kBatched);  // forks do not nest
  EXPECT_EQ(plan_work_lanes(all, 1, false), WorkLanes::kBatched);
  Optimizations caching_only = Optimizations::none();
  caching_only.multi_poly_caching = true;
  EXPECT_EQ(plan_work_lanes(policy_of(caching_only), 2, false), WorkLanes::kBatched);
  EXPECT_EQ(plan_work_lanes(policy_of(Optimizations::none()), 2, false), WorkLanes::kInOrder);
}

// A forced plan runs as given and gives the planner's words; a dataflow this build lacks, or one
// that cannot run at the level, is refused before any work.
TEST(KeySwitchPlan, ForcedPlansGiveTheSameWords) {
  ContextOptions o = test_options();
  o.threads = 2;
  SeededKeys k(Context::create(generated_params(12, 5), o), 11, 12);
  const ContextPtr& ctx = k.ctx;
  const KeySwitcher& ks = k.evaluator.key_switcher();
  const u32 level = ctx->default_encryption_level();
  const LevelData& lv = ctx->level(level);
  Backend& be = ctx->backend();
  std::vector<Ciphertext> cts;
  std::vector<ConstPolyRef> d;
  std::vector<const SwitchingKey*> keys;
  for (int i = 0; i < 3; ++i) {
    cts.push_back(k.encrypt(random_slots(8), level));
    d.push_back(cts.back().poly(1).cref());
    keys.push_back(&k.rlk.key());
  }
  const auto run = [&](const KeySwitchPlan* plan) {
    std::vector<RnsPoly> outs;
    std::vector<PolyRef> o0, o1;
    for (int i = 0; i < 6; ++i)
      outs.push_back(be.make_poly(lv.q_basis));
    for (int i = 0; i < 3; ++i) {
      o0.push_back(outs[2 * i].ref());
      o1.push_back(outs[2 * i + 1].ref());
    }
    if (plan == nullptr) {
      ks.run({.level = level, .inputs = d, .keys = keys, .out0 = o0, .out1 = o1});
    } else {
      // The plan forced on the dataflows directly, batch by batch (KeySwitcher::run always
      // runs the planner's).
      const keyswitch::Stages st(*ctx, plan->issue);
      const std::size_t b = std::max<u32>(plan->batch, 1);
      for (std::size_t first = 0; first < d.size(); first += b) {
        const std::size_t n = std::min(b, d.size() - first);
        KeySwitchRequest batch;
        batch.level = level;
        batch.inputs = std::span<const ConstPolyRef>(d).subspan(first, n);
        batch.keys = std::span<const SwitchingKey* const>(keys).subspan(first, n);
        batch.out0 = std::span<const PolyRef>(o0).subspan(first, n);
        batch.out1 = std::span<const PolyRef>(o1).subspan(first, n);
        keyswitch::run_batch(st, *plan, batch);
      }
    }
    u64 h = 1469598103934665603ull;
    for (const RnsPoly& p : outs)
      h = hash_poly(*ctx, p, h);
    return h;
  };
  const u64 want = run(nullptr);
  KeySwitchPlan forced;  // DPOB, batches of one, one stream, ModDown poly by poly
  forced.streams = 1;
  forced.mod_down_together = false;
  EXPECT_EQ(run(&forced), want);
  forced.batch = 2;
  forced.streams = 2;
  forced.mod_up = {.digit_groups = 2, .transform_per_group = true, .input_by_input = false};
  EXPECT_EQ(run(&forced), want);
  forced.mod_up = {.digit_groups = 3, .transform_per_group = false, .input_by_input = true};
  EXPECT_EQ(run(&forced), want);
  forced.dataflow = Dataflow::kDSOB;  // digit-serial: the digits' own conversion tables
  EXPECT_EQ(run(&forced), want);
  for (const Dataflow df : {Dataflow::kDSOC, Dataflow::kDPOC}) {
    forced.dataflow = df;  // no chunk tables: this Context's selection (DPOB) needs none
    forced.chunks = 3;
    EXPECT_THROW(run(&forced), ParameterError) << dataflow_name(df);
  }
}

}  // namespace
}  // namespace theo::test
