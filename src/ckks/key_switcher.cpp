#include "theo/ckks/key_switcher.h"

#include <algorithm>
#include <functional>
#include <string>

#include "ckks/bconv_jobs.h"
#include "ckks/fusion.h"
#include "theo/errors.h"
#include "theo/ring/traffic.h"

namespace theo {

namespace {

// The word ranges of a and b overlap.
bool overlap(ConstPolyRef a, ConstPolyRef b) {
  const std::less<const u32*> lt;  // a total order on unrelated pointers
  return a.words() > 0 && b.words() > 0 && lt(a.data, b.data + b.words()) &&
         lt(b.data, a.data + a.words());
}

}  // namespace

KeySwitcher::KeySwitcher(std::shared_ptr<const Context> ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw ContextError("KeySwitcher: the Context is null");
}

std::vector<ModUpDigits> KeySwitcher::mod_up(std::span<const ConstPolyRef> inputs,
                                             u32 level) const {
  const TrafficScope scope("ModUp");
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  for (const ConstPolyRef& in : inputs) {
    if (!(in.basis == lv.q_basis)) {
      throw ParameterError("KeySwitcher::mod_up: input is not over the basis of level " +
                           std::to_string(level));
    }
  }
  std::vector<ModUpDigits> result(inputs.size());
  for (auto& r : result) {
    r.level = level;
    for (std::size_t k = 0; k < lv.digits.size(); ++k)
      r.digits.push_back(be.make_poly(lv.pq_basis));
  }
  const bool fused = detail::fusion_enabled(*ctx_);
  std::vector<RnsPoly> coeffs;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    coeffs.push_back(be.make_poly(lv.q_basis));
  if (fused) {
    // One INTT call over every digit of every input, reading the inputs in place (out of place
    // into `coeffs`) and echoing each digit's words into its own limbs of its ModUp output: no
    // copy of the input and no per-digit copy. The digits tile S_l in order, so each input's
    // constants are mod_up_intt_consts.
    std::vector<PolyRef> slices, echoes;
    std::vector<ConstPolyRef> src;
    std::vector<u32> consts;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (std::size_t k = 0; k < lv.digits.size(); ++k) {
        const DigitPlan& d = lv.digits[k];
        slices.push_back(coeffs[i].slice(d.start, d.count));
        src.push_back(inputs[i].slice(d.start, d.count));
        echoes.push_back(result[i].digits[k].slice(d.start, d.count));
      }
      consts.insert(consts.end(), lv.mod_up_intt_consts.begin(), lv.mod_up_intt_consts.end());
    }
    be.intt(slices, consts, src, echoes);
  } else {
    // One INTT of a copy of each whole input, with every digit's constants side by side, feeds
    // all digits; each digit's own limbs are copied from the input below.
    std::vector<PolyRef> coeff_refs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      be.copy(inputs[i], coeffs[i].ref());
      coeff_refs.push_back(coeffs[i].ref());
    }
    be.intt(coeff_refs, lv.mod_up_intt_consts);
  }
  // The digits' BConv -> NTT sequences in groups whose working set (the shared INTT'd inputs
  // and the group's outputs over Q_l u P) fits the cache: all digits at once when they fit
  // (and on a backend without a cache), else as few groups of equal size as fit.
  const std::size_t groups = mod_up_digit_groups(level, inputs.size());
  const std::size_t beta = lv.digits.size();
  const std::size_t per_group = (beta + groups - 1) / groups;
  for (std::size_t first = 0; first < beta; first += per_group) {
    std::vector<PolyRef> converted;  // the group's non-digit slices, NTT'd together
    std::vector<BConvJob> jobs;      // the group's conversions, issued together
    for (std::size_t k = first; k < std::min(beta, first + per_group); ++k) {
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
    detail::bconv_matmul_jobs(*ctx_, jobs);
    if (fused)
      be.ntt(converted);
    else
      detail::ntt_per_basis(be, converted);
  }
  return result;
}

ModUpDigits KeySwitcher::mod_up(ConstPolyRef input, u32 level) const {
  const ConstPolyRef one[] = {input};
  return std::move(mod_up(one, level).front());
}

void KeySwitcher::key_mult_into(std::span<const ConstPolyRef> digits, u32 level,
                                const SwitchingKey& key, PolyRef out0, PolyRef out1, u32 galois,
                                ConstPolyRef add_q0) const {
  // The Q_l limbs, then the P limbs: the same two passes the pipelined path splits apart.
  key_mult_part(digits, level, key, out0, out1, /*p_part=*/false, galois, add_q0);
  key_mult_part(digits, level, key, out0, out1, /*p_part=*/true, galois);
}

