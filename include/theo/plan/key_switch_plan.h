#pragma once
// Key-switch planning: how the three stages of hybrid key switching (ModUp, KeyMult, ModDown;
// src/ckks/keyswitch/stages.h) are arranged for the key switches of one request at one level,
// decided from the footprint model and the device's L2 cache before anything runs. The planner
// calls no Backend op: shapes and device facts in, a KeySwitchSchedule out, every decision made
// once (batches, dataflow, chunks, ModUp digit groups, streams, fusion, multi-poly launches).
// KeySwitcher::run (theo/ckks/key_switcher.h) executes it; the stages and the dataflows decide
// nothing. Every schedule computes the same words.
//
// Dataflows (theo/plan/dataflow.h) come from the level's selection (select_dataflows,
// theo/plan/dataflow_selection.h, the only place one is chosen): a lone key switch runs the
// level's `lone` choice, a batch of several or switches read through Galois elements its
// `batched` one; a request may force one (tuners, comparisons).

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "theo/common.h"
#include "theo/plan/dataflow.h"
#include "theo/plan/dataflow_selection.h"
#include "theo/plan/execution_policy.h"

namespace theo {

// The footprint model of L2-aware multi-polynomial caching (Theodosian §IV-A, Table III): the
// bytes a stage of one key switch at a level writes and reads again within the stage, which is
// what must stay in the L2 cache for the stage to run without DRAM traffic beyond its inputs.
// L = the level's limbs, beta = its digits, 4 N bytes per limb:
//   mod_up   = (L + beta (L + alpha)) 4 N   the INTT'd input, read by every digit's BConv, and
//                                             the digits over Q_l u P (BConv out, NTT in / out)
//   mod_down = (2 alpha + 4 L) 4 N          the P parts (INTT, then BConv in), their lifts to Q_l
//                                             (BConv out, NTT, subtraction) and the KeyMult's Q
//                                             parts (read by the subtraction)
//   hoisted  = beta (L + alpha) 4 N         the shared ModUp digits of hoisted rotations (each
//                                             rotation reads them through its permutation)
// Keys are streamed from DRAM once and not counted.
struct KeySwitchFootprint {
  std::size_t mod_up = 0;
  std::size_t mod_down = 0;
  std::size_t hoisted = 0;
  std::size_t per_switch() const { return mod_up > mod_down ? mod_up : mod_down; }
};
// The footprint of one key switch at a level of `limbs` limbs and `beta` digits (N = n).
KeySwitchFootprint key_switch_footprint(u32 limbs, u32 alpha, std::size_t beta, u32 n);

// How ModUp walks the digits of its inputs.
struct ModUpSchedule {
  // The digits' BConv -> NTT sequences run in this many groups of equal size, each group one set
  // of launches over all its digits and inputs.
  u32 digit_groups = 1;
  // Each group's INTT just before its BConv (with digit_groups = digits: Cheddar's O(alpha)-limb
  // order, one digit's INTT -> BConv -> NTT after another) instead of one INTT of every input
  // first.
  bool transform_per_group = false;
  // One input's ModUp after another instead of all inputs in each launch.
  bool input_by_input = false;
};

// How a stage issues its backend ops, which never changes a word (Optimizations documents both).
struct StageIssue {
  // Transforms read out of place and copy on the fly; tails fused into the NTT.
  bool fusion = true;
  // Multi-poly caching: a stage's conversions, a batch's KeyMult under one key and hoisted
  // rotations' KeyMults each in one backend op.
  bool batched_launches = true;
};

// How the results of key switches finish (KeySwitchRequest::finish).
enum class KeySwitchFinish {
  kModDown,         // back to Q_l
  kModDownRescale,  // ModDown merged with the rescale to level - 1: one rounding for both
  kExtended,        // left over Q_l u P (double hoisting: summed, multiplied, finished later)
};

// The decisions for one batch of independent key switches at one level.
struct KeySwitchPlan {
  // Never kAuto: the level's selection resolved.
  Dataflow dataflow = Dataflow::kDPOB;
  // Key switches that run as one batch (each stage one set of launches over all of them).
  u32 batch = 1;
  ModUpSchedule mod_up;
  // Output chunks of the OC dataflows (2..10, output_chunks() of the level's Q_l u P limbs); 1
  // for output-bulk.
  u32 chunks = 1;
  // 2: complementary pipelining (Theodosian §IV-B): KeyMult's P part first, then ModDown's lift
  // of it on the backend's second stream while KeyMult's Q part runs on the first. Inside a
  // caller's fork (Backend::forked()) a plan runs on one stream: forks do not nest.
  u32 streams = 1;
  // ModDown over every poly of the batch in one pass; false: one poly after another.
  bool mod_down_together = true;
  StageIssue issue;
  // One KeyMult pass reads a key that every switch of the batch shares once for all of them
  // (multi-poly caching; not where pipelining splits KeyMult into its P and Q parts).
  bool shared_key_pass = false;
};

// What the planner is told of a key-switch request.
struct KeySwitchWork {
  u32 level = 0;
  std::size_t switches = 0;
  bool finish_only = false;   // extended pairs that only finish (no switch)
  bool shared_input = false;  // one input for every switch (hoisting: one ModUp)
  bool galois = false;        // switches read their input's ModUp through Galois elements
  bool shared_key = false;    // every switch has the same key
  KeySwitchFinish finish = KeySwitchFinish::kModDown;
  u32 batch = 0;                           // switches per batch; 0: the planner's
  std::optional<DataflowChoice> dataflow;  // forced; nullopt: the level's selection
};

// The switches [first, first + count) of a request and their plan.
struct ScheduledBatch {
  std::size_t first = 0;
  std::size_t count = 0;
  KeySwitchPlan plan;
};

// Every decision of one request.
struct KeySwitchSchedule {
  // The issue, streams and ModDown grouping every batch shares; what a finish-only request runs.
  KeySwitchPlan base;
  std::vector<ScheduledBatch> batches;
};

// The cache batches are planned for: Optimizations::cache_bytes, else the device's L2 (0: none).
std::size_t planned_cache_bytes(const Optimizations& opt, std::size_t device_l2_bytes);

// What the planner knows of one level: its limbs and key-switching digits.
struct LevelShape {
  u32 limbs = 0;
  u32 digits = 0;
};

// The planner of one Context: its policy, its ring's N and alpha, every level's shape, the
// device's L2 cache (Backend::l2_bytes(), 0 where there is none) and the tuning table of the
// device and parameter set, if any. Immutable.
class KeySwitchPlanner {
 public:
  // The dataflow of each level comes from policy.key_switching() (select_dataflows): fixed, or
  // for Dataflow::kAuto the table's choice where `table` (may be null) tuned the level, else the
  // footprint model against the cache (no cache without multi_poly_caching: DPOB; with
  // Optimizations::output_chunking, DPOC where the ModUp exceeds the cache).
  KeySwitchPlanner(const ExecutionPolicy& policy, std::size_t device_l2_bytes, u32 n, u32 alpha,
                   std::vector<LevelShape> levels, const TuningTable* table = nullptr);

