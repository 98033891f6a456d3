// Output-chunked key switching (the DPOC dataflow of Nozaki et al., "Dataflow-Oriented
// Classification and Performance Analysis of GPU-Accelerated Homomorphic Encryption"), used by
// L2-aware caching at the levels where a key switch's ModUp output does not fit the cache.
//
// The digit-parallel, output-bulk order (mod_up, then key_mult) writes all beta digits over
// Q_l u P before KeyMult reads any of them. Past the cache size that output goes to DRAM and
// comes back, while KeyMult's key stream evicts it. Here the output limbs are taken in chunks,
// the P limbs first, then each digit's own limbs, and each chunk's BConv -> NTT -> KeyMult runs
// over all digits (digit-parallel), so KeyMult reads the chunk's digit words from L2. The chunk's
// digit words live in one scratch buffer, reused by every chunk (its lines are rewritten while
// still cached, not written back); a digit's own limbs are the input itself, so no echo is made.
// The INTT'd input, read by every chunk's BConv, is the one piece every chunk shares.
//
// With pipelining the P chunk's KeyMult comes first and ModDown's INTT -> BConv -> NTT of it runs
// on the second stream while the Q chunks run on the first, as in key_mult_mod_down.
//
// Per word the same arithmetic as mod_up + key_mult_into + mod_down (a BConv row and a KeyMult
// limb do not depend on which other rows or limbs share the launch), so the same words.

#include <cstdlib>
#include <string>
#include <string_view>

#include "ckks/bconv_jobs.h"
#include "ckks/fusion.h"
#include "theo/ckks/key_switcher.h"
#include "theo/errors.h"
#include "theo/ring/fork_scope.h"
#include "theo/ring/traffic.h"

namespace theo {

namespace {

// Optimizations::output_chunking ANDed with THEO_OUTPUT_CHUNKING (=0 turns it off process-wide,
// for A/B runs of one binary; read once).
bool chunking_enabled(const Context& ctx) {
  static const bool env_on = [] {
    const char* env = std::getenv("THEO_OUTPUT_CHUNKING");
    return env == nullptr || std::string_view(env) != "0";
  }();
  const Optimizations& o = ctx.options().optimizations;
  return env_on && o.output_chunking && o.multi_poly_caching;
}

}  // namespace

bool KeySwitcher::output_chunked(u32 level) const {
  const LevelData& lv = ctx_->level(level);
  // The level tables carry chunk plans exactly where the ModUp working set exceeds the cache.
  return chunking_enabled(*ctx_) && detail::fusion_enabled(*ctx_) && lv.digits.size() > 1 &&
         lv.digits.front().to_p != nullptr;
}

void KeySwitcher::switch_key_chunked(ConstPolyRef d, u32 level, const SwitchingKey& key,
                                     PolyRef out0, PolyRef out1) const {
  const LevelData& lv = ctx_->level(level);
  if (!output_chunked(level)) {
    throw ParameterError("KeySwitcher::switch_key_chunked: level " + std::to_string(level) +
                         " has no output-chunked plans (see output_chunked())");
  }
  if (!(d.basis == lv.q_basis)) {
    throw ParameterError("KeySwitcher::switch_key_chunked: input is not over the basis of level " +
                         std::to_string(level));
  }
  if (!(out0.basis == lv.q_basis) || !(out1.basis == lv.q_basis)) {
    throw ParameterError(
        "KeySwitcher::switch_key_chunked: outputs are not over the basis of level " +
        std::to_string(level));
  }
  if (key.empty() || key.context_id() != ctx_->id() || key.dnum() != ctx_->dnum()) {
    throw ContextError(
        "KeySwitcher::switch_key_chunked: the switching key is empty or not of this Context");
  }
  Backend& be = ctx_->backend();
  const u32 n = ctx_->n(), alpha = ctx_->alpha();
  const std::size_t beta = lv.digits.size();

  RnsPoly coeffs = be.make_poly(lv.q_basis);
  {
    // One INTT of the whole input, out of place, with every digit's BConv constants.
    const TrafficScope scope("ModUp");
    const PolyRef all[] = {coeffs.ref()};
    const ConstPolyRef src[] = {d};
    be.intt(all, lv.mod_up_intt_consts, src);
  }
  ExtendedPair ext{be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
  // beta slots of alpha limbs: the chunk's words of every digit but the chunk's own.
  RnsPoly scratch = be.make_poly(Basis::range(0, static_cast<u32>(beta) * alpha));
  const auto slot = [&](std::size_t k, const Basis& basis) {
    return PolyRef{scratch.data() + k * alpha * std::size_t{n}, n, basis};
  };

  // Chunk `own` (a digit index, or beta for P): BConv -> NTT of every other digit onto the chunk's
  // limbs [first, first + count) of Q_l u P, then KeyMult of those limbs into ext.
  const auto run_chunk = [&](std::size_t own, u32 first, u32 count, u32 key_first) {
    const Basis basis = lv.pq_basis.slice(first, count);
    std::vector<ConstPolyRef> digits, kb, ka;
    {
      const TrafficScope scope("ModUp");
      std::vector<BConvJob> jobs;
      std::vector<PolyRef> converted;
      for (std::size_t k = 0; k < beta; ++k) {
        if (k == own) continue;
        const DigitPlan& dk = lv.digits[k];
        const BConvPlan* plan = own == beta ? dk.to_p.get() : dk.to_digit[own].get();
        converted.push_back(slot(k, basis));
        jobs.push_back({plan, coeffs.slice(dk.start, dk.count), converted.back()});
      }
      detail::bconv_matmul_jobs(*ctx_, jobs);
      be.ntt(converted);
    }
    for (std::size_t k = 0; k < beta; ++k) {
      const u32 chunk = lv.digits[k].chunk;
      digits.push_back(k == own ? d.slice(first, count) : ConstPolyRef(slot(k, basis)));
      kb.push_back(key.b(chunk).slice(key_first, count));
      ka.push_back(key.a(chunk).slice(key_first, count));
    }
    const TrafficScope scope("KeyMult");
    be.key_mult(digits, kb, ka, ext.c0.slice(first, count), ext.c1.slice(first, count));
  };
  const auto run_q_chunks = [&] {
    for (std::size_t c = 0; c < beta; ++c) {
      const DigitPlan& dc = lv.digits[c];
      run_chunk(c, dc.start, dc.count, lv.first_id + dc.start);
    }
  };

  run_chunk(beta, lv.limbs, alpha, ctx_->q_max_limbs());
  const PolyRef ext_refs[] = {ext.c0.ref(), ext.c1.ref()};
  const PolyRef out_refs[] = {out0, out1};
  if (!ctx_->options().optimizations.pipelining || be.forked()) {
    run_q_chunks();
    mod_down_scheduled(ext_refs, out_refs, level);
    return;
  }
  {
    ForkScope fork(be);
    mod_down_lift(ext_refs, out_refs, level);  // branch: the P limbs of ext, and the outputs
    be.end_fork();
    run_q_chunks();  // main: the Q_l limbs of ext (the scratch and coeffs are main-lane only)
    fork.join();
  }
  mod_down_finish(ext_refs, out_refs, level);
}

}  // namespace theo
