#pragma once
// The dataflows of key switching: each arranges the stages (stages.h) for one planned batch of a
// request the way its KeySwitchPlan says. KeySwitcher::run (key_switcher.cpp) hands every batch
// to run_batch and finish-only requests to finish.

#include <functional>
#include <span>
#include <vector>

#include "ckks/keyswitch/stages.h"
#include "theo/ckks/key_switcher.h"

namespace theo::keyswitch {

// A request's switches of one batch, as the dataflows see them: a KeySwitchRequest whose spans are
// the batch's (inputs, Galois elements and terms per switch, or shared by all; keys and outputs
// per switch), checked by KeySwitcher::run.
using Switches = KeySwitchRequest;

// Runs one batch as its plan says:
//   DPOB (and every batch read through Galois elements): ModUp of every input (the plan's digit
//     groups; one ModUp for a shared input), then KeyMult of every switch (one pass under a
//     shared key, or all hoisted rotations in one pass), then the finish
//   DSOB, DSOC, DPOC: one switch after another, mod_up_key_mult() under the dataflow, then the
//   finish
// A ModDown finish is pipelined with two streams: KeyMult's P limbs first, ModDown's lift of them
// on the second stream while the Q limbs are computed on the first.
void run_batch(const Stages& st, const KeySwitchPlan& plan, const Switches& s);

// Finishes extended pairs: ext (c0, c1 of each result in turn, over Q_l u P, clobbered) ->
// out0[i], out1[i] by ModDown (over Q_l; every poly in one pass when the plan says so) or by
// ModDown merged with the rescale (over Q_{l-1}).
void finish(const Stages& st, const KeySwitchPlan& plan, KeySwitchFinish how,
            std::span<const PolyRef> ext, std::span<const PolyRef> out0,
            std::span<const PolyRef> out1, u32 level);

// Stages 1 and 2 of one key switch under a digit-serial or output-chunked dataflow: ext0 / ext1
// (over Q_l u P) = KeyMult(ModUp(d), key) + terms on the Q_l limbs:
//   DSOB  per digit: its INTT, its conversion onto all of Q_l u P, and its KeyMult added to the
//         running sum (two accumulators used in turn, the last digit's sum landing in ext)
//   DSOC  the INTT of the input; per output chunk, per digit: the digit's conversion onto the
//         chunk and its KeyMult added to the chunk's running sum
//   DPOC  the INTT of the input; per output chunk: every digit's conversion onto the chunk in one
//         set of launches, then one KeyMult of the chunk over all digits
// The chunks containing P come first; on_p_ready (may be empty) runs once the P limbs of ext are
// final, before the last Q_l limbs are written.
struct ModUpKeyMult {
  u32 level = 0;
  ConstPolyRef d;
  const SwitchingKey* key = nullptr;
  PolyRef ext0;
  PolyRef ext1;
  KeyMultTerms terms = {};  // Galois element 1 only
};
void mod_up_key_mult(const Stages& st, const KeySwitchPlan& plan, const ModUpKeyMult& e,
                     const std::function<void()>& on_p_ready);

}  // namespace theo::keyswitch
