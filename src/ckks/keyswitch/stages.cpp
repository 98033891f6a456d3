// The stages of hybrid key switching (stages.h): ModUp, KeyMult, ModDown.
//
// A stage issues the same modular arithmetic per word however its calls are grouped: the INTT of
// a digit's limbs with that digit's constants is what the INTT of the whole input computes on
// those limbs, and a BConv row or a KeyMult limb does not depend on which other rows or limbs
// share the launch. So every ModUpSchedule, every KeyMult part and chunk, and ModDown whole or in
// two pieces give the same words.

#include <algorithm>
#include <deque>
#include <functional>
#include <string>

#include "ckks/batched_ops.h"
#include "ckks/keyswitch/stages.h"
#include "ckks/rescaler.h"
#include "theo/errors.h"
#include "theo/ring/op_scope.h"

namespace theo::keyswitch {

namespace {

// The word ranges of a and b overlap.
bool overlap(ConstPolyRef a, ConstPolyRef b) {
  const std::less<const u32*> lt;  // a total order on unrelated pointers
  return a.words() > 0 && b.words() > 0 && lt(a.data, b.data + b.words()) &&
         lt(b.data, a.data + a.words());
}

void require_key(const Context& ctx, const SwitchingKey& key, const char* op) {
  if (key.empty() || key.context_id() != ctx.id() || key.dnum() != ctx.dnum()) {
    throw ContextError(std::string("KeySwitcher::") + op +
                       ": the switching key is empty or not of this Context");
  }
}

// Where the limbs [first, first + count) of Q_l u P start in a Q_max u P key: a range inside
// Q_l or inside P.
u32 key_limb(const Context& ctx, const LevelData& lv, u32 first) {
  return first < lv.limbs ? lv.first_id + first : ctx.q_max_limbs() + (first - lv.limbs);
}

// KeyMult's Q_l part or P part: its limbs in the digits / outputs (over Q_l u P).
struct PartLimbs {
  u32 start, count;
};
PartLimbs part_limbs(const Context& ctx, const LevelData& lv, bool p_part) {
  return p_part ? PartLimbs{lv.limbs, ctx.alpha()} : PartLimbs{0, lv.limbs};
}

// The a halves of compact keys (SwitchingKey::make_compact) expanded for one KeyMult call: the
// words of a limb depend only on (seed, digit, prime), so a slice expands on its own. A deque, so
// that the references handed out stay valid while it grows; it lives as long as that call.
using ExpandedA = std::deque<RnsPoly>;

// The a slice of digit chunk `chunk` for the key limbs [key_first, key_first + count).
ConstPolyRef a_slice(const Context& ctx, const SwitchingKey& key, u32 chunk, u32 key_first,
                     u32 count, ExpandedA& expanded) {
  if (!key.compact()) return key.a(chunk).slice(key_first, count);
  const ConstPolyRef b = key.b(chunk).slice(key_first, count);
  Backend& be = ctx.backend();
  expanded.push_back(be.make_poly(b.basis));
  be.sample_uniform(key.a_seed()->seed, chunk, expanded.back().ref());
  return expanded.back().cref();
}

// The key slices of every digit for the limbs [first, first + count) of Q_l u P.
void key_slices(const Context& ctx, const LevelData& lv, const SwitchingKey& key, u32 first,
                u32 count, std::vector<ConstPolyRef>& kb, std::vector<ConstPolyRef>& ka,
                ExpandedA& expanded) {
  const u32 key_first = key_limb(ctx, lv, first);
  for (const DigitPlan& d : lv.digits) {
    kb.push_back(key.b(d.chunk).slice(key_first, count));
    ka.push_back(a_slice(ctx, key, d.chunk, key_first, count, expanded));
  }
}

// One part of KeyMult, checked. Q part: optionally + s a0 / + s a1 (over Q_l, galois 1) in the
// same pass; add_q0 in the Q part only.
void key_mult_part(const Context& ctx, const StageIssue& issue,
                   std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                   PolyRef out0, PolyRef out1, bool p_part, u32 galois, const KeyMultTerms& terms) {
  const OpScope scope("KeyMult");
  const LevelData& lv = ctx.level(level);
  require_key(ctx, key, "key_mult");
  if (digits.size() != lv.digits.size()) {
    throw ParameterError("KeySwitcher::key_mult: digit count does not match level " +
                         std::to_string(level));
  }
  const auto [start, count] = part_limbs(ctx, lv, p_part);
  std::vector<ConstPolyRef> d, kb, ka;
  ExpandedA expanded;
  for (const ConstPolyRef& x : digits)
    d.push_back(x.slice(start, count));
  key_slices(ctx, lv, key, start, count, kb, ka, expanded);
  if (!terms.empty() &&
      (!(terms.add0.basis == lv.q_basis) ||
       (galois <= 1 && (!(terms.add1.basis == lv.q_basis) || terms.scale.size() != lv.limbs)))) {
    throw ParameterError("KeySwitcher: the added terms must be over Q_l of level " +
                         std::to_string(level) + " (with one scale constant per limb)");
  }
  Backend& be = ctx.backend();
  const PolyRef o0 = out0.slice(start, count), o1 = out1.slice(start, count);
  if (galois > 1) {
    be.key_mult_automorphed(d, galois, kb, ka, o0, o1, p_part ? ConstPolyRef{} : terms.add0);
  } else if (p_part || terms.empty()) {
    be.key_mult(d, kb, ka, o0, o1);
  } else if (issue.fusion) {
    be.key_mult_add_scaled(d, kb, ka, o0, o1, terms.add0, terms.add1, terms.scale);
  } else {
    be.key_mult(d, kb, ka, o0, o1);
    be.mul_scalar_add(terms.add0, terms.scale, o0, o0);
    be.mul_scalar_add(terms.add1, terms.scale, o1, o1);
  }
}

// ModDown's first step, after the checks `op` needs (one output per input, every input over Q_l u
// P and, with check_out_q, every output over Q_l): the P parts of the inputs, to the coefficient
// domain in place.
std::vector<PolyRef> mod_down_p_parts(const Context& ctx, const char* op,
                                      std::span<const PolyRef> in, std::span<const PolyRef> out,
                                      u32 level, bool check_out_q) {
  const LevelData& lv = ctx.level(level);
  if (in.size() != out.size()) {
    throw ParameterError(std::string("KeySwitcher::") + op + ": one output per input is needed");
  }
  std::vector<PolyRef> p_parts;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!(in[i].basis == lv.pq_basis)) {
      throw ParameterError(std::string("KeySwitcher::") + op +
                           ": input is not over Q_l u P of level " + std::to_string(level));
    }
    if (check_out_q && !(out[i].basis == lv.q_basis)) {
      throw ParameterError(std::string("KeySwitcher::") + op +
                           ": output is not over Q_l of level " + std::to_string(level));
    }
    p_parts.push_back(in[i].slice(lv.limbs, ctx.alpha()));
  }
  ctx.backend().intt(p_parts, lv.mod_down_intt_consts);
  return p_parts;
}

}  // namespace

