// Scheme-level benchmark cases (CKKS ops on the bootparam_40 preset, the anchor's parameters).
// `--limbs` picks the level: the highest level of bootparam_40 with at most that many limbs
// (3, 14, 18, 23, 35, 47 = levels 1, 9, 12, 16, 22, 28). One Context, key set and pair of
// ciphertexts per level is built on first use, outside the timed region, on a backend of the same
// kind as the run's (the Context owns its ring: the bootparam_40 primes).
//
// The closure issues the op on the Context's backend, which PreparedCase::backend names, so
// time_op synchronizes and times that backend's stream: wall_us is one op plus one launch + sync
// round trip, as in the anchor's measurements (shared/anchors/cheddar-h200.md); median_us on CUDA
// is the GPU time between two events around the op.
//
// Traffic model: ciphertext words read once, result words written once, and every switching-key
// word the op needs read once (2 dnum_l (L + alpha) limbs per key, dnum_l = the level's digits),
// 4 bytes per word; no intermediate (ModUp digits, the extended pair) is counted.

#include <complex>
#include <map>
#include <memory>
#include <vector>

#include "bench_case.h"
#include "scheme_env.h"
#include "theo/theodosian.h"

namespace theo::bench {

namespace {

struct Operands {
  Ciphertext a, b;
  Plaintext pt;
};

enum class Op { kHAdd, kPMult, kHMult, kHMultRescale, kRescale, kHRot, kHoisted, kKeySwitch };

PreparedCase scheme_case(CaseEnv& env, Op op) {
  SchemeEnv& se = scheme_env(env.backend.kind());
  const Context& ctx = *se.ctx;
  // HMult + rescale and Rescale need a level below.
  const bool needs_lower = op == Op::kHMultRescale || op == Op::kRescale;
  u32 level = level_for(ctx, env.params.limbs);
  if (needs_lower && level == 0) level = 1;
  const LevelData& ld = ctx.level(level);
  const u32 L = ld.limbs, alpha = ctx.alpha(), n = ctx.n();
  const double dnum = static_cast<double>(ld.digits.size());

  std::vector<std::complex<double>> va(ctx.max_slots()), vb(ctx.max_slots());
  for (std::size_t i = 0; i < va.size(); ++i) {
    va[i] = std::polar(0.8, 0.001 * static_cast<double>(i));
    vb[i] = std::polar(0.7, -0.002 * static_cast<double>(i));
  }
  Encryptor encr(se.ctx, *se.pk);
  auto ops = std::make_shared<Operands>();
  ops->pt = se.enc->encode(va, level);
  ops->a = encr.encrypt(ops->pt);
  ops->b = encr.encrypt(se.enc->encode(vb, level));
  if (op == Op::kRescale) ops->a = se.ev->multiply(ops->a, ops->b, *se.rlk);

  const Evaluator& ev = *se.ev;
  Backend& be = ctx.backend();
  const double ct = 2.0 * L * n;                    // words of one ciphertext at the level
  const double key = 2.0 * dnum * (L + alpha) * n;  // words of one switching key at the level
  PreparedCase c;
  double words = 0;
  switch (op) {
    case Op::kHAdd:
      c.run = [&ev, ops] { const Ciphertext r = ev.add(ops->a, ops->b); };
      words = 3 * ct;
      break;
    case Op::kPMult:
      c.run = [&ev, ops] { const Ciphertext r = ev.multiply_plain(ops->a, ops->pt); };
      words = 2 * ct + ct / 2;
      break;
    case Op::kHMult:
      c.run = [&ev, ops, &se] { const Ciphertext r = ev.multiply(ops->a, ops->b, *se.rlk); };
      words = 3 * ct + key;
      break;
    case Op::kHMultRescale:
      c.run = [&ev, ops, &se] {
        const Ciphertext r = ev.multiply_relin_rescale(ops->a, ops->b, *se.rlk);
      };
      words = 2 * ct + key + 2.0 * ctx.level(level - 1).limbs * n;
      break;
    case Op::kRescale:
      c.run = [&ev, ops] { const Ciphertext r = ev.rescale(ops->a); };
      words = ct + 2.0 * ctx.level(level - 1).limbs * n;
      break;
    case Op::kHRot:
      c.run = [&ev, ops, &se] { const Ciphertext r = ev.rotate(ops->a, kRotation, *se.gk); };
      words = 2 * ct + key;
      break;
    case Op::kHoisted:
      c.run = [&ev, ops, &se] {
        static const std::vector<int> rots = [] {
          std::vector<int> v;
          for (int r = 1; r <= kHoistedRots; ++r)
            v.push_back(r);
          return v;
        }();
        const auto r = ev.rotate_hoisted(ops->a, rots, *se.gk);
      };
      words = ct + kHoistedRots * (ct + key);
      break;
    case Op::kKeySwitch: {
      struct Out {
        RnsPoly o0, o1;
      };
      auto out = std::make_shared<Out>(Out{be.make_poly(ld.q_basis), be.make_poly(ld.q_basis)});
      c.run = [&ev, ops, &se, out, level] {
        ev.key_switcher().switch_key(ops->a.poly(1).cref(), level, se.rlk->key(), out->o0.ref(),
                                     out->o1.ref());
      };
      c.keep_alive = out;
      words = L * n + key + 2.0 * L * n;
      break;
    }
  }
  c.keep_alive = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<Operands>>>(
      c.keep_alive, ops);
  c.bytes_moved = word_bytes(words);
  c.extra = {{"preset", "bootparam_40"},
             {"level", level},
             {"level_limbs", L},
             {"alpha", alpha},
             {"dnum", ld.digits.size()}};
  c.backend = &be;
  return c;
}

#define THEO_SCHEME_CASE(var, name, formula, op) \
  const CaseRegistrar var({name, formula, [](CaseEnv& env) { return scheme_case(env, op); }})

THEO_SCHEME_CASE(hadd_reg, "hadd", "3 (2 L N) 4", Op::kHAdd);
THEO_SCHEME_CASE(pmult_reg, "pmult", "(2 (2 L N) + L N) 4", Op::kPMult);
THEO_SCHEME_CASE(hmult_reg, "hmult", "(3 (2 L N) + K) 4, K = 2 dnum_l (L + alpha) N", Op::kHMult);
THEO_SCHEME_CASE(hmult_rescale_reg, "hmult_rescale", "(2 (2 L N) + K + 2 L' N) 4, L' = L(l-1)",
                 Op::kHMultRescale);
THEO_SCHEME_CASE(rescale_reg, "rescale", "(2 L N + 2 L' N) 4", Op::kRescale);
THEO_SCHEME_CASE(hrot_reg, "hrot", "(2 (2 L N) + K) 4", Op::kHRot);
THEO_SCHEME_CASE(hoisted_reg, "hrot_hoisted8", "(2 L N + 8 (2 L N + K)) 4", Op::kHoisted);
THEO_SCHEME_CASE(keyswitch_reg, "keyswitch", "(L N + K + 2 L N) 4", Op::kKeySwitch);

#undef THEO_SCHEME_CASE

}  // namespace

}  // namespace theo::bench
