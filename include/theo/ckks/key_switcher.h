#pragma once
// KeySwitcher: hybrid key switching, the one door through which the scheme ops and circuits
// switch keys. A request says what is switched, with which keys, and how the result finishes;
// run() asks the planner once for every decision and runs the stages as it says:
//
//   decided   theo/plan/key_switch_plan.h        KeySwitchPlanner::schedule: the batches, each
//                                                 one's dataflow, chunks and ModUp digit groups,
//                                                 streams, fusion, multi-poly launches
//   computed  src/ckks/keyswitch/stages.h        ModUp, KeyMult, ModDown over batches of polys
//   arranged  src/ckks/keyswitch/dataflows.cpp   one function per dataflow (DSOB, DPOB, DSOC,
//                                                 DPOC) running a batch through the stages
//   finished  src/ckks/keyswitch/mod_down.cpp    ModDown, or ModDown merged with the rescale
//
// Every plan computes the same words: input d switched with key (b, a) gives
// ModDown(KeyMult(ModUp(d), key) + P * terms), the terms being added before the finish.

#include <memory>
#include <optional>
#include <span>

#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"

namespace theo {

// One call of KeySwitcher::run. Spans are read during the call only.
struct KeySwitchRequest {
  u32 level = 0;
  // What is switched (NTT domain, over Q_l): one polynomial per switch, or one polynomial that
  // every switch shares (hoisting: its ModUp is computed once, and switch i reads it through
  // phi_galois[i]).
  std::span<const ConstPolyRef> inputs = {};
  // Instead of inputs: pairs an earlier run left extended (KeySwitchFinish::kExtended; c0, c1 of
  // each result in turn, over Q_l u P, clobbered), summed or multiplied since, which only finish.
  std::span<const PolyRef> extended = {};
  // One key per switch (not with `extended`).
  std::span<const SwitchingKey* const> keys = {};
  // Empty, or one Galois element (> 1) per switch: the switch reads its input's ModUp through
  // phi_g (ModUp commutes with phi_g), so hoisted rotations never copy permuted digits.
  std::span<const u32> galois = {};
  // Terms added to the Q_l limbs of each switch's extended result before it finishes, one per
  // switch or one shared (empty: none). Without Galois elements: out0 += scale * add0[i],
  // out1 += scale * add1[i], scale one constant per limb of Q_l (P mod q_i: relinearization's
  // d_0 and d_1 as P * d_j, which ModDown turns into + d_j exactly). With Galois elements:
  // out0 += phi_g(add0[i]) (a hoisted rotation's P * c0); add1 and scale empty.
  std::span<const ConstPolyRef> add0 = {};
  std::span<const ConstPolyRef> add1 = {};
  std::span<const u32> scale = {};
  // How the results finish: out0[i] / out1[i] over Q_l (kModDown), over Q_{l-1} (kModDownRescale,
  // one rounding for both divisions; level >= 1), or over Q_l u P (kExtended).
  KeySwitchFinish finish = KeySwitchFinish::kModDown;
  std::span<const PolyRef> out0 = {};
  std::span<const PolyRef> out1 = {};
  // Switches per batch (0: the planner's, from the footprint model and the cache).
  u32 batch = 0;
  // A dataflow forced on every switch that can run it (tuners, comparisons); nullopt: the level's
  // selection. ParameterError when the level lacks its chunk tables.
  std::optional<DataflowChoice> dataflow = std::nullopt;
};

class KeySwitcher {
 public:
  explicit KeySwitcher(std::shared_ptr<const Context> ctx);

  // Runs the request as planned (ParameterError naming what is inconsistent: counts, bases,
  // Galois element 1, terms, a null key; ContextError for a key of another Context).
  void run(const KeySwitchRequest& request) const;

  // run() of one input with `key`, finished by ModDown: d (level `level`, over Q_l) -> (out0,
  // out1) over Q_l.
  void switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                  PolyRef out1) const;

  // What run() would do with the request: every decision, made and not run (its batches for a
  // caller that interleaves other work with them, reports, benchmarks).
  KeySwitchSchedule plan(const KeySwitchRequest& request) const;

  const std::shared_ptr<const Context>& context() const { return ctx_; }

 private:
  std::shared_ptr<const Context> ctx_;
};

}  // namespace theo
