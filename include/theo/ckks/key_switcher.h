#pragma once
// KeySwitcher: hybrid key switching as the scheme ops and circuits call it. Where it is decided
// and where it is computed are apart:
//   decided   theo/plan/key_switch_plan.h     KeySwitchPlanner: dataflow, batch, ModUp digit
//                                              groups, output chunks, streams (footprint model
//                                              against the device's L2 cache)
//   computed  theo/ckks/key_switch_stages.h   KeySwitchStages: ModUp, KeyMult, ModDown over
//                                              batches of polynomials
//   arranged  src/ckks/keyswitch/dataflows.cpp one function per dataflow (DSOB, DPOB, DSOC,
//                                              DPOC) running a plan's batch through the stages
// Every plan computes the same words: d switched with key gives ModDown(KeyMult(ModUp(d), key)).

#include <memory>
#include <span>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/ckks/key_switch_stages.h"
#include "theo/ckks/keys.h"

namespace theo {

class KeySwitcher {
 public:
  explicit KeySwitcher(std::shared_ptr<const Context> ctx);

  // d (level `level`, NTT) switched with `key` -> (out0, out1) over Q_l, as planned.
  void switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                  PolyRef out1) const;
  // Independent key switches: d[i] (level `level`, NTT) switched with *keys[i] -> (out0[i],
  // out1[i]), the words of switch_key per input. In batches of `batch` (0: the planner's batch
  // size from the footprint model), each batch run as the planner plans it.
  void switch_keys(std::span<const ConstPolyRef> d, std::span<const SwitchingKey* const> keys,
                   u32 level, std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                   u32 batch = 0) const;
  // switch_keys with a given plan (e.g. a dataflow forced for a comparison): batches of
  // plan.batch, each run as `plan` says; plan.dataflow = kAuto lets the planner pick per batch.
  // ParameterError when the plan cannot run at the level (DPOC without the level's chunk plans).
  void switch_keys(std::span<const ConstPolyRef> d, std::span<const SwitchingKey* const> keys,
                   u32 level, std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                   const KeySwitchPlan& plan) const;

  // Stages 1 and 2 of one key switch as the level's dataflow arranges them: ext0 / ext1 (over
  // Q_l u P) = KeyMult(ModUp(d), key), + s a0 / + s a1 on the Q_l limbs when a0 has words
  // (a0, a1 over Q_l, s one constant per limb: relinearization merged with ModDown adds P d_0 and
  // P d_1 there). ModDown is the caller's (e.g. merged with a rescale).
  void extend(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef ext0, PolyRef ext1,
              ConstPolyRef a0 = {}, ConstPolyRef a1 = {}, std::span<const u32> s = {}) const;

  // Hoisted rotations, in two steps. ModUp as planned, once per input (inputs unchanged)...
  std::vector<ModUpDigits> mod_up(std::span<const ConstPolyRef> inputs, u32 level) const;
  ModUpDigits mod_up(ConstPolyRef input, u32 level) const;
  // ...then the digits `up` of one input, permuted by galois[i] and switched with *keys[i] ->
  // (out0[i], out1[i]) over Q_l (no galois element may be 1), in batches that fit the cache
  // beside the shared digits; each batch reads the digits through its permutations.
  void switch_keys_hoisted(const ModUpDigits& up, std::span<const u32> galois,
                           std::span<const SwitchingKey* const> keys, std::span<const PolyRef> out0,
                           std::span<const PolyRef> out1) const;

  // KeyMult and ModDown of several key switches at one level, as planned: digits[i] (ModUp
  // digits over Q_l u P) times *keys[i] -> (out0[i], out1[i]) over Q_l; galois (empty, or one per
  // switch) reads switch i's digits through phi_galois[i].
  void key_mult_mod_down(std::span<const std::vector<ConstPolyRef>> digits,
                         std::span<const SwitchingKey* const> keys, u32 level,
                         std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                         std::span<const u32> galois = {}) const;
  // ModDown as planned: in[i] (over Q_l u P, clobbered) -> out[i] (over Q_l).
  void mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;

  const KeySwitchStages& stages() const { return stages_; }
  const KeySwitchPlanner& planner() const { return ctx_->key_switch_planner(); }
  const std::shared_ptr<const Context>& context() const { return ctx_; }

 private:
  std::shared_ptr<const Context> ctx_;
  KeySwitchStages stages_;
};

}  // namespace theo