// ---- Stage 1: ModUp
// ------------------------------------------------------------------------------

std::vector<ModUpDigits> Stages::mod_up(std::span<const ConstPolyRef> inputs, u32 level,
                                        const ModUpSchedule& schedule) const {
  const Context& ctx = *ctx_;
  const LevelData& lv = ctx.level(level);
  for (const ConstPolyRef& in : inputs) {
    if (!(in.basis == lv.q_basis)) {
      throw ParameterError("KeySwitcher::mod_up: input is not over the basis of level " +
                           std::to_string(level));
    }
  }
  if (inputs.empty()) return {};
  if (schedule.input_by_input && inputs.size() > 1) {
    std::vector<ModUpDigits> result;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      result.push_back(std::move(mod_up(inputs.subspan(i, 1), level, schedule).front()));
    return result;
  }
  const OpScope scope("ModUp");
  Backend& be = ctx.backend();
  std::vector<ModUpDigits> result(inputs.size());
  for (auto& r : result) {
    r.level = level;
    for (std::size_t k = 0; k < lv.digits.size(); ++k)
      r.digits.push_back(be.make_poly(lv.pq_basis));
  }
  const bool fused = issue_.fusion;
  std::vector<RnsPoly> coeffs;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    coeffs.push_back(be.make_poly(lv.q_basis));

  // The INTT of digits [first, last) of every input into `coeffs`, with those digits' BConv
  // constants (the digits tile S_l in order, so they are a range of mod_up_intt_consts).
  const auto transform = [&](std::size_t first, std::size_t last) {
    const u32 lo = lv.digits[first].start;
    const u32 limbs = lv.digits[last - 1].start + lv.digits[last - 1].count - lo;
    const std::span<const u32> consts =
        std::span<const u32>(lv.mod_up_intt_consts).subspan(lo, limbs);
    if (fused) {
      // One INTT call over every digit of every input, reading the inputs in place (out of place
      // into `coeffs`) and echoing each digit's words into its own limbs of its ModUp output: no
      // copy of the input and no per-digit copy.
      std::vector<PolyRef> slices, echoes;
      std::vector<ConstPolyRef> src;
      std::vector<u32> all_consts;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        for (std::size_t k = first; k < last; ++k) {
          const DigitPlan& d = lv.digits[k];
          slices.push_back(coeffs[i].slice(d.start, d.count));
          src.push_back(inputs[i].slice(d.start, d.count));
          echoes.push_back(result[i].digits[k].slice(d.start, d.count));
        }
        all_consts.insert(all_consts.end(), consts.begin(), consts.end());
      }
      be.intt(slices, all_consts, src, echoes);
      return;
    }
    // One INTT of a copy of the inputs' limbs, with every digit's constants side by side; each
    // digit's own limbs are copied from the input with its conversions below.
    std::vector<PolyRef> coeff_refs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      be.copy(inputs[i].slice(lo, limbs), coeffs[i].slice(lo, limbs));
      coeff_refs.push_back(coeffs[i].slice(lo, limbs));
    }
    be.intt(coeff_refs, consts);
  };

  const std::size_t beta = lv.digits.size();
  if (beta == 0) return result;
  const std::size_t groups = std::clamp<std::size_t>(schedule.digit_groups, 1, beta);
  const std::size_t per_group = (beta + groups - 1) / groups;
  if (!schedule.transform_per_group) transform(0, beta);
  for (std::size_t first = 0; first < beta; first += per_group) {
    const std::size_t last = std::min(beta, first + per_group);
    if (schedule.transform_per_group) transform(first, last);
    std::vector<PolyRef> converted;  // the group's non-digit slices, NTT'd together
    std::vector<BConvJob> jobs;      // the group's conversions, issued together
    for (std::size_t k = first; k < last; ++k) {
      const DigitPlan& d = lv.digits[k];
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        RnsPoly& out = result[i].digits[k];
        const ConstPolyRef digit = coeffs[i].slice(d.start, d.count);
        if (d.to_before) {
          const PolyRef before = out.slice(0, d.start);
          jobs.push_back({d.to_before.get(), digit, before});
          converted.push_back(before);
        }
        const u32 after_start = d.start + d.count;
        const PolyRef after = out.slice(after_start, out.limbs() - after_start);
        jobs.push_back({d.to_after.get(), digit, after});
        converted.push_back(after);
        if (!fused) be.copy(inputs[i].slice(d.start, d.count), out.slice(d.start, d.count));
      }
    }
    detail::bconv_matmul_jobs(be, jobs, issue_.batched_launches);
    if (fused)
      be.ntt(converted);
    else
      detail::ntt_per_basis(be, converted);
  }
  return result;
}

