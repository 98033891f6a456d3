// Complementary pipelining (Theodosian §IV-B): KeyMult is split so that its (2, alpha) P part comes
// first; ModDown's INTT -> BConv -> NTT of that P part (L2-bound) then runs on a second stream
// while the (2, L) Q part of KeyMult (DRAM-bound: it streams the keys) runs on the first, and the
// subtraction that needs both waits at the join. Backend::fork / end_fork / join carry the
// dependencies, which a CUDA Graph capture keeps as edges; on the CPU everything runs in order.
//
// The pieces are the same backend ops as key_mult_into and mod_down (with or without fusion),
// split by limb range, so the words are the same with pipelining on or off. The lift goes straight
// into the outputs: no temporary is made or freed between the fork and the join.

#include <string>

#include "ckks/bconv_jobs.h"
#include "ckks/fusion.h"
#include "theo/ckks/key_switcher.h"
#include "theo/errors.h"
#include "theo/ring/fork_scope.h"
#include "theo/ring/traffic.h"

namespace theo {

namespace {

// KeyMult's Q_l part or P part: its limbs in the digits / outputs (over Q_l u P) and where they
// start in the Q_max u P key.
struct PartLimbs {
  u32 start, count, key_start;
};
PartLimbs part_limbs(const Context& ctx, const LevelData& lv, bool p_part) {
  return p_part ? PartLimbs{lv.limbs, ctx.alpha(), ctx.q_max_limbs()}
                : PartLimbs{0, lv.limbs, lv.first_id};
}

}  // namespace

void KeySwitcher::key_mult_part(std::span<const ConstPolyRef> digits, u32 level,
                                const SwitchingKey& key, PolyRef out0, PolyRef out1, bool p_part,
                                u32 galois, ConstPolyRef add_q0, ConstPolyRef a0, ConstPolyRef a1,
                                std::span<const u32> s) const {
  const TrafficScope scope("KeyMult");
  const LevelData& lv = ctx_->level(level);
  if (key.empty() || key.context_id() != ctx_->id() || key.dnum() != ctx_->dnum()) {
    throw ContextError("KeySwitcher::key_mult: the switching key is empty or not of this Context");
  }
  if (digits.size() != lv.digits.size()) {
    throw ParameterError("KeySwitcher::key_mult: digit count does not match level " +
                         std::to_string(level));
  }
  const auto [start, count, key_start] = part_limbs(*ctx_, lv, p_part);
  std::vector<ConstPolyRef> d, kb, ka;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    const u32 chunk = lv.digits[k].chunk;
    d.push_back(digits[k].slice(start, count));
    kb.push_back(key.b(chunk).slice(key_start, count));
    ka.push_back(key.a(chunk).slice(key_start, count));
  }
  if (add_q0.words() != 0 && (galois <= 1 || !(add_q0.basis == lv.q_basis))) {
    throw ParameterError(
        "KeySwitcher::key_mult: add_q0 needs a Galois element and must be over Q_l of level " +
        std::to_string(level));
  }
  if (galois > 1) {
    ctx_->backend().key_mult_automorphed(d, galois, kb, ka, out0.slice(start, count),
                                         out1.slice(start, count),
                                         p_part ? ConstPolyRef{} : add_q0);
  } else if (!p_part && a0.words() != 0) {
    ctx_->backend().key_mult_add_scaled(d, kb, ka, out0.slice(start, count),
                                        out1.slice(start, count), a0, a1, s);
  } else {
    ctx_->backend().key_mult(d, kb, ka, out0.slice(start, count), out1.slice(start, count));
  }
}

