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
// The schedulers (digit batching, split KeyMult, overlap) recombine exactly these stages, so they
// are separate functions.

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

// The footprint model of L2-aware multi-polynomial caching (Theodosian §IV-A, Table III): the
// bytes a stage of one key switch at a level writes and reads again within the stage, which is
// what must stay in the L2 cache for the stage to run without DRAM traffic beyond its inputs.
// L = the level's limbs, beta = its digits, 4 N bytes per limb:
//   mod_up   = (L + beta (L + alpha)) 4 N   the INTT'd input, read by every digit's BConv, and
//                                             the digits over Q_l u P (BConv out, NTT in / out)
//   mod_down = (2 alpha + 4 L) 4 N          the P parts (INTT, then BConv in), their lifts to Q_l
//                                             (BConv out, NTT, subtraction) and the KeyMult's Q
//                                             parts (read by the subtraction)
//   hoisted  = beta (L + alpha) 4 N         the shared ModUp digits of hoisted rotations (each
//                                             rotation reads them through its permutation)
// Keys are streamed from DRAM once and not counted.
struct KeySwitchFootprint {
  std::size_t mod_up = 0;
  std::size_t mod_down = 0;
  std::size_t hoisted = 0;
  std::size_t per_switch() const { return mod_up > mod_down ? mod_up : mod_down; }
};
// The footprint of one key switch at a level of `limbs` limbs and `beta` digits (N = n).
KeySwitchFootprint key_switch_footprint(u32 limbs, u32 alpha, std::size_t beta, u32 n);

class KeySwitcher {
 public:
  explicit KeySwitcher(std::shared_ptr<const Context> ctx);

  // Stage 1. Each input is an NTT-domain polynomial over the level's basis (inputs unchanged).
  // One INTT over every input; the digits' BConv -> NTT sequences then run in
  // mod_up_digit_groups() groups, each batched into one launch per transform.
  std::vector<ModUpDigits> mod_up(std::span<const ConstPolyRef> inputs, u32 level) const;
  ModUpDigits mod_up(ConstPolyRef input, u32 level) const;

  // Stage 2. keys[i] applies to modup[i].
  std::vector<ExtendedPair> key_mult(std::span<const ModUpDigits> modup,
                                     std::span<const SwitchingKey* const> keys) const;
  ExtendedPair key_mult(const ModUpDigits& modup, const SwitchingKey& key) const;
  // KeyMult into caller-provided outputs over Q_l u P. galois > 1: of phi_galois(digits), read
  // through the permutation (hoisted rotations share one ModUp and never copy permuted digits),
  // and phi_galois(add_q0) (over Q_l, optional) added to out0's Q_l limbs in the same pass: a
  // hoisted rotation's P c0 term.
  void key_mult_into(std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                     PolyRef out0, PolyRef out1, u32 galois = 1, ConstPolyRef add_q0 = {}) const;

  // key_mult_into (galois 1), then out0 / out1's Q_l limbs += s a0 / s a1 (a0, a1 over Q_l; s one
  // constant per limb, e.g. P mod q_i): relinearization with ModDown merging adds P d_0 and
  // P d_1 there. With fusion both terms ride on the KeyMult pass (Backend::key_mult_add_scaled);
  // the same words either way.
  void key_mult_into_add_scaled(std::span<const ConstPolyRef> digits, u32 level,
                                const SwitchingKey& key, PolyRef out0, PolyRef out1,
                                ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s) const;

  // key_mult_into for several rotations of the same digits (hoisted baby steps): rotation r
  // (Galois element gs[r] > 1, key *keys[r]) into out0[r] / out1[r], with phi_(gs[r])(add_q0)
  // added to every out0's Q_l limbs. With multi-poly caching the backend reads the digits once
  // for all of them (Backend::key_mult_rotations); the same words either way.
  void key_mult_rotations(std::span<const ConstPolyRef> digits, u32 level,
                          std::span<const SwitchingKey* const> keys, std::span<const u32> gs,
                          std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                          ConstPolyRef add_q0 = {}) const;

  // key_mult_into for several inputs under one key (a batch of relinearizations): input i's
  // digits digits[i] into out0[i] / out1[i]. With multi-poly caching the backend reads each key
  // word once for all inputs (Backend::key_mult_sums); the same words either way.
  void key_mult_shared_key(std::span<const std::vector<ConstPolyRef>> digits, u32 level,
                           const SwitchingKey& key, std::span<const PolyRef> out0,
                           std::span<const PolyRef> out1) const;

  // Stage 3. in[i] (over Q_l u P, clobbered) -> out[i] (over Q_l). out may be a slice of in.
  void mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;