RnsPoly Stages::mod_up_coefficients(ConstPolyRef input, u32 level) const {
  const LevelData& lv = ctx_->level(level);
  if (!(input.basis == lv.q_basis)) {
    throw ParameterError("KeySwitcher::mod_up: input is not over the basis of level " +
                         std::to_string(level));
  }
  Backend& be = ctx_->backend();
  RnsPoly coeffs = be.make_poly(lv.q_basis);
  const OpScope scope("ModUp");
  const PolyRef all[] = {coeffs.ref()};
  const ConstPolyRef src[] = {input};
  be.intt(all, lv.mod_up_intt_consts, src);
  return coeffs;
}

void Stages::mod_up_digit_coefficients(ConstPolyRef input, u32 level, std::size_t digit,
                                       PolyRef coeffs) const {
  const LevelData& lv = ctx_->level(level);
  if (!(input.basis == lv.q_basis)) {
    throw ParameterError("KeySwitcher::mod_up: input is not over the basis of level " +
                         std::to_string(level));
  }
  const DigitPlan& d = lv.digits.at(digit);
  const ConstPolyRef own = input.slice(d.start, d.count);
  if (!(coeffs.basis == own.basis)) {
    throw ParameterError("KeySwitcher::mod_up_digit_coefficients: output is not over digit " +
                         std::to_string(digit) + "'s limbs");
  }
  const OpScope scope("ModUp");
  Backend& be = ctx_->backend();
  const PolyRef out[] = {coeffs};
  if (issue_.fusion) {
    const ConstPolyRef src[] = {own};
    be.intt(out, d.intt_post_consts, src);
  } else {
    be.copy(own, coeffs);
    be.intt(out, d.intt_post_consts);
  }
}