  KeySwitchFootprint footprint(u32 level) const;
  // The cache batches are planned for: Optimizations::cache_bytes, else the device's L2.
  std::size_t cache_bytes() const { return cache_bytes_; }
  // How many of `count` independent items (key switches; per_item_bytes each, e.g.
  // footprint(level).per_switch()) run as one batch: the most that fit the cache beside
  // `shared_bytes` (data all of them read, e.g. hoisted digits), at least 1 and at most `count`.
  // `count` when the cache is unknown (0: the CPU); 1 with multi_poly_caching off.
  u32 batch_size(std::size_t count, std::size_t per_item_bytes, std::size_t shared_bytes = 0) const;
  // How many groups the L2-aware ModUp splits a level's digits into for `inputs` inputs: 1 when
  // the whole stage (footprint().mod_up per input) fits the cache, without multi_poly_caching, or
  // on a backend with no cache; else the fewest groups of equal size whose working set (the
  // INTT'd inputs, read by every group, and the group's digits over Q_l u P) fits.
  u32 mod_up_digit_groups(u32 level, std::size_t inputs) const;
  // The dataflow a lone key switch at `level` runs, and where the choice came from.
  const LevelDataflow& dataflow(u32 level) const;
  const std::vector<LevelDataflow>& dataflows() const { return selection_; }
  // Whether a lone key switch at `level` runs an output-chunked dataflow (DSOC or DPOC). The
  // Context builds the conversion tables of the chosen chunk count at those levels.
  bool output_chunked(u32 level) const;
  // The level's shape as the footprint model and the tuning table see it.
  KeySwitchShape key_switch_shape(u32 level) const;

  // ModUp of `inputs` inputs at `level`: the L2-aware groups with multi_poly_caching, else
  // Cheddar's order (one digit, one input after another).
  ModUpSchedule mod_up(u32 level, std::size_t inputs) const;
  // `switches` independent key switches at `level` (ModUp, KeyMult, ModDown each), in batches of
  // `batch` (0: batch_size() from the footprint model). The plan is the first batch's; a shorter
  // last batch is planned with plan(level, its size, its size).
  KeySwitchPlan plan(u32 level, std::size_t switches, u32 batch = 0) const;
  // Hoisted rotations: `rotations` key switches at `level` that share one ModUp (KeyMult and
  // ModDown each), in batches that fit the cache beside the shared digits.
  KeySwitchPlan plan_hoisted(u32 level, std::size_t rotations) const;
  // Every decision of a request: its batches (the work's batch size, else the footprint model's;
  // hoisted rotations left extended all in one; extended pairs that only finish in the batches of
  // as many switches) and each batch's plan, the forced dataflow on every batch that reads no
  // Galois element, the shared-key pass where it applies.
  KeySwitchSchedule schedule(const KeySwitchWork& work) const;

  u32 n() const { return n_; }
  u32 alpha() const { return alpha_; }
  u32 levels() const { return static_cast<u32>(levels_.size()); }
  const LevelShape& shape(u32 level) const;

 private:
  Optimizations opt_;
  std::size_t cache_bytes_ = 0;
  u32 n_ = 0;
  u32 alpha_ = 0;
  std::vector<LevelShape> levels_;
  std::vector<LevelDataflow> selection_;
};

// How independent pieces of work (the real and imaginary halves of EvalMod, the giant steps of a
// linear transform) are issued.
enum class WorkLanes {
  kInOrder,     // one after another
  kBatched,     // as one batch: each op one set of launches over all of them
  kTwoStreams,  // halves on the backend's two streams (Backend::fork), overlapping
};
// `items` independent pieces: two streams with pipelining when there are two or more and no fork
// is open (`in_fork`: Backend::forked()), else batched with multi_poly_caching, else in order.
WorkLanes plan_work_lanes(const ExecutionPolicy& policy, std::size_t items, bool in_fork);

}  // namespace theo
