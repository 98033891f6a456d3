#pragma once
// The three stages of hybrid key switching, each pure computation over a batch of polynomials at
// one level (everything in the NTT domain; tables from the Context):
//
//   ModUp    per digit k of the level: INTT (BConv const-mult fused) -> BConv digit -> the rest
//            of Q_l u P -> NTT; the digit's own limbs are copied. ModUp(d)_k lives on Q_l u P.
//   KeyMult  sum_k ModUp(d)_k * (b_k, a_k), one Backend::key_mult on the Q slice and one on the P
//            slice of the key (a Q_max u P key serves every level: its limbs are sliced).
//   ModDown  INTT of the P part ((P/p_j)^-1 fused) -> BConv P -> Q_l -> NTT ->
//            (u_Q - .) * P^-1 in one sub_mul_scalar.
//
// The stages decide nothing: a KeySwitchPlan (theo/plan/key_switch_plan.h) does, and the
// dataflows (dataflows.cpp) arrange the stages by it. The stages are made for one plan and read
// from it how their own ops are issued, which never changes a word (StageIssue): fusion
// (transforms read out of place and copy on the fly; tails fused into the NTT) and batched
// launches (the conversions, KeyMult sums and rotations of a call in one backend op instead of
// one op each). Only KeySwitcher (key_switcher.h) uses them.
//
// Each stage function labels its backend ops with an OpScope ("ModUp", "KeyMult", "ModDown").

#include <span>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"
#include "theo/plan/key_switch_plan.h"

namespace theo::keyswitch {

// ModUp(d) at one level: one polynomial over Q_l u P per non-empty digit of that level.
struct ModUpDigits {
  u32 level = 0;
  std::vector<RnsPoly> digits;  // [i] belongs to ctx.level(level).digits[i]
};

// Terms a KeyMult adds to its Q_l limbs (empty: none). Galois element 1: out0 += scale * add0,
// out1 += scale * add1 (scale one constant per limb of Q_l); Galois element g > 1:
// out0 += phi_g(add0) (add1 and scale empty).
struct KeyMultTerms {
  ConstPolyRef add0 = {};
  ConstPolyRef add1 = {};
  std::span<const u32> scale = {};
  bool empty() const { return add0.words() == 0; }
};

// Which limbs of Q_l u P a KeyMult writes: all of them (the Q_l part, then the P part), or one
// part (the pieces complementary pipelining splits KeyMult into).
enum class KeyMultPart { kAll, kQ, kP };

class Stages {
 public:
  // `ctx` must outlive the stages; `issue` is the plan's.
  Stages(const Context& ctx, const StageIssue& issue) : ctx_(&ctx), issue_(issue) {}

  const Context& context() const { return *ctx_; }
  const StageIssue& issue() const { return issue_; }

  // ---- Stage 1: ModUp --------------------------------------------------------------------------
  // Each input is an NTT-domain polynomial over the level's basis (inputs unchanged). The INTT of
  // every input, then the digits' BConv -> NTT sequences in schedule.digit_groups groups (see
  // ModUpSchedule for the orders).
  std::vector<ModUpDigits> mod_up(std::span<const ConstPolyRef> inputs, u32 level,
                                  const ModUpSchedule& schedule) const;
  // ModUp's first step alone (output-chunked dataflows): the INTT of the whole input, out of
  // place, with every digit's BConv constants; the coefficients every chunk converts from.
  RnsPoly mod_up_coefficients(ConstPolyRef input, u32 level) const;
  // ModUp's first step for one digit (digit-serial dataflows): the INTT of digit `digit`'s limbs
  // of `input`, out of place into `coeffs` (over the digit's limbs), with its BConv constants.
  void mod_up_digit_coefficients(ConstPolyRef input, u32 level, std::size_t digit,
                                 PolyRef coeffs) const;
  // ModUp's conversions onto a target range of Q_l u P: for each i, digit digits[i] converted
  // from its coefficients coeffs[i] (over the digit's limbs) onto the target's limbs outside the
  // digit's own, then NTT'd, into out[i]. The target is the whole of Q_l u P (plans null: the
  // digit's to_before / to_after; out[i] over Q_l u P) or output chunk `chunk` of `plans` (out[i]
  // over the chunk's limbs of Q_l u P). Limbs of the digit's own are not written.
  void mod_up_convert(std::span<const std::size_t> digits, std::span<const ConstPolyRef> coeffs,
                      u32 level, const OutputChunkPlans* plans, std::size_t chunk,
                      std::span<const PolyRef> out) const;

