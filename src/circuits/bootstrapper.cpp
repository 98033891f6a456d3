#include "theo/circuits/bootstrapper.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "circuits/bootstrapper_impl.h"
#include "ckks/progress_bar.h"
#include "theo/circuits/dft.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/fork_scope.h"
#include "theo/ring/op_scope.h"

namespace theo {

namespace {

long double modulus_of(const Context& ctx, u32 level) {
  const LevelData& lv = ctx.level(level);
  long double q = 1;
  for (u32 i = 0; i < lv.limbs; ++i)
    q *= static_cast<long double>(ctx.prime(lv.q_basis[i]));
  return q;
}

// ModRaise lifts exactly (see raise_plan), so I's terms vary like those of a one-limb fast lift.
constexpr u32 kExactRaiseLimbs = 1;

}  // namespace

Bootstrapper::Bootstrapper(std::shared_ptr<const Context> ctx, const BootstrapConfig& config)
    : ctx_(ctx ? std::move(ctx) : throw ContextError("Bootstrapper: the Context is null")),
      impl_(std::make_unique<Impl>(ctx_)) {
  Impl& m = *impl_;
  const Context& c = *ctx_;
  const ParameterSet& p = c.params();
  m.config = config;
  if (p.sparse_hamming_weight == 0) {
    throw ParameterError("Bootstrapper: the parameter set has no sparse_hamming_weight");
  }
  slots_ = config.slots ? config.slots : c.max_slots();
  if (!std::has_single_bit(slots_) || slots_ < 2 || slots_ > c.max_slots()) {
    throw ParameterError("Bootstrapper: invalid slot count " + std::to_string(slots_));
  }
  const u32 log_slots = static_cast<u32>(std::countr_zero(slots_));
  m.top = c.max_level();
  m.cts_levels = std::min(
      log_slots, config.cts_levels ? config.cts_levels : (p.num_cts_levels ? p.num_cts_levels : 3));
  m.stc_levels = std::min(
      log_slots, config.stc_levels ? config.stc_levels : (p.num_stc_levels ? p.num_stc_levels : 2));
  if (m.top < m.cts_levels + m.stc_levels + 4) {
    throw ParameterError("Bootstrapper: the parameter set has only " + std::to_string(m.top) +
                         " levels");
  }
  const u32 after_cts = m.top - m.cts_levels;
  u32 budget = config.evalmod_levels;
  if (budget == 0) {
    // EvalMod ends at default_encryption_level (the anchor files' plan, SlotToCoeff below it)
    // unless the set leaves room for SlotToCoeff above it as well (generated sets).
    budget = after_cts > p.default_encryption_level ? after_cts - p.default_encryption_level : 0;
    if (budget >= m.stc_levels + 8) budget -= m.stc_levels;
    budget = std::max<u32>(budget, 8);
  }
  if (budget + m.stc_levels > after_cts) {
    throw ParameterError("Bootstrapper: " + std::to_string(budget) + " EvalMod levels and " +
                         std::to_string(m.stc_levels) +
                         " SlotToCoeff levels do not fit below level " + std::to_string(after_cts));
  }
  const EvalModParams emp =
      config.evalmod ? *config.evalmod
                     : EvalModParams::derive(p.sparse_hamming_weight, c.log_n(), kExactRaiseLimbs,
                                             budget, config.arcsine_degree);
  m.mod.emplace(emp);
  m.stc_first = c.policy().optimizations().circuits.slot_to_coeff_first;
  const u32 after_mod = after_cts - emp.depth();
  if (after_mod < m.stc_levels) throw ParameterError("Bootstrapper: EvalMod needs too many levels");
  input_level_ = m.stc_first ? m.stc_levels : 0;
  output_level_ = m.stc_first ? after_mod : after_mod - m.stc_levels;

  m.q0 = modulus_of(c, 0);
  {
    // Delta' = 2^k Delta_0 with q0 / Delta' ~ 2^ratio (never below Delta_0). The default grows by
    // one bit per halving of the slot count below 2^15: the message's coefficients grow as
    // 1 / sqrt(slots), and with them the error of sin(2 pi x) ~ 2 pi x.
    const int by_slots = static_cast<int>(BootstrapConfig::kDefaultMessageRatioBits) + 15 -
                         static_cast<int>(log_slots);
    const int by_order = m.stc_first
                             ? static_cast<int>(BootstrapConfig::kDefaultSlotToCoeffFirstRatioBits)
                             : by_slots;
    const u32 ratio = config.message_ratio_bits ? config.message_ratio_bits
                                                : static_cast<u32>(std::clamp(by_order, 1, 60));
    if (ratio > 60) {
      throw ParameterError("BootstrapConfig.message_ratio_bits: " + std::to_string(ratio) +
                           " is above 60");
    }
    const long double room = std::log2(m.q0 / c.default_scale(0)) - ratio;
    // A tenth of a bit of slack: q0 / Delta_0 = 2^9.96 (n16_s40_boot) still scales by 2^3.
    const int k = room > -0.1L ? static_cast<int>(std::floor(room + 0.1L)) : 0;
    m.scale_up = i64{1} << std::min(k, 40);
    // SlotToCoeff first: a ratio beyond q0 / Delta_0 divides the message inside its last matrix.
    if (m.stc_first && room < -0.1L) m.shrink = std::exp2(-room);
  }
  m.raised_scale = c.default_scale(m.top);
  {
    const Basis& b0 = c.level(0).q_basis;
    const Basis& bt = c.level(m.top).q_basis;
    std::vector<PrimeId> rest;
    for (u32 i = 0; i < bt.size; ++i) {
      const bool in0 = b0.find(bt[i]) >= 0;
      if (!in0) rest.push_back(bt[i]);
      if (!m.raise_runs.empty() && std::get<2>(m.raise_runs.back()) == in0 &&
          (!in0 || b0.find(bt[i]) == b0.find(bt[i - 1]) + 1)) {
        ++std::get<1>(m.raise_runs.back());
      } else {
        m.raise_runs.emplace_back(i, 1, in0);
      }
    }
    for (u32 i = 0; i < b0.size; ++i) {
      if (bt.find(b0[i]) < 0) {
        throw ParameterError("Bootstrapper: the top level lacks a prime of level 0");
      }
    }
    m.raise_rest = Basis(std::span<const PrimeId>(rest));
    // Exact lift (no e * q0 overflow): I then sums h + 1 terms within +-1/2 only, which lowers K
    // and with it EvalMod's 2 pi K noise amplification.
    m.raise_plan = c.backend().make_bconv(b0, m.raise_rest, /*exact=*/true);
  }
  const long double gap = static_cast<long double>(c.max_slots() / slots_);
  // Slots after CoeffToSlot: P u / (2 q0 D) (u: coefficients of the raised phase, times `gap`
  // after SubSum; D = K + 1/4, EvalMod's input divisor), so Re and Im come out as t / (q0 D) in
  // (-1, 1).
  const long double cts_scale =
      m.raised_scale / (2 * m.q0 * static_cast<long double>(m.mod->input_divisor()) * gap);
  const LinearTransformOptions lt_opts{0, config.min_keys, std::nullopt};
  m.cts_scale = cts_scale;
  const auto cts = coeff_to_slot_matrices(slots_, m.cts_levels, static_cast<double>(cts_scale));
  // Between CoeffToSlot levels the values t / (q0 K) carry the message only in their low bits
  // (|Delta_0 m| is about 2^-21 of q0 K at N = 2^16), while a rotation adds a fixed absolute
  // noise. So the intermediate levels run at 2^61, well above the 2^50-2^60 default scales of the
  // top levels; only the last level lands on Delta for EvalMod.
  constexpr long double kCtsInnerScale = 0x1p61L;
  long double in_scale = m.raised_scale;
  for (u32 i = 0; i < cts.size(); ++i) {
    const u32 lv = m.top - i;
    LinearTransformOptions opts = lt_opts;
    if (i + 1 < cts.size()) opts.output_scale = std::max(kCtsInnerScale, c.default_scale(lv - 1));
    m.cts.emplace_back(m.encoder, cts[i], lv, in_scale, opts);
    in_scale = opts.output_scale.value_or(c.default_scale(lv - 1));
  }
  // SlotToCoeff folds q0 / (2 pi Delta_0) in, undoing the 1 / q0 of EvalMod's input and the 2 pi
  // of sin(2 pi x).
  const long double stc_total = m.q0 * m.shrink /
                                (2 * std::numbers::pi_v<long double> * c.default_scale(0) *
                                 static_cast<long double>(m.scale_up));
  if (m.stc_first) {
    // SlotToCoeff first, at levels stc_levels..1 onto level 0 (the message divided by `shrink`),
    // and the whole factor as EvalMod's gain: EvalMod's output is the result.
    m.gain = stc_total;
    m.stc_scale = 1 / m.shrink;
    auto stc = slot_to_coeff_matrices(slots_, m.stc_levels, 1.0);
    stc.back().scale_by(static_cast<double>(m.stc_scale));
    for (u32 i = 0; i < stc.size(); ++i)
      m.stc.emplace_back(m.encoder, stc[i], input_level_ - i, std::nullopt, lt_opts);
    for (u32 g = slots_; g < c.max_slots(); g <<= 1)
      m.subsum_rotations.push_back(static_cast<int>(g));
    return;
  }
  // Most of that factor is applied instead as EvalMod's integer gain (a power of two), and the
  // rest (< 1) is folded into the last SlotToCoeff matrix, not the first: every SlotToCoeff level
  // before the last then carries values about as large as the output slots. The key-switching
  // and rescaling noise of those levels is fixed in absolute terms at the small scales of the
  // lowest levels (about 2^-26 of Delta at N = 2^16 with a dense key, proportional to N), so data
  // kept sqrt(slots) times smaller there (coefficients rather than slot values) lost that factor
  // in precision.
  const long double coeff_lift = std::sqrt(static_cast<long double>(slots_));
  m.gain = 1;
  while (2 * m.gain <= stc_total * std::max<long double>(1, coeff_lift) && m.gain < 0x1p40L)
    m.gain *= 2;
  const long double stc_scale = stc_total / m.gain;
  m.stc_scale = stc_scale;
  auto stc = slot_to_coeff_matrices(slots_, m.stc_levels, 1.0);
  stc.back().scale_by(static_cast<double>(stc_scale));
  for (u32 i = 0; i < stc.size(); ++i) {
    m.stc.emplace_back(m.encoder, stc[i], after_mod - i, std::nullopt, lt_opts);
  }
  for (u32 g = slots_; g < c.max_slots(); g <<= 1)
    m.subsum_rotations.push_back(static_cast<int>(g));
}

Bootstrapper::~Bootstrapper() = default;

const EvalModParams& Bootstrapper::evalmod_params() const {
  return impl_->mod->params();
}

double Bootstrapper::message_ratio_bits() const {
  const Impl& m = *impl_;
  return static_cast<double>(
      std::log2(m.q0 * m.shrink / (ctx_->default_scale(0) * static_cast<long double>(m.scale_up))));
}

std::vector<int> Bootstrapper::rotations() const {
  std::set<int> r(impl_->subsum_rotations.begin(), impl_->subsum_rotations.end());
  for (const auto& lt : impl_->cts)
    for (int x : lt.rotations())
      r.insert(x);
  for (const auto& lt : impl_->stc)
    for (int x : lt.rotations())
      r.insert(x);
  return {r.begin(), r.end()};
}

BootstrappingKeys Bootstrapper::generate_keys(KeyGenerator& keygen, const SecretKey& sk,
                                              bool progress) const {
  const std::vector<int> rots = rotations();
  std::vector<u32> elements;
  for (int r : rots)
    elements.push_back(galois_element_for_rotation(r, ctx_->log_n()));
  elements.push_back(galois_element_for_conjugation(ctx_->log_n()));
  detail::ProgressBar bar("bootstrap keys", elements.size() + 3, progress);
  // Compact keys are made compact by the generator (KeyGenerator::set_compact_keys), never held
  // expanded; its own setting is restored afterwards.
  struct CompactScope {
    KeyGenerator& kg;
    bool before;
    ~CompactScope() { kg.set_compact_keys(before); }
  } scope{keygen, keygen.compact_keys()};
  keygen.set_compact_keys(impl_->config.compact_keys || keygen.compact_keys());
  BootstrappingKeys keys;
  keys.relin = keygen.create_relin_key(sk);
  bar.step();
  {
    const SecretKey sparse = keygen.create_sparse_secret_key();
    keys.to_sparse = keygen.create_switching_key(sparse, sk.ntt().cref());
    bar.step();
    keys.to_dense = keygen.create_switching_key(sk, sparse.ntt().cref());
    bar.step();
  }
  for (const u32 g : elements) {
    keygen.add_galois_keys(sk, std::span<const u32>(&g, 1), keys.galois);
    bar.step();
  }
  return keys;
}

Ciphertext Bootstrapper::mod_raise(const Ciphertext& ct_in, const BootstrappingKeys& keys) const {
  const Context& c = *ctx_;
  Backend& be = c.backend();
  const Impl& m = *impl_;
  if (ct_in.level() != 0 || ct_in.size() != 2) {
    throw LevelError("Bootstrapper::mod_raise: expects a relinearized ciphertext at level 0");
  }
  // Delta_0 -> Delta' (exact; two limbs): see BootstrapConfig::message_ratio_bits.
  std::optional<Ciphertext> scaled;
  if (m.scale_up > 1) scaled = m.ev.multiply_integer(ct_in, m.scale_up);
  const Ciphertext& ct0 = scaled ? *scaled : ct_in;
  const LevelData& l0 = c.level(0);
  const LevelData& lt = c.level(m.top);
  const KeySwitcher& ks = m.ev.key_switcher();
  // Dense -> sparse at level 0, where key switching is cheapest.
  RnsPoly s0 = be.make_poly(l0.q_basis), s1 = be.make_poly(l0.q_basis);
  ks.switch_key(ct0.poly(1).cref(), 0, keys.to_sparse, s0.ref(), s1.ref());
  be.add(s0.cref(), ct0.poly(0).cref(), s0.ref());
  // ModRaise: the centered lift by fast BConv; its overflow e q0 just joins q0 I. The lift is x
  // itself on the level-0 primes, so only the other primes of the top level are converted (the
  // BConv const-mult rides on the INTT, as in ModUp) and the level-0 limbs are copied, still in
  // the NTT domain.
  const std::vector<u32>& hat_inv = m.raise_plan->table().src_hat_inv;
  std::vector<RnsPoly> raised;
  if (c.policy().fusion()) {
    // Both polys in one INTT (out of place from s0, s1) and one NTT (out of place from the
    // converted limbs straight into their runs of the raised polys): no copy before a transform.
    std::vector<RnsPoly> coeffs, rests;
    std::vector<PolyRef> coeff_refs, runs;
    std::vector<ConstPolyRef> from, run_src;
    for (const RnsPoly* p : {&s0, &s1}) {
      coeffs.push_back(be.make_poly(l0.q_basis));
      coeff_refs.push_back(coeffs.back().ref());
      from.push_back(p->cref());
    }
    be.intt(coeff_refs, hat_inv, from);
    for (std::size_t i = 0; i < coeffs.size(); ++i) {
      rests.push_back(be.make_poly(m.raise_rest));
      be.bconv_matmul(*m.raise_plan, coeffs[i].cref(), rests.back().ref());
      raised.push_back(be.make_poly(lt.q_basis));
      u32 from_rest = 0;
      for (const auto& [start, count, is_level0] : m.raise_runs) {
        if (is_level0) {
          const u32 at = static_cast<u32>(l0.q_basis.find(lt.q_basis[start]));
          be.copy(from[i].slice(at, count), raised.back().ref().slice(start, count));
          continue;
        }
        runs.push_back(raised.back().ref().slice(start, count));
        run_src.push_back(rests.back().cref().slice(from_rest, count));
        from_rest += count;
      }
    }
    be.ntt(runs, {}, run_src);
  } else {
    for (RnsPoly* p : {&s0, &s1}) {
      RnsPoly coeff = be.make_poly(l0.q_basis);
      be.copy(p->cref(), coeff.ref());
      const PolyRef in[] = {coeff.ref()};
      be.intt(in, hat_inv);
      RnsPoly rest = be.make_poly(m.raise_rest);
      be.bconv_matmul(*m.raise_plan, coeff.cref(), rest.ref());
      const PolyRef out[] = {rest.ref()};
      be.ntt(out);
      raised.push_back(be.make_poly(lt.q_basis));
      u32 from_rest = 0;
      for (const auto& [start, count, is_level0] : m.raise_runs) {
        const ConstPolyRef src =
            is_level0 ? p->cref().slice(static_cast<u32>(l0.q_basis.find(lt.q_basis[start])), count)
                      : rest.cref().slice(from_rest, count);
        if (!is_level0) from_rest += count;
        be.copy(src, raised.back().ref().slice(start, count));
      }
    }
  }
  // Sparse -> dense at the top level.
  std::vector<RnsPoly> polys;
  polys.push_back(be.make_poly(lt.q_basis));
  polys.push_back(be.make_poly(lt.q_basis));
  ks.switch_key(raised[1].cref(), m.top, keys.to_dense, polys[0].ref(), polys[1].ref());
  be.add(polys[0].cref(), raised[0].cref(), polys[0].ref());
  return Ciphertext(c.id(), m.top, m.raised_scale, slots_, std::move(polys));
}

Ciphertext Bootstrapper::coeff_to_slot(const Ciphertext& raised, const GaloisKeys& keys) const {
  const Impl& m = *impl_;
  Ciphertext ct = m.ev.clone(raised);
  for (const int r : m.subsum_rotations)
    m.ev.add_inplace(ct, m.ev.rotate(ct, r, keys));
  for (const auto& lt : m.cts)
    ct = lt.evaluate(m.ev, ct, keys);
  return ct;
}

namespace {

// (w + conj w, (w - conj w) X^(3N/2)) = (2 Re w, 2 Im w): w - conj w = 2i Im w and X^(3N/2) = -i.
Bootstrapper::RealImag split_real_imag(const Evaluator& ev, const Ciphertext& w,
                                       const GaloisKeys& keys) {
  const i64 half = static_cast<i64>(ev.context()->n() / 2);
  Ciphertext wc = ev.conjugate(w, keys);
  Ciphertext re = ev.add(w, wc);
  Ciphertext im = ev.multiply_monomial(ev.sub(w, wc), 3 * half);
  return {std::move(re), std::move(im)};
}

}  // namespace

Ciphertext Bootstrapper::eval_mod(const Ciphertext& w, const BootstrappingKeys& keys) const {
  return eval_mod(split_real_imag(impl_->ev, w, keys.galois), keys);
}

Ciphertext Bootstrapper::eval_mod(const RealImag& parts, const BootstrappingKeys& keys) const {
  const Impl& m = *impl_;
  const i64 half = static_cast<i64>(ctx_->n() / 2);
  const PolynomialEvaluator pe(m.ev, keys.relin);
  Backend& be = ctx_->backend();
  Ciphertext mre, mim;
  // The real and imaginary parts go through the same circuit, independent until the sum. With
  // pipelining, the real part runs on the backend's second stream while the imaginary part runs
  // on the first, so each part's small kernels fill what the other leaves idle (Theodosian
  // §IV-B). Without it but with multi-poly caching they run as one group, batched
  // (EvalMod::evaluate_batch: each key switch and rescale one set of launches over both, the
  // relinearization key read once); Optimizations::batched_evalmod asks for the batched group
  // even where the two streams are available. On the H200 the two streams won in a graph (16.5
  // against 17.2 ms for bootparam_40; docs/performance-journal.md). Same words either way.
  const ExecutionPolicy& policy = ctx_->policy();
  WorkLanes lanes = plan_work_lanes(policy, 2, be.forked());
  if (policy.optimizations().batched_evalmod && policy.multi_poly_caching()) {
    lanes = WorkLanes::kBatched;
  }
  // Merged tail (Optimizations::Circuits::merged_evalmod_tail): each part stops before its last
  // double angle, which then runs once over both.
  const bool merged = policy.optimizations().circuits.merged_evalmod_tail && m.mod->has_open_tail();
  EvalMod::OpenTail tail;
  const auto one = [&](const Ciphertext& part) {
    const Ciphertext* const p[] = {&part};
    const double gain = static_cast<double>(m.gain);
    return std::move((merged ? m.mod->evaluate_batch_open(pe, m.ev, keys.relin, p, gain, tail)
                             : m.mod->evaluate_batch(pe, m.ev, keys.relin, p, gain))
                         .front());
  };
  if (lanes == WorkLanes::kTwoStreams) {
    ForkScope fork(be);
    mre = one(parts.re);
    be.end_fork();
    mim = one(parts.im);
    fork.join();
  } else if (lanes == WorkLanes::kBatched) {
    const Ciphertext* const both[] = {&parts.re, &parts.im};
    const double gain = static_cast<double>(m.gain);
    std::vector<Ciphertext> r =
        merged ? m.mod->evaluate_batch_open(pe, m.ev, keys.relin, both, gain, tail)
               : m.mod->evaluate_batch(pe, m.ev, keys.relin, both, gain);
    mre = std::move(r[0]);
    mim = std::move(r[1]);
  } else {
    mre = one(parts.re);
    mim = one(parts.im);
  }
  if (merged) {
    // k u_re^2 + i k u_im^2 - A (1 + i): i u_im (X^(N/2) multiplies the slots by i) times u_im
    // joins u_re^2 before the one relinearization and rescale.
    const Ciphertext iim = m.ev.multiply_monomial(mim, half);
    const Ciphertext* const a[] = {&mre, &iim};
    const Ciphertext* const b[] = {&mre, &mim};
    Ciphertext out =
        m.ev.multiply_sum_relin_rescale(a, b, mre.level(), keys.relin, nullptr, tail.factor);
    m.ev.add_const_inplace(out, std::complex<double>(-tail.constant, -tail.constant));
    return out;
  }
  m.ev.add_inplace(mre, m.ev.multiply_monomial(mim, half));
  return mre;
}

Bootstrapper::RealImag Bootstrapper::coeff_to_slot_split(const Ciphertext& raised,
                                                         const BootstrappingKeys& keys) const {
  const Impl& m = *impl_;
  const LinearTransform& last = m.cts.back();
  if (last.min_keys())
    return split_real_imag(m.ev, coeff_to_slot(raised, keys.galois), keys.galois);
  // The input is read in place until a step makes a new ciphertext (no copy of it first).
  Ciphertext ct;
  const Ciphertext* cur = &raised;
  for (const int r : m.subsum_rotations) {
    ct = m.ev.add(*cur, m.ev.rotate(*cur, r, keys.galois));
    cur = &ct;
  }
  for (std::size_t i = 0; i + 1 < m.cts.size(); ++i) {
    ct = m.cts[i].evaluate(m.ev, *cur, keys.galois);
    cur = &ct;
  }
  const Ciphertext w_high = m.ev.mod_down(last.evaluate_unrescaled(m.ev, *cur, keys.galois));
  RealImag high = split_real_imag(m.ev, w_high, keys.galois);
  RealImag out{m.ev.rescale(high.re), m.ev.rescale(high.im)};
  out.re.set_scale(last.output_scale());
  out.im.set_scale(last.output_scale());
  return out;
}

Ciphertext Bootstrapper::slot_to_coeff(const Ciphertext& ct, const GaloisKeys& keys) const {
  if (impl_->stc.empty()) return impl_->ev.clone(ct);
  Ciphertext out = impl_->stc.front().evaluate(impl_->ev, ct, keys);
  for (std::size_t i = 1; i < impl_->stc.size(); ++i)
    out = impl_->stc[i].evaluate(impl_->ev, out, keys);
  return out;
}

Ciphertext Bootstrapper::bootstrap(const Ciphertext& ct_in, const BootstrappingKeys& keys) const {
  const Impl& m = *impl_;
  const Context& c = *ctx_;
  if (ct_in.slots() != slots_) {
    throw ParameterError("Bootstrapper: the ciphertext has " + std::to_string(ct_in.slots()) +
                         " slots, the bootstrapper was built for " + std::to_string(slots_));
  }
  if (ct_in.level() < input_level_) {
    throw LevelError("Bootstrapper: the ciphertext is at level " + std::to_string(ct_in.level()) +
                     ", below the input level " + std::to_string(input_level_) +
                     " (SlotToCoeff runs first, on the input; see input_level())");
  }
  Ciphertext ct =
      ct_in.level() > input_level_ ? m.ev.level_down(ct_in, input_level_) : m.ev.clone(ct_in);
  if (ct.size() != 2) ct = m.ev.relinearize(ct, keys.relin);
  const long double s_in = ct.scale();
  if (m.stc_first) {
    const OpScope scope("SlotToCoeff");
    ct = slot_to_coeff(ct, keys.galois);
  }
  // Phase scopes for the traffic recorder (one relaxed load each while nothing observes them).
  std::optional<Ciphertext> raised;
  {
    const OpScope scope("ModRaise");
    raised = mod_raise(ct, keys);
  }
  std::optional<RealImag> parts;
  {
    const OpScope scope("CoeffToSlot");
    parts = coeff_to_slot_split(*raised, keys);
  }
  raised.reset();
  std::optional<Ciphertext> reduced;
  {
    const OpScope scope("EvalMod");
    reduced = eval_mod(*parts, keys);
  }
  parts.reset();
  Ciphertext out;
  if (m.stc_first) {
    out = std::move(*reduced);
  } else {
    const OpScope scope("SlotToCoeff");
    out = slot_to_coeff(*reduced, keys.galois);
  }
  out.set_slots(slots_);
  // SlotToCoeff assumed an input at Delta of the input level; any other input scale rides along in
  // the output's.
  out.set_scale(out.scale() * (s_in / c.default_scale(input_level_)));
  return out;
}

Ciphertext Bootstrapper::bootstrap(const Ciphertext& ct, const BootstrappingKeys& keys,
                                   double center) const {
  if (!std::isfinite(center)) {
    throw ParameterError("Bootstrapper::bootstrap: center is not finite");
  }
  if (center == 0) return bootstrap(ct, keys);
  Ciphertext out = bootstrap(impl_->ev.add_const(ct, -center), keys);
  impl_->ev.add_const_inplace(out, center);
  return out;
}

std::string Bootstrapper::describe() const {
  const Impl& m = *impl_;
  const EvalModParams& e = m.mod->params();
  std::ostringstream os;
  os << "slots " << slots_ << " (N = 2^" << ctx_->log_n() << "), h_sparse "
     << ctx_->params().sparse_hamming_weight << "\n"
     << "levels: input " << input_level_;
  if (m.stc_first) os << " -> SlotToCoeff .." << 0;
  os << " -> ModRaise " << m.top << " -> CoeffToSlot " << m.top << ".." << m.top - m.cts_levels
     << " -> EvalMod " << m.top - m.cts_levels << ".." << m.top - m.cts_levels - e.depth();
  if (!m.stc_first) os << " -> SlotToCoeff .." << output_level_;
  os << " (" << output_level_ - input_level_ << " levels per bootstrapping)\n"
     << "EvalMod: K " << e.k_bound << ", cosine degree " << e.degree << ", double angles "
     << e.double_angles << ", arcsine degree " << e.arcsine_degree << ", depth " << e.depth()
     << ", model error 2^" << std::log2(e.estimated_error) << ", output gain " << m.gain << "\n"
     << "message ratio q0 / Delta' = 2^" << message_ratio_bits() << " (input scaled up by "
     << m.scale_up << ")\n"
     << "keys: " << rotations().size() << " rotations + conjugation"
     << (m.config.min_keys ? " (min-keys mode)" : "")
     << (m.config.compact_keys ? ", compact (a halves expanded at each use)" : "") << "\n";
  return os.str();
}

}  // namespace theo