  // All three: d (level `level`, NTT) switched with `key` -> (out0, out1) over Q_l, as
  // scheduled by the optimizations (switch_keys of one input: pipelined, output-chunked where
  // that applies); with every optimization off, mod_up -> key_mult -> mod_down.
  void switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                  PolyRef out1) const;

  // ---- scheduling by ContextOptions::optimizations (key_switch_batch.cpp,
  // key_switch_pipeline.cpp): every function below computes the same words as the stage
  // functions above, one key switch at a time, under every combination of switches.

  KeySwitchFootprint footprint(u32 level) const;
  // The cache batches are planned for: Optimizations::cache_bytes, else Backend::l2_bytes().
  std::size_t cache_bytes() const;
  // How many groups mod_up() splits a level's digits into for `inputs` inputs: 1 when the whole
  // stage (footprint().mod_up per input) fits the cache, without multi_poly_caching, or on a
  // backend with no cache; else the fewest groups of equal size whose working set (the INTT'd
  // inputs, read by every group, and the group's digits over Q_l u P) fits. The same words for
  // every grouping.
  std::size_t mod_up_digit_groups(u32 level, std::size_t inputs) const;
  // How many of `count` independent items (key switches; per_item_bytes each, e.g.
  // footprint(level).per_switch()) run as one batch: the most that fit the cache beside
  // `shared_bytes` (data all of them read, e.g. hoisted digits), at least 1 and at most `count`.
  // `count` when the cache is unknown (0: the CPU); 1 with multi_poly_caching off.
  u32 batch_size(std::size_t count, std::size_t per_item_bytes, std::size_t shared_bytes = 0) const;

  // Stage 1 as scheduled: mod_up() with multi_poly_caching, else one input and, within it, one
  // digit's INTT -> BConv -> NTT sequence after another (Cheddar's O(alpha)-limb order).
  std::vector<ModUpDigits> mod_up_scheduled(std::span<const ConstPolyRef> inputs, u32 level) const;
  ModUpDigits mod_up_scheduled(ConstPolyRef input, u32 level) const;
  // Stage 3 as scheduled: mod_down() over all polys with multi_poly_caching, else one at a time.
  void mod_down_scheduled(std::span<const PolyRef> in, std::span<const PolyRef> out,
                          u32 level) const;

  // Output-chunked key switching (Optimizations::output_chunking, key_switch_chunked.cpp): true
  // at the levels whose single-input ModUp working set exceeds the cache, where switch_keys runs
  // each lone key switch as switch_key_chunked.
  bool output_chunked(u32 level) const;
  // switch_key with ModUp's BConv -> NTT and KeyMult taken one output chunk at a time (the P
  // limbs, then each digit's own limbs) so KeyMult reads the digits from L2; the same words.
  // Throws ParameterError at a level where output_chunked() is false.
  void switch_key_chunked(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                          PolyRef out1) const;

  // Batched key switching: d[i] (level `level`, NTT) switched with *keys[i] -> (out0[i], out1[i]),
  // like switch_key per input. Inputs go in batches of `batch` (0: the planner's batch_size);
  // a batch runs one ModUp, its KeyMults and one ModDown over all its polys. With pipelining, the
  // batch's KeyMult / ModDown are the pipelined pair (key_mult_mod_down).
  void switch_keys(std::span<const ConstPolyRef> d, std::span<const SwitchingKey* const> keys,
                   u32 level, std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                   u32 batch = 0) const;
  // Hoisted rotations: the digits `up` of one input, permuted by galois[i] and switched with
  // *keys[i] -> (out0[i], out1[i]) over Q_l (no galois element may be 1). Rotations go in batches
  // that fit the cache beside the shared digits; each batch permutes its digits, then runs
  // key_mult_mod_down over the batch.
  void switch_keys_hoisted(const ModUpDigits& up, std::span<const u32> galois,
                           std::span<const SwitchingKey* const> keys, std::span<const PolyRef> out0,
                           std::span<const PolyRef> out1) const;

  // Stages 2 and 3 of several key switches at one level: digits[i] (the ModUp digits of switch i
  // over Q_l u P, possibly permuted) times *keys[i] -> (out0[i], out1[i]) over Q_l (outputs must
  // not overlap each other). Without pipelining: key_mult_into per switch, then
  // mod_down_scheduled over all. With pipelining: every switch's KeyMult P part, fork(), the
  // ModDown lift of those P parts on the branch, end_fork(), every Q part of KeyMult on the main
  // stream, join(), then the ModDown tails.
  // galois (empty, or one per switch): read switch i's digits through phi_galois[i]
  // (Backend::key_mult_automorphed), so hoisted rotations need no permuted copies.
  void key_mult_mod_down(std::span<const std::vector<ConstPolyRef>> digits,
                         std::span<const SwitchingKey* const> keys, u32 level,
                         std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                         std::span<const u32> galois = {}) const;

  // The pieces the pipeline splits KeyMult and ModDown into (key_switch_pipeline.cpp).
  // KeyMult restricted to the Q_l limbs (p_part false) or the P limbs (true) of out0 / out1
  // (galois > 1: of phi_galois(digits), and add_q0 in the Q_l part, as key_mult_into).
  // Q part: optionally + s a0 / + s a1 (over Q_l, galois 1) in the same pass.
  void key_mult_part(std::span<const ConstPolyRef> digits, u32 level, const SwitchingKey& key,
                     PolyRef out0, PolyRef out1, bool p_part, u32 galois = 1,
                     ConstPolyRef add_q0 = {}, ConstPolyRef a0 = {}, ConstPolyRef a1 = {},
                     std::span<const u32> s = {}) const;
  // ModDown's lift: in[i]'s P limbs (clobbered) -> INTT -> BConv P -> Q_l into out[i] (over Q_l,
  // overlapping no input), then the NTT of out[i] unless fusion puts it into mod_down_finish.
  void mod_down_lift(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;
  // ModDown's tail on mod_down_lift's result: out[i] = (in[i]'s Q_l limbs - NTT(lift)) * P^-1,
  // with fusion one ntt_sub_mul_scalar (Cheddar Seq.3).
  void mod_down_finish(std::span<const PolyRef> in, std::span<const PolyRef> out, u32 level) const;

  const std::shared_ptr<const Context>& context() const { return ctx_; }

 private:
  std::shared_ptr<const Context> ctx_;
};

}  // namespace theo
