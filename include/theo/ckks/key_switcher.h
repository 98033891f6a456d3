#pragma once
// Hybrid key switching in three visible stages, each over a batch of polynomials:
//
//   mod_up    per digit k of the level: INTT (BConv const-mult fused) -> BConv digit -> the rest
//             of Q_l u P -> NTT; the digit's own limbs are copied. ModUp(d)_k lives on Q_l u P.
//   key_mult  sum_k ModUp(d)_k * (b_k, a_k), one Backend::key_mult on the Q slice and one on the P
//             slice of the key (a Q_max u P key serves every level: its limbs are sliced).
//   mod_down  INTT of the P part ((P/p_j)^-1 fused) -> BConv P -> Q_l -> NTT ->
//             (u_Q - .) * P^-1 in one sub_mul_scalar.
//
// switch_key composes them. Everything is in the NTT domain; tables come from the Context.
// Later work restructures exactly these stages (digit batching, split KeyMult, overlap), so they
// stay separate functions.

#include <memory>
#include <span>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"

namespace theo {

// ModUp(d) at one level: one polynomial over Q_l u P per non-empty digit of that level.
struct ModUpDigits {
  u32 level = 0;
  std::vector<RnsPoly> digits;  // [i] belongs to ctx.level(level).digits[i]
};

// A pair of polynomials over Q_l u P: the accumulated KeyMult output before ModDown.
struct ExtendedPair {
  RnsPoly c0;
  RnsPoly c1;
};

class KeySwitcher {
 public:
  explicit KeySwitcher(std::shared_ptr<const Context> ctx);

  // Stage 1. Each input is an NTT-domain polynomial over the level's basis (inputs unchanged).
  std::vector<ModUpDigits> mod_up(std::span<const ConstPolyRef> inputs, u32 level) const;
  ModUpDigits mod_up(ConstPolyRef input, u32 level) const;

  // Stage 2. keys[i] applies to modup[i].
  std::vector<ExtendedPair> key_mult(std::span<const ModUpDigits> modup,
                                     std::span<const SwitchingKey* const> keys) const;
  ExtendedPair key_mult(const ModUpDigits& modup, const SwitchingKey& key) const;
  // KeyMult into caller-provided outputs over Q_l u P (used with automorphed digits).
  void key_mult_into(std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                     PolyRef out0, PolyRef out1) const;

  // Stage 3. in[i] (over Q_l u P, clobbered) -> out[i] (over Q_l). out may be a slice of in.
  void mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;

  // All three: d (level `level`, NTT) switched with `key` -> (out0, out1) over Q_l.
  void switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                  PolyRef out1) const;

  const std::shared_ptr<const Context>& context() const { return ctx_; }

 private:
  std::shared_ptr<const Context> ctx_;
};

}  // namespace theo
