#pragma once
// The dataflows of key switching: each arranges the stages (theo/ckks/key_switch_stages.h) for a
// batch of key switches the way a KeySwitchPlan (theo/plan/key_switch_plan.h) says. A dataflow
// is one small function over the stages; run_dataflow picks it by KeySwitchPlan::dataflow.

#include <functional>
#include <span>
#include <vector>

#include "theo/ckks/key_switch_stages.h"

namespace theo::keyswitch {

// Key switches d[i] (level `level`, NTT) with *keys[i] -> (out0[i], out1[i]) over Q_l.
struct Batch {
  u32 level = 0;
  std::span<const ConstPolyRef> inputs;
  std::span<const SwitchingKey* const> keys;
  std::span<const PolyRef> out0;
  std::span<const PolyRef> out1;
};

// Digit-parallel, output-bulk: one ModUp of every input (in the plan's ModUp digit groups), then
// key_mult_mod_down over the batch.
void run_dpob(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);
// DSOB, DSOC, DPOC: per key switch, extend() under the plan's dataflow, then ModDown (with two
// streams, ModDown's lift of the P limbs on the second stream as soon as extend() has written
// them, while the rest of the Q_l limbs are computed on the first).
void run_serial_or_chunked(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);
// The dataflow plan.dataflow names; ParameterError for kAuto (plans come resolved) and for an
// output-chunked dataflow whose chunk tables the level lacks.
void run_dataflow(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);

// Stages 1 and 2 of one key switch: ext0 / ext1 (over Q_l u P) = KeyMult(ModUp(d), key), plus
// s * a0 / s * a1 on the Q_l limbs when a0 has words (relinearization merged with ModDown adds
// P d_0, P d_1 there), arranged as plan.dataflow says:
//   DPOB  ModUp of every digit (the plan's digit groups), then one KeyMult pass
//   DSOB  per digit: its INTT, its conversion onto all of Q_l u P, and its KeyMult added to the
//         running sum (two accumulators used in turn, the last digit's sum landing in ext)
//   DSOC  the INTT of the input; per output chunk, per digit: the digit's conversion onto the
//         chunk and its KeyMult added to the chunk's running sum
//   DPOC  the INTT of the input; per output chunk: every digit's conversion onto the chunk in one
//         set of launches, then one KeyMult of the chunk over all digits
// The chunks containing P come first; on_p_ready (may be empty) runs once the P limbs of ext are
// final, before the last Q_l limbs are written.
struct Extension {
  u32 level = 0;
  ConstPolyRef d;
  const SwitchingKey* key = nullptr;
  PolyRef ext0;
  PolyRef ext1;
  ConstPolyRef a0;  // optional, over Q_l
  ConstPolyRef a1;
  std::span<const u32> s;  // one constant per limb of Q_l, with a0
};
void extend(const KeySwitchStages& st, const KeySwitchPlan& plan, const Extension& e,
            const std::function<void()>& on_p_ready);

// Stages 2 and 3 of several key switches at one level: digits[i] (the ModUp digits of switch i
// over Q_l u P) times *keys[i] -> (out0[i], out1[i]) over Q_l (outputs must not overlap each
// other). galois (empty, or one per switch): read switch i's digits through phi_galois[i]
// (hoisted rotations need no permuted copies). One stream: every KeyMult, then ModDown. Two
// streams (plan.streams, outside a caller's fork): every switch's KeyMult P part, fork(), the
// ModDown lift of those P parts on the branch, end_fork(), every Q part of KeyMult on the main
// stream, join(), then the ModDown tails.
void key_mult_mod_down(const KeySwitchStages& st, const KeySwitchPlan& plan,
                       std::span<const std::vector<ConstPolyRef>> digits,
                       std::span<const SwitchingKey* const> keys, u32 level,
                       std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                       std::span<const u32> galois = {});
// ModDown of a batch: every poly in one pass (plan.mod_down_together), else one after another.
void mod_down(const KeySwitchStages& st, const KeySwitchPlan& plan, std::span<const PolyRef> in,
              std::span<const PolyRef> out, u32 level);

// Every digit of every ModUp result, as read-only references.
std::vector<std::vector<ConstPolyRef>> digit_refs(std::span<const ModUpDigits> up);

}  // namespace theo::keyswitch
