#pragma once
// The dataflows of key switching: each arranges the stages (theo/ckks/key_switch_stages.h) for a
// batch of key switches the way a KeySwitchPlan (theo/plan/key_switch_plan.h) says. A dataflow
// is one small function over the stages; run_dataflow picks it by KeySwitchPlan::dataflow.

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

// Digit-parallel, output-bulk: one ModUp of every input, then key_mult_mod_down over the batch.
void run_dpob(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);
// Digit-parallel, output-chunked: per key switch, ModUp's INTT, then each output chunk's
// BConv -> NTT -> KeyMult over all digits, then ModDown. Needs the level's chunk plans.
void run_dpoc(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);
// The dataflow plan.dataflow names; ParameterError for kAuto (plans come resolved) and for the
// digit-serial dataflows, which this build does not have.
void run_dataflow(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b);

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