void Stages::mod_up_convert(std::span<const std::size_t> digits,
                            std::span<const ConstPolyRef> coeffs, u32 level,
                            const OutputChunkPlans* plans, std::size_t chunk,
                            std::span<const PolyRef> out) const {
  const LevelData& lv = ctx_->level(level);
  if (coeffs.size() != digits.size() || out.size() != digits.size()) {
    throw ParameterError(
        "KeySwitcher::mod_up_convert: one coefficient poly and one output per "
        "digit are needed");
  }
  const u32 extended = lv.limbs + ctx_->alpha();
  const u32 first = plans != nullptr ? plans->ranges.at(chunk).first : 0;
  const u32 count = plans != nullptr ? plans->ranges.at(chunk).count : extended;
  const Basis target = lv.pq_basis.slice(first, count);
  const OpScope scope("ModUp");
  std::vector<BConvJob> jobs;
  std::vector<PolyRef> converted;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const DigitPlan& d = lv.digits.at(digits[i]);
    if (!(coeffs[i].basis == lv.q_basis.slice(d.start, d.count)) || !(out[i].basis == target)) {
      throw ParameterError("KeySwitcher::mod_up_convert: digit " + std::to_string(digits[i]) +
                           "'s coefficients or output have the wrong basis at level " +
                           std::to_string(level));
    }
    const auto piece = [&](const BConvPlan* plan, u32 at, u32 limbs) {
      const PolyRef o = out[i].slice(at - first, limbs);
      jobs.push_back({plan, coeffs[i], o});
      converted.push_back(o);
    };
    if (plans == nullptr) {
      if (d.to_before) piece(d.to_before.get(), 0, d.start);
      piece(d.to_after.get(), d.start + d.count, extended - d.start - d.count);
    } else {
      for (const ChunkPiece& p : plans->pieces.at(chunk).at(digits[i]))
        piece(p.plan.get(), p.first, p.count);
    }
  }
  detail::bconv_matmul_jobs(ctx_->backend(), jobs, issue_.batched_launches);
  if (issue_.fusion)
    ctx_->backend().ntt(converted);
  else
    detail::ntt_per_basis(ctx_->backend(), converted);
}

// ---- Stage 2: KeyMult
// ----------------------------------------------------------------------------