  // ---- Stage 2: KeyMult ------------------------------------------------------------------------
  // digits: the ModUp digits of one input (over Q_l u P). out0 / out1 (over Q_l u P) receive
  // sum_k digits_k * (b_k, a_k) on the limbs `part` names, plus `terms` on the Q_l limbs. galois
  // > 1: of phi_galois(digits), read through the permutation (hoisted rotations share one ModUp
  // and never copy permuted digits). With fusion the terms ride on the KeyMult pass
  // (Backend::key_mult_add_scaled, key_mult_automorphed).
  void key_mult(std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                PolyRef out0, PolyRef out1, KeyMultPart part = KeyMultPart::kAll, u32 galois = 1,
                const KeyMultTerms& terms = {}) const;
  // key_mult for several rotations of the same digits (hoisted baby steps): rotation r (Galois
  // element gs[r] > 1, key *keys[r]) into out0[r] / out1[r], with phi_(gs[r])(add_q0) added to
  // every out0's Q_l limbs. With batched launches one backend op reads the digits once for all
  // (Backend::key_mult_rotations).
  void key_mult_rotations(std::span<const ConstPolyRef> digits, u32 level,
                          std::span<const SwitchingKey* const> keys, std::span<const u32> gs,
                          std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                          ConstPolyRef add_q0 = {}) const;
  // key_mult for several inputs under one key (a batch of relinearizations): input i's digits
  // digits[i] into out0[i] / out1[i]. With batched launches one backend op reads each key word
  // once for all inputs (Backend::key_mult_sums).
  void key_mult_shared_key(std::span<const std::vector<ConstPolyRef>> digits, u32 level,
                           const SwitchingKey& key, std::span<const PolyRef> out0,
                           std::span<const PolyRef> out1) const;
  // KeyMult of some digits on the limbs [first, first + count) of Q_l u P (a range inside Q_l or
  // inside P): out0 / out1 (those limbs) = sum_i data[i] * (b, a) of digit digits[i]'s key chunk,
  // + s * a0 / + s * a1 when a0 has words (a0, a1 over those limbs, s one constant per limb; the
  // accumulation of digit-serial KeyMult and relinearization's P d terms). out0 / out1 alias
  // neither data nor a0 / a1.
  void key_mult_range(std::span<const std::size_t> digits, std::span<const ConstPolyRef> data,
                      u32 level, const SwitchingKey& key, u32 first, u32 count, PolyRef out0,
                      PolyRef out1, ConstPolyRef a0 = {}, ConstPolyRef a1 = {},
                      std::span<const u32> s = {}) const;

  // ---- Stage 3: ModDown ------------------------------------------------------------------------
  // in[i] (over Q_l u P, clobbered) -> out[i] (over Q_l), every poly in one pass. out may be a
  // slice of in.
  void mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;
  // ModDown in two pieces (complementary pipelining). The lift: in[i]'s P limbs (clobbered) ->
  // INTT -> BConv P -> Q_l into out[i] (over Q_l, overlapping no input), then the NTT of out[i]
  // unless fusion puts it into mod_down_finish.
  void mod_down_lift(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;
  // The tail on the lift: out[i] = (in[i]'s Q_l limbs - NTT(lift)) * P^-1, with fusion one
  // ntt_sub_mul_scalar (Cheddar Seq.3).
  void mod_down_finish(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;
  // ModDown merged with the rescale to level - 1 (LevelData::mod_down_rescale): each in[i] over
  // Q_l u P (clobbered: its leaving and P limbs are scratch) becomes out[i] =
  // round(in[i] * Pi_E / (P * Pi_L)) over S_{l-1}, one rounding instead of ModDown's and the
  // rescale's.
  void mod_down_rescale(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;

 private:
  const Context* ctx_;
  StageIssue issue_;
};

}  // namespace theo::keyswitch
