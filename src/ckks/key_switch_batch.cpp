// L2-aware multi-polynomial caching (Theodosian §IV-A): the footprint model, the batch planner,
// the stage functions as scheduled by Optimizations::multi_poly_caching, and batched key switching
// (several independent key switches at one level, hoisted or not).
//
// Batching changes how many polynomials one launch covers, never the arithmetic per word: every
// backend op here is one the unbatched path issues too, on the same operands, so results are
// bit-exact with switch_key per input.

#include <algorithm>
#include <string>

#include "ckks/fusion.h"
#include "theo/ckks/key_switcher.h"
#include "theo/errors.h"
#include "theo/ring/traffic.h"

namespace theo {

namespace {

void require_counts(const char* op, std::size_t inputs, std::size_t keys, std::size_t out0,
                    std::size_t out1) {
  if (keys != inputs || out0 != inputs || out1 != inputs) {
    throw ParameterError(std::string("KeySwitcher::") + op +
                         ": one key and one output pair per input are needed (inputs " +
                         std::to_string(inputs) + ", keys " + std::to_string(keys) + ", outputs " +
                         std::to_string(out0) + " and " + std::to_string(out1) + ")");
  }
}

// Stage 1 in Cheddar's O(alpha)-limb order: each digit's own INTT -> BConv -> NTT sequence, one
// after another. The same per-limb ops as mod_up's batched pass (the INTT of a digit's limbs with
// that digit's constants is what the whole-input INTT computes on those limbs), so the same words.
ModUpDigits mod_up_by_digit(const Context& ctx, ConstPolyRef input, u32 level) {
  const TrafficScope scope("ModUp");
  const LevelData& lv = ctx.level(level);
  if (!(input.basis == lv.q_basis)) {
    throw ParameterError("KeySwitcher::mod_up: input is not over the basis of level " +
                         std::to_string(level));
  }
  Backend& be = ctx.backend();
  const bool fused = detail::fusion_enabled(ctx);
  ModUpDigits result;
  result.level = level;
  for (std::size_t k = 0; k < lv.digits.size(); ++k)
    result.digits.push_back(be.make_poly(lv.pq_basis));
  for (std::size_t k = 0; k < lv.digits.size(); ++k) {
    const DigitPlan& d = lv.digits[k];
    RnsPoly& out = result.digits[k];
    const ConstPolyRef digit_in = input.slice(d.start, d.count);
    RnsPoly coeff = be.make_poly(digit_in.basis);
    const PolyRef c[] = {coeff.ref()};
    if (fused) {
      // Out of place from the input, echoing the digit's words into its own limbs of the output.
      const ConstPolyRef src[] = {digit_in};
      const PolyRef echo[] = {out.slice(d.start, d.count)};
      be.intt(c, d.intt_post_consts, src, echo);
    } else {
      be.copy(digit_in, coeff.ref());
      be.intt(c, d.intt_post_consts);
    }
    std::vector<PolyRef> converted;
    if (d.to_before) {
      const PolyRef before = out.slice(0, d.start);
      be.bconv_matmul(*d.to_before, coeff.cref(), before);
      converted.push_back(before);
    }
    const u32 after_start = d.start + d.count;
    const PolyRef after = out.slice(after_start, out.limbs() - after_start);
    be.bconv_matmul(*d.to_after, coeff.cref(), after);
    converted.push_back(after);
    if (fused) {
      be.ntt(converted);
    } else {
      detail::ntt_per_basis(be, converted);
      be.copy(digit_in, out.slice(d.start, d.count));
    }
  }
  return result;
}

}  // namespace

KeySwitchFootprint key_switch_footprint(u32 limbs, u32 alpha, std::size_t beta, u32 n) {
  const std::size_t limb = std::size_t{n} * sizeof(u32);
  const std::size_t l = limbs, a = alpha;
  KeySwitchFootprint f;
  f.mod_up = (l + beta * (l + a)) * limb;
  f.mod_down = (2 * a + 4 * l) * limb;
  f.hoisted = beta * (l + a) * limb;
  return f;
}

KeySwitchFootprint KeySwitcher::footprint(u32 level) const {
  const LevelData& lv = ctx_->level(level);
  return key_switch_footprint(lv.limbs, ctx_->alpha(), lv.digits.size(), ctx_->n());
}

std::size_t KeySwitcher::mod_up_digit_groups(u32 level, std::size_t inputs) const {
  const LevelData& lv = ctx_->level(level);
  const std::size_t beta = lv.digits.size();
  // Without caching mod_up() is not scheduled by the cache: one group.
  if (beta <= 1 || inputs == 0 || !ctx_->options().optimizations.multi_poly_caching) return 1;
  const std::size_t limb = std::size_t{ctx_->n()} * sizeof(u32);
  const std::size_t shared = inputs * lv.limbs * limb;                       // INTT'd inputs
  const std::size_t per_digit = inputs * (lv.limbs + ctx_->alpha()) * limb;  // outputs
  const std::size_t fit = batch_size(beta, per_digit, shared);
  return (beta + fit - 1) / fit;
}

std::size_t KeySwitcher::cache_bytes() const {
  const std::size_t forced = ctx_->options().optimizations.cache_bytes;
  return forced != 0 ? forced : ctx_->backend().l2_bytes();
}

u32 KeySwitcher::batch_size(std::size_t count, std::size_t per_item_bytes,
                            std::size_t shared_bytes) const {
  if (count == 0) return 1;
  const auto clamp = [count](std::size_t b) {
    return static_cast<u32>(std::clamp<std::size_t>(b, 1, std::min<std::size_t>(count, 1u << 16)));
  };
  if (!ctx_->options().optimizations.multi_poly_caching) return 1;
  const std::size_t cache = cache_bytes();
  if (cache == 0 || per_item_bytes == 0) return clamp(count);
  const std::size_t room = cache > shared_bytes ? cache - shared_bytes : 0;
  return clamp(room / per_item_bytes);
}

std::vector<ModUpDigits> KeySwitcher::mod_up_scheduled(std::span<const ConstPolyRef> inputs,
                                                       u32 level) const {
  if (ctx_->options().optimizations.multi_poly_caching) return mod_up(inputs, level);
  std::vector<ModUpDigits> result;
  for (const ConstPolyRef& in : inputs)
    result.push_back(mod_up_by_digit(*ctx_, in, level));
  return result;
}

ModUpDigits KeySwitcher::mod_up_scheduled(ConstPolyRef input, u32 level) const {
  const ConstPolyRef one[] = {input};
  return std::move(mod_up_scheduled(one, level).front());
}

void KeySwitcher::mod_down_scheduled(std::span<const PolyRef> in, std::span<const PolyRef> out,
                                     u32 level) const {
  if (ctx_->options().optimizations.multi_poly_caching || in.size() <= 1) {
    mod_down(in, out, level);
    return;
  }
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down: one output per input is needed");
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    mod_down(in.subspan(i, 1), out.subspan(i, 1), level);
}

void KeySwitcher::switch_keys(std::span<const ConstPolyRef> d,
                              std::span<const SwitchingKey* const> keys, u32 level,
                              std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                              u32 batch) const {
  require_counts("switch_keys", d.size(), keys.size(), out0.size(), out1.size());
  for (const SwitchingKey* k : keys)
    if (k == nullptr) throw ParameterError("KeySwitcher::switch_keys: a key is null");
  const std::size_t b = batch != 0 ? batch : batch_size(d.size(), footprint(level).per_switch());
  for (std::size_t start = 0; start < d.size(); start += b) {
    const std::size_t count = std::min(b, d.size() - start);
    if (count == 1 && output_chunked(level)) {
      switch_key_chunked(d[start], level, *keys[start], out0[start], out1[start]);
      continue;
    }
    const std::vector<ModUpDigits> ups = mod_up_scheduled(d.subspan(start, count), level);
    std::vector<std::vector<ConstPolyRef>> digits(count);
    for (std::size_t i = 0; i < count; ++i)
      for (const RnsPoly& p : ups[i].digits)
        digits[i].push_back(p.cref());
    key_mult_mod_down(digits, keys.subspan(start, count), level, out0.subspan(start, count),
                      out1.subspan(start, count));
  }
}

void KeySwitcher::switch_keys_hoisted(const ModUpDigits& up, std::span<const u32> galois,
                                      std::span<const SwitchingKey* const> keys,
                                      std::span<const PolyRef> out0,
                                      std::span<const PolyRef> out1) const {
  require_counts("switch_keys_hoisted", galois.size(), keys.size(), out0.size(), out1.size());
  for (std::size_t i = 0; i < galois.size(); ++i) {
    if (keys[i] == nullptr) throw ParameterError("KeySwitcher::switch_keys_hoisted: a key is null");
    if (galois[i] == 1)
      throw ParameterError(
          "KeySwitcher::switch_keys_hoisted: galois element 1 needs no key switch");
  }
  if (galois.empty()) return;
  const LevelData& lv = ctx_->level(up.level);
  if (up.digits.size() != lv.digits.size()) {
    throw ParameterError("KeySwitcher::switch_keys_hoisted: digit count does not match level " +
                         std::to_string(up.level));
  }
  // Every rotation reads the shared digits through its permutation (key_mult_automorphed).
  const KeySwitchFootprint f = footprint(up.level);
  const std::size_t b = batch_size(galois.size(), f.mod_down, f.hoisted);
  std::vector<ConstPolyRef> shared;
  for (const RnsPoly& d : up.digits)
    shared.push_back(d.cref());
  for (std::size_t start = 0; start < galois.size(); start += b) {
    const std::size_t count = std::min(b, galois.size() - start);
    const std::vector<std::vector<ConstPolyRef>> digits(count, shared);
    key_mult_mod_down(digits, keys.subspan(start, count), up.level, out0.subspan(start, count),
                      out1.subspan(start, count), galois.subspan(start, count));
  }
}

}  // namespace theo