void Stages::key_mult(std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                      PolyRef out0, PolyRef out1, KeyMultPart part, u32 galois,
                      const KeyMultTerms& terms) const {
  // The Q_l limbs (with the terms), then the P limbs: the two passes pipelining splits apart.
  if (part != KeyMultPart::kP)
    key_mult_part(*ctx_, issue_, digits, level, key, out0, out1, /*p_part=*/false, galois, terms);
  if (part != KeyMultPart::kQ)
    key_mult_part(*ctx_, issue_, digits, level, key, out0, out1, /*p_part=*/true, galois, {});
}

void Stages::key_mult_rotations(std::span<const ConstPolyRef> digits, u32 level,
                                std::span<const SwitchingKey* const> keys, std::span<const u32> gs,
                                std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                                ConstPolyRef add_q0) const {
  if (keys.size() != gs.size() || out0.size() != gs.size() || out1.size() != gs.size()) {
    throw ParameterError(
        "KeySwitcher::key_mult_rotations: one key and one output pair per "
        "rotation are needed");
  }
  if (!issue_.batched_launches) {
    for (std::size_t r = 0; r < gs.size(); ++r)
      key_mult(digits, level, *keys[r], out0[r], out1[r], KeyMultPart::kAll, gs[r], {add_q0});
    return;
  }
  const OpScope scope("KeyMult");
  const LevelData& lv = ctx_->level(level);
  if (digits.size() != lv.digits.size()) {
    throw ParameterError("KeySwitcher::key_mult_rotations: digit count does not match level " +
                         std::to_string(level));
  }
  if (add_q0.words() != 0 && !(add_q0.basis == lv.q_basis)) {
    throw ParameterError("KeySwitcher::key_mult_rotations: add_q0 must be over Q_l of level " +
                         std::to_string(level));
  }
  for (std::size_t r = 0; r < gs.size(); ++r) {
    require_key(*ctx_, *keys[r], "key_mult_rotations");
    if (gs[r] <= 1) {
      throw ParameterError("KeySwitcher::key_mult_rotations: Galois element " +
                           std::to_string(gs[r]) + " is not a rotation");
    }
  }
  // The Q_l limbs (with add_q0), then the P limbs, as key_mult's parts.
  for (const bool p_part : {false, true}) {
    const auto [start, count] = part_limbs(*ctx_, lv, p_part);
    std::vector<ConstPolyRef> d, kb, ka;
    std::vector<PolyRef> o0, o1;
    ExpandedA expanded;
    for (const ConstPolyRef& x : digits)
      d.push_back(x.slice(start, count));
    for (std::size_t r = 0; r < gs.size(); ++r) {
      key_slices(*ctx_, lv, *keys[r], start, count, kb, ka, expanded);
      o0.push_back(out0[r].slice(start, count));
      o1.push_back(out1[r].slice(start, count));
    }
    ctx_->backend().key_mult_rotations(d, gs, kb, ka, o0, o1, p_part ? ConstPolyRef{} : add_q0);
  }
}

void Stages::key_mult_shared_key(std::span<const std::vector<ConstPolyRef>> digits, u32 level,
                                 const SwitchingKey& key, std::span<const PolyRef> out0,
                                 std::span<const PolyRef> out1) const {
  if (out0.size() != digits.size() || out1.size() != digits.size()) {
    throw ParameterError("KeySwitcher::key_mult_shared_key: one output pair per input is needed");
  }
  if (!issue_.batched_launches || digits.size() <= 1) {
    for (std::size_t i = 0; i < digits.size(); ++i)
      key_mult(digits[i], level, key, out0[i], out1[i]);
    return;
  }
  const OpScope scope("KeyMult");
  const LevelData& lv = ctx_->level(level);
  require_key(*ctx_, key, "key_mult_shared_key");
  for (const std::vector<ConstPolyRef>& d : digits) {
    if (d.size() != lv.digits.size()) {
      throw ParameterError("KeySwitcher::key_mult_shared_key: digit count does not match level " +
                           std::to_string(level));
    }
  }
  // The Q_l limbs, then the P limbs, as key_mult's parts; the key's chunks are the shared terms.
  for (const bool p_part : {false, true}) {
    const auto [start, count] = part_limbs(*ctx_, lv, p_part);
    std::vector<ConstPolyRef> d, kb, ka;
    std::vector<PolyRef> o0, o1;
    ExpandedA expanded;
    key_slices(*ctx_, lv, key, start, count, kb, ka, expanded);
    for (std::size_t i = 0; i < digits.size(); ++i) {
      for (const ConstPolyRef& x : digits[i])
        d.push_back(x.slice(start, count));
      o0.push_back(out0[i].slice(start, count));
      o1.push_back(out1[i].slice(start, count));
    }
    ctx_->backend().key_mult_sums(d, kb, ka, o0, o1);
  }
}