void KeySwitcher::key_mult_into_add_scaled(std::span<const ConstPolyRef> digits, u32 level,
                                           const SwitchingKey& key, PolyRef out0, PolyRef out1,
                                           ConstPolyRef a0, ConstPolyRef a1,
                                           std::span<const u32> s) const {
  const LevelData& lv = ctx_->level(level);
  if (!(a0.basis == lv.q_basis) || !(a1.basis == lv.q_basis)) {
    throw ParameterError(
        "KeySwitcher::key_mult_into_add_scaled: a0 and a1 must be over Q_l of "
        "level " +
        std::to_string(level));
  }
  if (!detail::fusion_enabled(*ctx_)) {
    key_mult_into(digits, level, key, out0, out1);
    Backend& be = ctx_->backend();
    const PolyRef q0 = out0.slice(0, lv.limbs), q1 = out1.slice(0, lv.limbs);
    be.mul_scalar_add(a0, s, q0, q0);
    be.mul_scalar_add(a1, s, q1, q1);
    return;
  }
  key_mult_part(digits, level, key, out0, out1, /*p_part=*/false, 1, {}, a0, a1, s);
  key_mult_part(digits, level, key, out0, out1, /*p_part=*/true);
}

std::vector<ExtendedPair> KeySwitcher::key_mult(std::span<const ModUpDigits> modup,
                                                std::span<const SwitchingKey* const> keys) const {
  if (modup.size() != keys.size()) {
    throw ParameterError("KeySwitcher::key_mult: one key per ModUp result is needed");
  }
  Backend& be = ctx_->backend();
  std::vector<ExtendedPair> out;
  for (std::size_t i = 0; i < modup.size(); ++i) {
    const LevelData& lv = ctx_->level(modup[i].level);
    ExtendedPair pair{be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
    std::vector<ConstPolyRef> digits;
    for (const RnsPoly& d : modup[i].digits)
      digits.push_back(d.cref());
    key_mult_into(digits, modup[i].level, *keys[i], pair.c0.ref(), pair.c1.ref());
    out.push_back(std::move(pair));
  }
  return out;
}

ExtendedPair KeySwitcher::key_mult(const ModUpDigits& modup, const SwitchingKey& key) const {
  const SwitchingKey* keys[] = {&key};
  return std::move(key_mult(std::span<const ModUpDigits>(&modup, 1), keys).front());
}

void KeySwitcher::mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out,
                           u32 level) const {
  const TrafficScope scope("ModDown");
  const LevelData& lv = ctx_->level(level);
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down: one output per input is needed");
  }
  Backend& be = ctx_->backend();
  std::vector<PolyRef> p_parts;
  for (const PolyRef& x : in) {
    if (!(x.basis == lv.pq_basis)) {
      throw ParameterError("KeySwitcher::mod_down: input is not over Q_l u P of level " +
                           std::to_string(level));
    }
    p_parts.push_back(x.slice(lv.limbs, ctx_->alpha()));
  }
  be.intt(p_parts, lv.mod_down_intt_consts);
  bool out_overlaps_in = false;
  for (const PolyRef& o : out)
    for (const PolyRef& x : in)
      out_overlaps_in = out_overlaps_in || overlap(o, x);
  if (detail::fusion_enabled(*ctx_) && !out_overlaps_in) {
    // BConv straight into the outputs, then one NTT whose last phase applies the tail
    // (u_Q - .) * P^-1 (Cheddar Seq.3): no lifted temporary and no separate sub_mul_scalar.
    std::vector<ConstPolyRef> u_q;
    std::vector<BConvJob> jobs;
    for (std::size_t i = 0; i < in.size(); ++i) {
      jobs.push_back({lv.mod_down.get(), p_parts[i], out[i]});
      u_q.push_back(in[i].slice(0, lv.limbs));
    }
    detail::bconv_matmul_jobs(*ctx_, jobs);
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

void KeySwitcher::switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                             PolyRef out1) const {
  // As scheduled by the optimizations (pipelining, output chunking); all off, it is
  // mod_up -> key_mult -> mod_down.
  const ConstPolyRef in[] = {d};
  const SwitchingKey* const keys[] = {&key};
  const PolyRef o0[] = {out0}, o1[] = {out1};
  switch_keys(in, keys, level, o0, o1);
}

}  // namespace theo
