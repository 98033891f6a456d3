// The key-switching dataflows (dataflows.h). Every dataflow issues, per word, the arithmetic of
// ModUp -> KeyMult -> ModDown, so all of them give the same words.

#include "ckks/keyswitch/dataflows.h"

#include <string>

#include "theo/errors.h"
#include "theo/ring/fork_scope.h"

namespace theo::keyswitch {

namespace {

// Two streams when the plan asks for them and no caller's fork is open (forks do not nest; e.g.
// the bootstrapper's two EvalMod lanes already overlap).
bool two_streams(const KeySwitchStages& st, const KeySwitchPlan& plan) {
  return plan.streams > 1 && !st.context().backend().forked();
}

}  // namespace

std::vector<std::vector<ConstPolyRef>> digit_refs(std::span<const ModUpDigits> up) {
  std::vector<std::vector<ConstPolyRef>> refs(up.size());
  for (std::size_t i = 0; i < up.size(); ++i)
    for (const RnsPoly& p : up[i].digits)
      refs[i].push_back(p.cref());
  return refs;
}

void mod_down(const KeySwitchStages& st, const KeySwitchPlan& plan, std::span<const PolyRef> in,
              std::span<const PolyRef> out, u32 level) {
  if (plan.mod_down_together || in.size() <= 1) {
    st.mod_down(in, out, level);
    return;
  }
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher::mod_down: one output per input is needed");
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    st.mod_down(in.subspan(i, 1), out.subspan(i, 1), level);
}

void key_mult_mod_down(const KeySwitchStages& st, const KeySwitchPlan& plan,
                       std::span<const std::vector<ConstPolyRef>> digits,
                       std::span<const SwitchingKey* const> keys, u32 level,
                       std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                       std::span<const u32> galois) {
  const std::size_t n = digits.size();
  if (!galois.empty() && galois.size() != n) {
    throw ParameterError("KeySwitcher::key_mult_mod_down: one galois element per key switch");
  }
  const auto g_of = [&](std::size_t i) { return galois.empty() ? u32{1} : galois[i]; };
  if (keys.size() != n || out0.size() != n || out1.size() != n) {
    throw ParameterError(
        "KeySwitcher::key_mult_mod_down: one key and one output pair per key switch are needed");
  }
  for (const SwitchingKey* k : keys)
    if (k == nullptr) throw ParameterError("KeySwitcher::key_mult_mod_down: a key is null");
  if (n == 0) return;
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
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
  const auto key_mult = [&](std::size_t i, KeyMultPart part) {
    st.key_mult(digits[i], level, *keys[i], ext_refs[2 * i], ext_refs[2 * i + 1], part, g_of(i));
  };
  if (!two_streams(st, plan)) {
    for (std::size_t i = 0; i < n; ++i)
      key_mult(i, KeyMultPart::kAll);               // KeyMult
    mod_down(st, plan, ext_refs, out_refs, level);  // ModDown
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    key_mult(i, KeyMultPart::kP);  // KeyMult, P part
  {
    ForkScope fork(be);
    st.mod_down_lift(ext_refs, out_refs, level);  // ModDown's lift (second stream)
    be.end_fork();
    for (std::size_t i = 0; i < n; ++i)
      key_mult(i, KeyMultPart::kQ);  // KeyMult, Q part (first stream)
    fork.join();
  }
  st.mod_down_finish(ext_refs, out_refs, level);  // ModDown's tail
}

void run_dpob(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  const std::vector<ModUpDigits> up = st.mod_up(b.inputs, b.level, plan.mod_up);  // ModUp
  key_mult_mod_down(st, plan, digit_refs(up), b.keys, b.level, b.out0, b.out1);  // KeyMult, ModDown
}

// The digit-parallel, output-bulk order writes all beta digits over Q_l u P before KeyMult reads
// any of them. Past the cache size that output goes to DRAM and comes back, while KeyMult's key
// stream evicts it. Here the output limbs are taken in chunks, the P limbs first, then each
// digit's own limbs, and each chunk's BConv -> NTT -> KeyMult runs over all digits, so KeyMult
// reads the chunk's digit words from L2. The chunk's digit words live in one scratch buffer,
// reused by every chunk (its lines are rewritten while still cached, not written back); a
// digit's own limbs are the input itself, so no echo is made. The INTT'd input, read by every
// chunk's BConv, is the one piece every chunk shares. With two streams the P chunk's KeyMult
// comes first and ModDown's lift of it runs on the second stream while the Q chunks run on the
// first, as in key_mult_mod_down.
void run_dpoc(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  const Context& ctx = st.context();
  const u32 level = b.level;
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
  const u32 n = ctx.n(), alpha = ctx.alpha();
  const std::size_t beta = lv.digits.size();
  if (beta < 2 || lv.digits.front().to_p == nullptr || !ctx.policy().fusion()) {
    throw ParameterError("KeySwitcher: level " + std::to_string(level) +
                         " has no output-chunked plans (KeySwitchPlanner::output_chunked)");
  }
  for (std::size_t i = 0; i < b.inputs.size(); ++i) {
    const ConstPolyRef d = b.inputs[i];
    const SwitchingKey& key = *b.keys[i];
    if (!(d.basis == lv.q_basis)) {
      throw ParameterError(
          "KeySwitcher::switch_key_chunked: input is not over the basis of level " +
          std::to_string(level));
    }
    if (!(b.out0[i].basis == lv.q_basis) || !(b.out1[i].basis == lv.q_basis)) {
      throw ParameterError(
          "KeySwitcher::switch_key_chunked: outputs are not over the basis of level " +
          std::to_string(level));
    }
    if (key.empty() || key.context_id() != ctx.id() || key.dnum() != ctx.dnum()) {
      throw ContextError(
          "KeySwitcher::switch_key_chunked: the switching key is empty or not of this Context");
    }
    const RnsPoly coeffs = st.mod_up_coefficients(d, level);  // ModUp's INTT
    ExtendedPair ext{be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
    // beta slots of alpha limbs: the chunk's words of every digit but the chunk's own.
    RnsPoly scratch = be.make_poly(Basis::range(0, static_cast<u32>(beta) * alpha));
    // Chunk `own` (a digit index, or beta for P) on the limbs [first, first + count) of Q_l u P:
    // ModUp onto the chunk, then KeyMult of those limbs into ext.
    const auto chunk = [&](std::size_t own, u32 first, u32 count) {
      const Basis basis = lv.pq_basis.slice(first, count);
      std::vector<PolyRef> slots;
      std::vector<ConstPolyRef> digits;
      for (std::size_t k = 0; k < beta; ++k) {
        slots.push_back(PolyRef{scratch.data() + k * alpha * std::size_t{n}, n, basis});
        digits.push_back(k == own ? d.slice(first, count) : ConstPolyRef(slots.back()));
      }
      st.mod_up_chunk(coeffs.cref(), level, own, slots);
      st.key_mult_chunk(digits, level, key, first, count, ext.c0.ref(), ext.c1.ref());
    };
    const auto q_chunks = [&] {
      for (std::size_t c = 0; c < beta; ++c)
        chunk(c, lv.digits[c].start, lv.digits[c].count);
    };
    const PolyRef ext_refs[] = {ext.c0.ref(), ext.c1.ref()};
    const PolyRef out_refs[] = {b.out0[i], b.out1[i]};
    chunk(beta, lv.limbs, alpha);  // the P chunk
    if (!two_streams(st, plan)) {
      q_chunks();
      mod_down(st, plan, ext_refs, out_refs, level);
      continue;
    }
    {
      ForkScope fork(be);
      st.mod_down_lift(ext_refs, out_refs, level);  // branch: the P limbs of ext, and the outputs
      be.end_fork();
      q_chunks();  // main: the Q_l limbs of ext (the scratch and coeffs are main-lane only)
      fork.join();
    }
    st.mod_down_finish(ext_refs, out_refs, level);
  }
}

void run_dataflow(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  switch (plan.dataflow) {
    case Dataflow::kDPOB:
      run_dpob(st, plan, b);
      return;
    case Dataflow::kDPOC:
      run_dpoc(st, plan, b);
      return;
    case Dataflow::kAuto:
    case Dataflow::kDSOB:
    case Dataflow::kDSOC:
      break;
  }
  throw ParameterError("KeySwitcher: dataflow " + std::string(dataflow_name(plan.dataflow)) +
                       (plan.dataflow == Dataflow::kAuto
                            ? " must be resolved by the planner before it runs"
                            : " is not implemented (available: DPOB, DPOC)"));
}

}  // namespace theo::keyswitch