void Stages::key_mult_range(std::span<const std::size_t> digits, std::span<const ConstPolyRef> data,
                            u32 level, const SwitchingKey& key, u32 first, u32 count, PolyRef out0,
                            PolyRef out1, ConstPolyRef a0, ConstPolyRef a1,
                            std::span<const u32> s) const {
  const LevelData& lv = ctx_->level(level);
  require_key(*ctx_, key, "key_mult_range");
  if (data.size() != digits.size() || digits.empty()) {
    throw ParameterError("KeySwitcher::key_mult_range: one data poly per digit is needed");
  }
  if (count == 0 || first + count > lv.limbs + ctx_->alpha() ||
      (first < lv.limbs && first + count > lv.limbs)) {
    throw ParameterError("KeySwitcher::key_mult_range: limbs [" + std::to_string(first) + ", " +
                         std::to_string(first + count) + ") are not a range inside Q_l or P of " +
                         "level " + std::to_string(level));
  }
  const u32 key_first = key_limb(*ctx_, lv, first);
  std::vector<ConstPolyRef> kb, ka;
  ExpandedA expanded;
  for (const std::size_t k : digits) {
    const DigitPlan& d = lv.digits.at(k);
    kb.push_back(key.b(d.chunk).slice(key_first, count));
    ka.push_back(a_slice(*ctx_, key, d.chunk, key_first, count, expanded));
  }
  const OpScope scope("KeyMult");
  Backend& be = ctx_->backend();
  if (a0.words() == 0) {
    be.key_mult(data, kb, ka, out0, out1);
  } else if (issue_.fusion) {
    be.key_mult_add_scaled(data, kb, ka, out0, out1, a0, a1, s);
  } else {
    be.key_mult(data, kb, ka, out0, out1);
    be.mul_scalar_add(a0, s, out0, out0);
    be.mul_scalar_add(a1, s, out1, out1);
  }
}

// ---- Stage 3: ModDown
// ----------------------------------------------------------------------------

void Stages::mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const {
  const OpScope scope("ModDown");
  const std::vector<PolyRef> p_parts = mod_down_p_parts(*ctx_, "mod_down", in, out, level, false);
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  bool out_overlaps_in = false;
  for (const PolyRef& o : out)
    for (const PolyRef& x : in)
      out_overlaps_in = out_overlaps_in || overlap(o, x);
  if (issue_.fusion && !out_overlaps_in) {
    // BConv straight into the outputs, then one NTT whose last phase applies the tail
    // (u_Q - .) * P^-1 (Cheddar Seq.3): no lifted temporary and no separate sub_mul_scalar.
    std::vector<ConstPolyRef> u_q;
    std::vector<BConvJob> jobs;
    for (std::size_t i = 0; i < in.size(); ++i) {
      jobs.push_back({lv.mod_down.get(), p_parts[i], out[i]});
      u_q.push_back(in[i].slice(0, lv.limbs));
    }
    detail::bconv_matmul_jobs(be, jobs, issue_.batched_launches);
    be.ntt_sub_mul_scalar(out, {}, u_q, 0, lv.p_inv);
    return;
  }
  std::vector<RnsPoly> lifted;
  std::vector<PolyRef> lifted_refs;
  for (const PolyRef& p : p_parts) {
    lifted.push_back(be.make_poly(lv.q_basis));
    be.bconv_matmul(*lv.mod_down, p, lifted.back().ref());
    lifted_refs.push_back(lifted.back().ref());
  }
  be.ntt(lifted_refs);
  for (std::size_t i = 0; i < in.size(); ++i) {
    be.sub_mul_scalar(in[i].slice(0, lv.limbs), lifted[i].cref(), lv.p_inv, out[i]);
  }
}