void KeySwitcher::key_mult_shared_key(std::span<const std::vector<ConstPolyRef>> digits, u32 level,
                                      const SwitchingKey& key, std::span<const PolyRef> out0,
                                      std::span<const PolyRef> out1) const {
  if (out0.size() != digits.size() || out1.size() != digits.size()) {
    throw ParameterError("KeySwitcher::key_mult_shared_key: one output pair per input is needed");
  }
  if (!ctx_->options().optimizations.multi_poly_caching || digits.size() <= 1) {
    for (std::size_t i = 0; i < digits.size(); ++i)
      key_mult_into(digits[i], level, key, out0[i], out1[i]);
    return;
  }
  const TrafficScope scope("KeyMult");
  const LevelData& lv = ctx_->level(level);
  if (key.empty() || key.context_id() != ctx_->id() || key.dnum() != ctx_->dnum()) {
    throw ContextError(
        "KeySwitcher::key_mult_shared_key: the switching key is empty or not of this Context");
  }
  for (const std::vector<ConstPolyRef>& d : digits) {
    if (d.size() != lv.digits.size()) {
      throw ParameterError("KeySwitcher::key_mult_shared_key: digit count does not match level " +
                           std::to_string(level));
    }
  }
  // The Q_l limbs, then the P limbs, as key_mult_part; the key's chunks are the shared terms.
  for (const bool p_part : {false, true}) {
    const auto [start, count, key_start] = part_limbs(*ctx_, lv, p_part);
    std::vector<ConstPolyRef> d, kb, ka;
    std::vector<PolyRef> o0, o1;
    for (std::size_t k = 0; k < lv.digits.size(); ++k) {
      const u32 chunk = lv.digits[k].chunk;
      kb.push_back(key.b(chunk).slice(key_start, count));
      ka.push_back(key.a(chunk).slice(key_start, count));
    }
    for (std::size_t i = 0; i < digits.size(); ++i) {
      for (const ConstPolyRef& x : digits[i])
        d.push_back(x.slice(start, count));
      o0.push_back(out0[i].slice(start, count));
      o1.push_back(out1[i].slice(start, count));
    }
    ctx_->backend().key_mult_sums(d, kb, ka, o0, o1);
  }
}

void KeySwitcher::key_mult_rotations(std::span<const ConstPolyRef> digits, u32 level,
                                     std::span<const SwitchingKey* const> keys,
                                     std::span<const u32> gs, std::span<const PolyRef> out0,
                                     std::span<const PolyRef> out1, ConstPolyRef add_q0) const {
  if (keys.size() != gs.size() || out0.size() != gs.size() || out1.size() != gs.size()) {
    throw ParameterError(
        "KeySwitcher::key_mult_rotations: one key and one output pair per "
        "rotation are needed");
  }
  if (!ctx_->options().optimizations.multi_poly_caching) {
    for (std::size_t r = 0; r < gs.size(); ++r)
      key_mult_into(digits, level, *keys[r], out0[r], out1[r], gs[r], add_q0);
    return;
  }
  const TrafficScope scope("KeyMult");
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
    const SwitchingKey& key = *keys[r];
    if (key.empty() || key.context_id() != ctx_->id() || key.dnum() != ctx_->dnum()) {
      throw ContextError(
          "KeySwitcher::key_mult_rotations: a switching key is empty or not of this Context");
    }
    if (gs[r] <= 1) {
      throw ParameterError("KeySwitcher::key_mult_rotations: Galois element " +
                           std::to_string(gs[r]) + " is not a rotation");
    }
  }
  // The Q_l limbs (with add_q0), then the P limbs, as key_mult_part.
  for (const bool p_part : {false, true}) {
    const auto [start, count, key_start] = part_limbs(*ctx_, lv, p_part);
    std::vector<ConstPolyRef> d, kb, ka;
    std::vector<PolyRef> o0, o1;
    for (std::size_t k = 0; k < digits.size(); ++k)
      d.push_back(digits[k].slice(start, count));
    for (std::size_t r = 0; r < gs.size(); ++r) {
      for (std::size_t k = 0; k < digits.size(); ++k) {
        const u32 chunk = lv.digits[k].chunk;
        kb.push_back(keys[r]->b(chunk).slice(key_start, count));
        ka.push_back(keys[r]->a(chunk).slice(key_start, count));
      }
      o0.push_back(out0[r].slice(start, count));
      o1.push_back(out1[r].slice(start, count));
    }
    ctx_->backend().key_mult_rotations(d, gs, kb, ka, o0, o1, p_part ? ConstPolyRef{} : add_q0);
  }
}

