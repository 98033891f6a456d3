// Dataflow names and candidates, output chunks, the footprint model and the per-level selection.

#include <gtest/gtest.h>

#include <set>

#include "theo/errors.h"
#include "theo/plan/dataflow.h"
#include "theo/plan/dataflow_selection.h"

namespace {

using namespace theo;

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(Dataflow, NamesAndCandidates) {
  for (Dataflow d :
       {Dataflow::kAuto, Dataflow::kDSOB, Dataflow::kDPOB, Dataflow::kDSOC, Dataflow::kDPOC})
    EXPECT_EQ(parse_dataflow(dataflow_name(d)), d);
  EXPECT_EQ(parse_dataflow("dpoc"), Dataflow::kDPOC);
  EXPECT_EQ(parse_dataflow("Auto"), Dataflow::kAuto);
  EXPECT_FALSE(parse_dataflow("DPOX").has_value());
  EXPECT_FALSE(parse_dataflow("").has_value());

  const auto all = dataflow_candidates();
  EXPECT_EQ(all.size(), 20u);
  std::set<std::string> names;
  for (const DataflowChoice& c : all) {
    EXPECT_TRUE(valid_choice(c)) << choice_name(c);
    names.insert(choice_name(c));
  }
  EXPECT_EQ(names.size(), all.size());
  EXPECT_TRUE(names.count("DPOC/10"));
  EXPECT_TRUE(names.count("DSOB"));
  EXPECT_FALSE(valid_choice({Dataflow::kDPOB, 2}));
  EXPECT_FALSE(valid_choice({Dataflow::kDSOC, 1}));
  EXPECT_FALSE(valid_choice({Dataflow::kDPOC, 11}));
  EXPECT_FALSE(valid_choice({Dataflow::kAuto, 1}));
  EXPECT_TRUE(valid_choice(kDefaultChoice));
}

TEST(Dataflow, OutputChunks) {
  for (u32 e : {1u, 3u, 7u, 35u, 57u})
    for (u32 c = 1; c <= 10; ++c) {
      const auto chunks = output_chunks(e, c);
      ASSERT_EQ(chunks.size(), std::min(c, e));
      u32 next = 0, lo = e, hi = 0;
      for (const ChunkRange& r : chunks) {
        EXPECT_EQ(r.first, next);
        EXPECT_GE(r.count, 1u);
        lo = std::min(lo, r.count);
        hi = std::max(hi, r.count);
        next += r.count;
      }
      EXPECT_EQ(next, e);
      EXPECT_LE(hi - lo, 1u);
      EXPECT_EQ(chunks.front().count, hi);  // the larger ones first
    }
}

TEST(Dataflow, Footprints) {
  // bootparam_40's top level: 47 limbs, 4 digits, alpha 12, N = 2^16 (256 KiB per limb).
  const KeySwitchShape s{47, 4, 12, 1u << 16};
  const std::size_t limb = std::size_t{1} << 18;
  EXPECT_EQ(dataflow_footprint(s, {Dataflow::kDPOB, 1}), (47 + 4 * 59) * limb);
  EXPECT_EQ(dataflow_footprint(s, {Dataflow::kDSOB, 1}), (12 + 3 * 59) * limb);
  EXPECT_EQ(dataflow_footprint(s, {Dataflow::kDPOC, 5}), (47 + 4 * 12) * limb);
  EXPECT_EQ(dataflow_footprint(s, {Dataflow::kDSOC, 3}), (47 + 3 * 20) * limb);
  // More chunks, no larger footprint; digit-serial below digit-parallel at equal chunks.
  for (u32 c = kMinChunks; c < kMaxChunks; ++c) {
    EXPECT_LE(dataflow_footprint(s, {Dataflow::kDPOC, c + 1}),
              dataflow_footprint(s, {Dataflow::kDPOC, c}));
    EXPECT_LE(dataflow_footprint(s, {Dataflow::kDSOC, c + 1}),
              dataflow_footprint(s, {Dataflow::kDSOC, c}));
    EXPECT_LT(dataflow_footprint(s, {Dataflow::kDSOC, c}),
              dataflow_footprint(s, {Dataflow::kDPOC, c}));
  }
}

TEST(Dataflow, ModelChoice) {
  // (dnum 2, N 2^15, L 10) fits a 40 MB L2 many times over; (4, 2^16, 50) as DPOB (75.5 MiB) is
  // within the headroom of 40 MB but not of 4 MB.
  const KeySwitchShape small{10, 2, 5, 1u << 15};
  EXPECT_EQ(model_choice(small, 40 * kMiB), (DataflowChoice{Dataflow::kDPOB, 1}));
  const KeySwitchShape large{50, 4, 13, 1u << 16};
  EXPECT_EQ(model_choice(large, 40 * kMiB), (DataflowChoice{Dataflow::kDPOB, 1}));
  const DataflowChoice c = model_choice(large, 4 * kMiB);
  EXPECT_NE(c.dataflow, Dataflow::kDPOB);
  EXPECT_LE(kFootprintHeadroom * static_cast<double>(dataflow_footprint(large, c)),
            static_cast<double>(4 * kMiB));
  // No cache to plan for (the CPU): today's default.
  EXPECT_EQ(model_choice(large, 0), kDefaultChoice);
  // As the cache shrinks, the choice moves to smaller footprints: DPOB, DPOC with more and more
  // chunks, then DSOC.
  std::size_t last = SIZE_MAX;
  bool saw_dpoc = false, saw_dsoc = false;
  for (std::size_t cache = 1024 * kMiB; cache >= kMiB; cache = cache * 7 / 8) {
    const DataflowChoice m = model_choice(large, cache);
    ASSERT_TRUE(valid_choice(m));
    const std::size_t f = dataflow_footprint(large, m);
    EXPECT_LE(f, last) << cache;
    last = f;
    saw_dpoc = saw_dpoc || m.dataflow == Dataflow::kDPOC;
    saw_dsoc = saw_dsoc || m.dataflow == Dataflow::kDSOC;
    if (m.dataflow == Dataflow::kDPOC) {
      // The fewest chunks that fit.
      EXPECT_EQ(m.chunks, model_chunks(large, Dataflow::kDPOC, cache));
      if (m.chunks > kMinChunks) {
        EXPECT_GT(kFootprintHeadroom * static_cast<double>(dataflow_footprint(
                                           large, {Dataflow::kDPOC, m.chunks - 1})),
                  static_cast<double>(cache));
      }
    }
  }
  EXPECT_TRUE(saw_dpoc);
  EXPECT_TRUE(saw_dsoc);
  // Nothing fits: the smallest footprint.
  EXPECT_EQ(model_choice(large, kMiB), (DataflowChoice{Dataflow::kDSOC, kMaxChunks}));
  EXPECT_EQ(model_chunks(large, Dataflow::kDSOC, kMiB), kMaxChunks);
}

TEST(DataflowSelection, FixedModelAndTable) {
  const std::vector<KeySwitchShape> levels = {
      {2, 1, 12, 1u << 16}, {14, 2, 12, 1u << 16}, {35, 3, 12, 1u << 16}, {47, 4, 12, 1u << 16}};
  const std::size_t l2 = 50 * kMiB;

  KeySwitchOptions fixed;
  fixed.dataflow = Dataflow::kDSOC;
  fixed.chunks = 3;
  for (const LevelDataflow& d : select_dataflows(fixed, levels, l2, nullptr)) {
    EXPECT_EQ(d.source, ChoiceSource::kFixed);
    EXPECT_EQ(d.choice, (DataflowChoice{Dataflow::kDSOC, 3}));
  }
  fixed.chunks = 0;  // the model's chunks per level
  const auto per_level = select_dataflows(fixed, levels, l2, nullptr);
  for (u32 l = 0; l < levels.size(); ++l)
    EXPECT_EQ(per_level[l].choice.chunks, model_chunks(levels[l], Dataflow::kDSOC, l2));
  fixed.dataflow = Dataflow::kDSOB;
  for (const LevelDataflow& d : select_dataflows(fixed, levels, l2, nullptr))
    EXPECT_EQ(d.choice, (DataflowChoice{Dataflow::kDSOB, 1}));

  // Auto: the model where nothing is tuned, the table where it is.
  KeySwitchOptions aut;
  TuningKey key;
  key.levels = levels;
  key.log_n = 16;
  key.alpha = 12;
  TuningTable table(key);
  table.set_level({3, {{{Dataflow::kDPOB, 1}, 100.0}, {{Dataflow::kDSOC, 2}, 80.0}}});
  const auto sel = select_dataflows(aut, levels, l2, &table);
  for (u32 l = 0; l < 3; ++l) {
    EXPECT_EQ(sel[l].source, ChoiceSource::kModel);
    EXPECT_EQ(sel[l].choice, model_choice(levels[l], l2));
  }
  EXPECT_EQ(sel[3].source, ChoiceSource::kTable);
  EXPECT_EQ(sel[3].choice, (DataflowChoice{Dataflow::kDSOC, 2}));
  // The choice changes with the level within one Context.
  const auto no_cache = select_dataflows(aut, levels, 0, nullptr);
  for (const LevelDataflow& d : no_cache)
    EXPECT_EQ(d.choice, kDefaultChoice);
}

TEST(DataflowSelection, OptionErrors) {
  KeySwitchOptions o;
  o.chunks = 3;  // with Auto
  EXPECT_THROW(validate(o), ParameterError);
  o.dataflow = Dataflow::kDPOB;
  EXPECT_THROW(validate(o), ParameterError);
  o.dataflow = Dataflow::kDPOC;
  EXPECT_NO_THROW(validate(o));
  o.chunks = 1;
  EXPECT_THROW(validate(o), ParameterError);
  o.chunks = 11;
  try {
    validate(o);
    FAIL();
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("chunks = 11"), std::string::npos) << e.what();
  }
  o.chunks = 0;
  EXPECT_NO_THROW(validate(o));
}

}  // namespace