void Stages::mod_down_lift(std::span<const PolyRef> in, std::span<const PolyRef> out,
                           u32 level) const {
  const OpScope scope("ModDown");
  const std::vector<PolyRef> p_parts =
      mod_down_p_parts(*ctx_, "mod_down_lift", in, out, level, true);
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  std::vector<BConvJob> jobs;
  for (std::size_t i = 0; i < in.size(); ++i)
    jobs.push_back({lv.mod_down.get(), p_parts[i], out[i]});
  detail::bconv_matmul_jobs(be, jobs, issue_.batched_launches);
  if (!issue_.fusion) be.ntt(out);
}

void Stages::mod_down_finish(std::span<const PolyRef> in, std::span<const PolyRef> out,
                             u32 level) const {
  const OpScope scope("ModDown");
  const LevelData& lv = ctx_->level(level);
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down_finish: one output per input is needed");
  }
  Backend& be = ctx_->backend();
  std::vector<ConstPolyRef> u_q;
  for (const PolyRef& x : in)
    u_q.push_back(x.slice(0, lv.limbs));
  if (issue_.fusion) {
    be.ntt_sub_mul_scalar(out, {}, u_q, 0, lv.p_inv);
    return;
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    be.sub_mul_scalar(u_q[i], out[i], lv.p_inv, out[i]);
}

void Stages::mod_down_rescale(std::span<const PolyRef> in, std::span<const PolyRef> out,
                              u32 level) const {
  if (level == 0) throw LevelError("cannot rescale at level 0: no level below it");
  const OpScope scope("ModDown");
  const LevelData& lv = ctx_->level(level);
  const RescalePlan& rs = lv.mod_down_rescale;
  Backend& be = ctx_->backend();
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down_rescale: one output per input is needed");
  }
  for (const PolyRef& x : in) {
    if (!(x.basis == lv.pq_basis)) {
      throw ParameterError("mod_down_rescale: polynomial is not over Q_l u P of level " +
                           std::to_string(level));
    }
  }
  // The leaving limbs, coefficient domain: when they are one slice of the (scratch) input (they
  // end S_l, so with P they are one piece) the INTT runs there in place; otherwise they are
  // gathered, by the INTT itself when fused.
  std::vector<RnsPoly> gathered;
  std::vector<ConstPolyRef> leaving;
  if (rs.leaving.size() == 1) {
    std::vector<PolyRef> pieces;
    for (const PolyRef& x : in)
      pieces.push_back(x.slice(rs.leaving[0][0], rs.leaving[0][1]));
    be.intt(pieces, rs.intt_post_consts);
    leaving.assign(pieces.begin(), pieces.end());
  } else {
    const std::vector<ConstPolyRef> xs(in.begin(), in.end());
    detail::gather_leaving_intt(be, issue_.fusion, rs, xs, gathered, rs.intt_post_consts);
    for (const RnsPoly& g : gathered)
      leaving.push_back(g.cref());
  }
  std::vector<ConstPolyRef> stay_src;
  if (rs.stay_count > 0)
    for (const PolyRef& x : in)
      stay_src.push_back(x.slice(rs.stay_src, rs.stay_count));
  detail::convert_and_finish(be, {issue_.fusion, issue_.batched_launches}, rs, leaving,
                             rs.ntt_pre_consts, stay_src, rs.stay_consts, out);
}

}  // namespace theo::keyswitch