void KeySwitcher::mod_down_lift(std::span<const PolyRef> in, std::span<const PolyRef> out,
                                u32 level) const {
  const TrafficScope scope("ModDown");
  const LevelData& lv = ctx_->level(level);
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down_lift: one output per input is needed");
  }
  Backend& be = ctx_->backend();
  std::vector<PolyRef> p_parts;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!(in[i].basis == lv.pq_basis)) {
      throw ParameterError("KeySwitcher::mod_down_lift: input is not over Q_l u P of level " +
                           std::to_string(level));
    }
    if (!(out[i].basis == lv.q_basis)) {
      throw ParameterError("KeySwitcher::mod_down_lift: output is not over Q_l of level " +
                           std::to_string(level));
    }
    p_parts.push_back(in[i].slice(lv.limbs, ctx_->alpha()));
  }
  be.intt(p_parts, lv.mod_down_intt_consts);
  std::vector<BConvJob> jobs;
  for (std::size_t i = 0; i < in.size(); ++i)
    jobs.push_back({lv.mod_down.get(), p_parts[i], out[i]});
  detail::bconv_matmul_jobs(*ctx_, jobs);
  if (!detail::fusion_enabled(*ctx_)) be.ntt(out);
}

void KeySwitcher::mod_down_finish(std::span<const PolyRef> in, std::span<const PolyRef> out,
                                  u32 level) const {
  const TrafficScope scope("ModDown");
  const LevelData& lv = ctx_->level(level);
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down_finish: one output per input is needed");
  }
  Backend& be = ctx_->backend();
  std::vector<ConstPolyRef> u_q;
  for (const PolyRef& x : in)
    u_q.push_back(x.slice(0, lv.limbs));
  if (detail::fusion_enabled(*ctx_)) {
    be.ntt_sub_mul_scalar(out, {}, u_q, 0, lv.p_inv);
    return;
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    be.sub_mul_scalar(u_q[i], out[i], lv.p_inv, out[i]);
}

void KeySwitcher::key_mult_mod_down(std::span<const std::vector<ConstPolyRef>> digits,
                                    std::span<const SwitchingKey* const> keys, u32 level,
                                    std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                                    std::span<const u32> galois) const {
  const std::size_t n = digits.size();
  if (!galois.empty() && galois.size() != n) {
    throw ParameterError("KeySwitcher::key_mult_mod_down: one galois element per key switch");
  }
  auto g_of = [&](std::size_t i) { return galois.empty() ? u32{1} : galois[i]; };
  if (keys.size() != n || out0.size() != n || out1.size() != n) {
    throw ParameterError(
        "KeySwitcher::key_mult_mod_down: one key and one output pair per key switch are needed");
  }
  for (const SwitchingKey* k : keys)
    if (k == nullptr) throw ParameterError("KeySwitcher::key_mult_mod_down: a key is null");
  if (n == 0) return;
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  // The extended pairs in (c0, c1) order per switch, and the outputs in the same order. Both are
  // made before the fork and outlive the join.
  std::vector<RnsPoly> ext;
  std::vector<PolyRef> ext_refs, out_refs;
  for (std::size_t i = 0; i < 2 * n; ++i) {
    ext.push_back(be.make_poly(lv.pq_basis));
    ext_refs.push_back(ext.back().ref());
  }
  for (std::size_t i = 0; i < n; ++i) {
    out_refs.push_back(out0[i]);
    out_refs.push_back(out1[i]);
  }
  // Inside a caller's fork (e.g. the bootstrapper's two EvalMod lanes) the lanes already overlap.
  if (!ctx_->options().optimizations.pipelining || be.forked()) {
    for (std::size_t i = 0; i < n; ++i)
      key_mult_into(digits[i], level, *keys[i], ext_refs[2 * i], ext_refs[2 * i + 1], g_of(i));
    mod_down_scheduled(ext_refs, out_refs, level);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    key_mult_part(digits[i], level, *keys[i], ext_refs[2 * i], ext_refs[2 * i + 1], true, g_of(i));
  {
    ForkScope fork(be);
    mod_down_lift(ext_refs, out_refs, level);  // branch: the P limbs of ext, and the outputs
    be.end_fork();
    for (std::size_t i = 0; i < n; ++i)  // main: the Q_l limbs of ext
      key_mult_part(digits[i], level, *keys[i], ext_refs[2 * i], ext_refs[2 * i + 1], false,
                    g_of(i));
    fork.join();
  }
  mod_down_finish(ext_refs, out_refs, level);
}

}  // namespace theo
