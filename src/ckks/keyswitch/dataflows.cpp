// The key-switching dataflows (dataflows.h). Every dataflow issues, per word, the arithmetic of
// ModUp -> KeyMult -> ModDown, so all of them give the same words.

#include "ckks/keyswitch/dataflows.h"

#include <algorithm>
#include <optional>
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
  // One key for every switch (rotations of several ciphertexts by one step, relinearizations):
  // each key word is read once for the whole batch (multi-poly caching; the same words).
  const bool one_key =
      n > 1 && galois.empty() &&
      std::all_of(keys.begin(), keys.end(), [&](const SwitchingKey* k) { return k == keys[0]; });
  std::vector<PolyRef> e0, e1;
  for (std::size_t i = 0; i < n; ++i) {
    e0.push_back(ext_refs[2 * i]);
    e1.push_back(ext_refs[2 * i + 1]);
  }
  const auto key_mult = [&](KeyMultPart part) {
    if (one_key) {
      st.key_mult_shared_key(digits, level, *keys[0], e0, e1, part);
      return;
    }
    for (std::size_t i = 0; i < n; ++i)
      st.key_mult(digits[i], level, *keys[i], e0[i], e1[i], part, g_of(i));
  };
  if (!two_streams(st, plan)) {
    key_mult(KeyMultPart::kAll);                    // KeyMult
    mod_down(st, plan, ext_refs, out_refs, level);  // ModDown
    return;
  }
  key_mult(KeyMultPart::kP);  // KeyMult, P part
  {
    ForkScope fork(be);
    st.mod_down_lift(ext_refs, out_refs, level);  // ModDown's lift (second stream)
    be.end_fork();
    key_mult(KeyMultPart::kQ);  // KeyMult, Q part (first stream)
    fork.join();
  }
  st.mod_down_finish(ext_refs, out_refs, level);  // ModDown's tail
}

void run_dpob(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  const std::vector<ModUpDigits> up = st.mod_up(b.inputs, b.level, plan.mod_up);  // ModUp
  key_mult_mod_down(st, plan, digit_refs(up), b.keys, b.level, b.out0, b.out1);  // KeyMult, ModDown
}

namespace {

struct Range {
  u32 first = 0;
  u32 count = 0;
};

// [a, b) cut at every point of `cuts` strictly inside it.
std::vector<Range> cut(u32 a, u32 b, std::vector<u32> cuts) {
  std::sort(cuts.begin(), cuts.end());
  std::vector<Range> out;
  u32 at = a;
  for (const u32 c : cuts) {
    if (c > at && c < b) {
      out.push_back({at, c - at});
      at = c;
    }
  }
  if (at < b) out.push_back({at, b - at});
  return out;
}

// The range lies in the digit's own limbs (where ModUp's output is the input itself).
bool own(const DigitPlan& d, const Range& r) {
  return r.first >= d.start && r.first + r.count <= d.start + d.count;
}

// A view of `limbs` limbs of `storage` (at limb `offset`) over `basis`: scratch reused with the
// basis of what it holds now.
PolyRef view(RnsPoly& storage, std::size_t offset, const Basis& basis) {
  return PolyRef{storage.data() + offset * storage.n(), storage.n(), basis};
}

void check_extension(const Context& ctx, const LevelData& lv, const Extension& e) {
  const std::string level = std::to_string(e.level);
  if (!(e.d.basis == lv.q_basis))
    throw ParameterError("KeySwitcher: input is not over the basis of level " + level);
  if (!(e.ext0.basis == lv.pq_basis) || !(e.ext1.basis == lv.pq_basis))
    throw ParameterError("KeySwitcher: extended outputs are not over Q_l u P of level " + level);
  if (e.key == nullptr || e.key->empty() || e.key->context_id() != ctx.id() ||
      e.key->dnum() != ctx.dnum())
    throw ContextError("KeySwitcher: the switching key is empty or not of this Context");
  if (e.a0.words() != 0 &&
      (!(e.a0.basis == lv.q_basis) || !(e.a1.basis == lv.q_basis) || e.s.size() != lv.limbs))
    throw ParameterError("KeySwitcher: the added terms must be over Q_l of level " + level +
                         " with one constant per limb");
}

const OutputChunkPlans& chunk_tables(const LevelData& lv, const KeySwitchPlan& plan) {
  const OutputChunkPlans* p = lv.chunk_plans(plan.chunks);
  if (p == nullptr) {
    throw ParameterError("KeySwitcher: level " + std::to_string(lv.level) + " has no tables for " +
                         std::string(dataflow_name(plan.dataflow)) + " with " +
                         std::to_string(plan.chunks) +
                         " chunks (a Context builds those its dataflow selection uses; "
                         "KeySwitchOptions::prepare_all builds every count)");
  }
  return *p;
}

// The added terms of a KeyMult on range r: the running sum (prev, over r) for every digit after
// the first, relinearization's s * a on the Q_l limbs for the first.
struct Added {
  ConstPolyRef a0, a1;
  std::span<const u32> s;
};
Added added(const Extension& e, u32 limbs, bool first_digit, const Range& r, ConstPolyRef prev0,
            ConstPolyRef prev1, std::span<const u32> ones) {
  if (!first_digit) return {prev0, prev1, ones.subspan(0, r.count)};
  if (e.a0.words() != 0 && r.first < limbs)
    return {e.a0.slice(r.first, r.count), e.a1.slice(r.first, r.count),
            e.s.subspan(r.first, r.count)};
  return {};
}

// Digit-serial, output-bulk: one digit's INTT -> conversion onto all of Q_l u P -> KeyMult after
// another. The digits' KeyMults sum in two accumulators used in turn, so that each step reads the
// previous sum and writes the other (Backend::key_mult_add_scaled with s = 1), and the last one
// writes ext. The last digit's P limbs go first: ModDown's lift may start on them.
void extend_dsob(const KeySwitchStages& st, const Extension& e,
                 const std::function<void()>& on_p_ready) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(e.level);
  Backend& be = ctx.backend();
  const std::size_t beta = lv.digits.size();
  const u32 limbs = lv.limbs, extended = limbs + ctx.alpha();
  u32 widest = 0;
  for (const DigitPlan& d : lv.digits)
    widest = std::max(widest, d.count);
  RnsPoly coeff_store = be.make_poly(Basis::range(0, widest));
  RnsPoly up = be.make_poly(lv.pq_basis);
  RnsPoly sum0, sum1;  // the accumulators other than ext
  if (beta > 1) {
    sum0 = be.make_poly(lv.pq_basis);
    sum1 = be.make_poly(lv.pq_basis);
  }
  const std::vector<u32> ones(extended, 1);
  bool p_ready = false;
  for (std::size_t k = 0; k < beta; ++k) {
    const DigitPlan& dk = lv.digits[k];
    const PolyRef coeffs = view(coeff_store, 0, lv.q_basis.slice(dk.start, dk.count));
    st.mod_up_digit_coefficients(e.d, e.level, k, coeffs);
    const std::size_t idx[] = {k};
    const ConstPolyRef cf[] = {coeffs};
    const PolyRef up_ref[] = {up.ref()};
    st.mod_up_convert(idx, cf, e.level, nullptr, 0, up_ref);
    const bool to_ext = (beta - 1 - k) % 2 == 0;
    const PolyRef o0 = to_ext ? e.ext0 : sum0.ref(), o1 = to_ext ? e.ext1 : sum1.ref();
    const PolyRef p0 = to_ext ? (beta > 1 ? sum0.ref() : PolyRef{}) : e.ext0;
    const PolyRef p1 = to_ext ? (beta > 1 ? sum1.ref() : PolyRef{}) : e.ext1;
    std::vector<Range> ranges = cut(0, extended, {dk.start, dk.start + dk.count, limbs});
    const bool last = k + 1 == beta;
    if (last)
      std::stable_partition(ranges.begin(), ranges.end(),
                            [&](const Range& r) { return r.first >= limbs; });
    for (const Range& r : ranges) {
      if (last && !p_ready && r.first < limbs) {
        if (on_p_ready) on_p_ready();
        p_ready = true;
      }
      const ConstPolyRef data[] = {own(dk, r) ? e.d.slice(r.first, r.count)
                                              : up.cref().slice(r.first, r.count)};
      const Added a = added(
          e, limbs, k == 0, r, k > 0 ? ConstPolyRef(p0.slice(r.first, r.count)) : ConstPolyRef{},
          k > 0 ? ConstPolyRef(p1.slice(r.first, r.count)) : ConstPolyRef{}, ones);
      st.key_mult_range(idx, data, e.level, *e.key, r.first, r.count, o0.slice(r.first, r.count),
                        o1.slice(r.first, r.count), a.a0, a.a1, a.s);
    }
  }
  if (!p_ready && on_p_ready) on_p_ready();
}

// The output chunks in the order they run: the last (holding P) first. Calls on_p_ready after the
// chunk that completes the P limbs.
template <typename ChunkFn>
void for_chunks_p_first(const OutputChunkPlans& plans, u32 limbs,
                        const std::function<void()>& on_p_ready, ChunkFn&& run_chunk) {
  bool p_ready = false;
  for (std::size_t j = plans.ranges.size(); j-- > 0;) {
    run_chunk(j);
    if (!p_ready && plans.ranges[j].first <= limbs) {
      if (on_p_ready) on_p_ready();
      p_ready = true;
    }
  }
  if (!p_ready && on_p_ready) on_p_ready();
}

// Digit-serial, output-chunked: the INTT of the input, then per output chunk, one digit's
// conversion onto the chunk and KeyMult after another, summed in two chunk-sized accumulators
// used in turn (the last digit's sum lands in ext). The chunk's running sum stays in L2 while the
// digits pass.
void extend_dsoc(const KeySwitchStages& st, const KeySwitchPlan& plan, const Extension& e,
                 const std::function<void()>& on_p_ready) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(e.level);
  Backend& be = ctx.backend();
  const OutputChunkPlans& plans = chunk_tables(lv, plan);
  const std::size_t beta = lv.digits.size();
  const u32 limbs = lv.limbs;
  const RnsPoly coeffs = st.mod_up_coefficients(e.d, e.level);
  const u32 widest = plans.ranges.front().count;  // the larger chunks come first
  RnsPoly slot_store = be.make_poly(Basis::range(0, widest));
  RnsPoly sum_store0, sum_store1;
  if (beta > 1) {
    sum_store0 = be.make_poly(Basis::range(0, widest));
    sum_store1 = be.make_poly(Basis::range(0, widest));
  }
  const std::vector<u32> ones(widest, 1);
  for_chunks_p_first(plans, limbs, on_p_ready, [&](std::size_t j) {
    const ChunkRange c = plans.ranges[j];
    const Basis basis = lv.pq_basis.slice(c.first, c.count);
    const PolyRef slot = view(slot_store, 0, basis);
    const PolyRef sum0 = beta > 1 ? view(sum_store0, 0, basis) : PolyRef{};
    const PolyRef sum1 = beta > 1 ? view(sum_store1, 0, basis) : PolyRef{};
    const PolyRef ext0 = e.ext0.slice(c.first, c.count), ext1 = e.ext1.slice(c.first, c.count);
    for (std::size_t k = 0; k < beta; ++k) {
      const DigitPlan& dk = lv.digits[k];
      const std::size_t idx[] = {k};
      const ConstPolyRef cf[] = {coeffs.cref().slice(dk.start, dk.count)};
      const PolyRef out[] = {slot};
      st.mod_up_convert(idx, cf, e.level, &plans, j, out);
      const bool to_ext = (beta - 1 - k) % 2 == 0;
      const PolyRef o0 = to_ext ? ext0 : sum0, o1 = to_ext ? ext1 : sum1;
      const PolyRef p0 = to_ext ? sum0 : ext0, p1 = to_ext ? sum1 : ext1;
      for (const Range& r :
           cut(c.first, c.first + c.count, {dk.start, dk.start + dk.count, limbs})) {
        const u32 at = r.first - c.first;
        const ConstPolyRef data[] = {own(dk, r) ? e.d.slice(r.first, r.count)
                                                : ConstPolyRef(slot.slice(at, r.count))};
        const Added a =
            added(e, limbs, k == 0, r, k > 0 ? ConstPolyRef(p0.slice(at, r.count)) : ConstPolyRef{},
                  k > 0 ? ConstPolyRef(p1.slice(at, r.count)) : ConstPolyRef{}, ones);
        st.key_mult_range(idx, data, e.level, *e.key, r.first, r.count, o0.slice(at, r.count),
                          o1.slice(at, r.count), a.a0, a.a1, a.s);
      }
    }
  });
}

// Digit-parallel, output-chunked: the INTT of the input, then per output chunk every digit's
// conversion onto the chunk (one set of launches) and one KeyMult of the chunk over all digits,
// so KeyMult reads the chunk's digit words from L2 while the keys stream past. The chunk's words
// of every digit live in one scratch buffer reused by every chunk; a digit's own limbs are the
// input itself. The INTT'd input, read by every chunk, is the one piece all chunks share.
void extend_dpoc(const KeySwitchStages& st, const KeySwitchPlan& plan, const Extension& e,
                 const std::function<void()>& on_p_ready) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(e.level);
  Backend& be = ctx.backend();
  const OutputChunkPlans& plans = chunk_tables(lv, plan);
  const std::size_t beta = lv.digits.size();
  const u32 limbs = lv.limbs;
  const RnsPoly coeffs = st.mod_up_coefficients(e.d, e.level);
  const u32 widest = plans.ranges.front().count;
  RnsPoly slot_store = be.make_poly(Basis::range(0, static_cast<u32>(beta) * widest));
  std::vector<std::size_t> idx(beta);
  std::vector<ConstPolyRef> cf;
  std::vector<u32> cuts{limbs};
  for (std::size_t k = 0; k < beta; ++k) {
    const DigitPlan& dk = lv.digits[k];
    idx[k] = k;
    cf.push_back(coeffs.cref().slice(dk.start, dk.count));
    cuts.push_back(dk.start);
    cuts.push_back(dk.start + dk.count);
  }
  for_chunks_p_first(plans, limbs, on_p_ready, [&](std::size_t j) {
    const ChunkRange c = plans.ranges[j];
    const Basis basis = lv.pq_basis.slice(c.first, c.count);
    std::vector<PolyRef> slots;
    for (std::size_t k = 0; k < beta; ++k)
      slots.push_back(view(slot_store, k * widest, basis));
    st.mod_up_convert(idx, cf, e.level, &plans, j, slots);
    for (const Range& r : cut(c.first, c.first + c.count, cuts)) {
      const u32 at = r.first - c.first;
      std::vector<ConstPolyRef> data;
      for (std::size_t k = 0; k < beta; ++k)
        data.push_back(own(lv.digits[k], r) ? e.d.slice(r.first, r.count)
                                            : ConstPolyRef(slots[k].slice(at, r.count)));
      const Added a = added(e, limbs, true, r, {}, {}, {});
      st.key_mult_range(idx, data, e.level, *e.key, r.first, r.count,
                        e.ext0.slice(r.first, r.count), e.ext1.slice(r.first, r.count), a.a0, a.a1,
                        a.s);
    }
  });
}

}  // namespace

void extend(const KeySwitchStages& st, const KeySwitchPlan& plan, const Extension& e,
            const std::function<void()>& on_p_ready) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(e.level);
  check_extension(ctx, lv, e);
  switch (plan.dataflow) {
    case Dataflow::kDPOB: {
      const ConstPolyRef in[] = {e.d};
      const std::vector<ModUpDigits> up = st.mod_up(in, e.level, plan.mod_up);
      const std::vector<std::vector<ConstPolyRef>> digits = digit_refs(up);
      if (e.a0.words() != 0)
        st.key_mult_add_scaled(digits[0], e.level, *e.key, e.ext0, e.ext1, e.a0, e.a1, e.s);
      else
        st.key_mult(digits[0], e.level, *e.key, e.ext0, e.ext1);
      if (on_p_ready) on_p_ready();
      return;
    }
    case Dataflow::kDSOB:
      extend_dsob(st, e, on_p_ready);
      return;
    case Dataflow::kDSOC:
      extend_dsoc(st, plan, e, on_p_ready);
      return;
    case Dataflow::kDPOC:
      extend_dpoc(st, plan, e, on_p_ready);
      return;
    case Dataflow::kAuto:
      break;
  }
  throw ParameterError("KeySwitcher: dataflow auto must be resolved by the planner before it runs");
}

void run_serial_or_chunked(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(b.level);
  Backend& be = ctx.backend();
  for (std::size_t i = 0; i < b.inputs.size(); ++i) {
    if (!(b.out0[i].basis == lv.q_basis) || !(b.out1[i].basis == lv.q_basis)) {
      throw ParameterError("KeySwitcher: outputs are not over the basis of level " +
                           std::to_string(b.level));
    }
    ExtendedPair ext{be.make_poly(lv.pq_basis), be.make_poly(lv.pq_basis)};
    const PolyRef ext_refs[] = {ext.c0.ref(), ext.c1.ref()};
    const PolyRef out_refs[] = {b.out0[i], b.out1[i]};
    const bool two = two_streams(st, plan);
    std::optional<ForkScope> fork;
    const auto p_ready = [&] {
      if (!two) return;
      fork.emplace(be);
      st.mod_down_lift(ext_refs, out_refs, b.level);  // branch: the P limbs of ext
      be.end_fork();
    };
    extend(st, plan, {b.level, b.inputs[i], b.keys[i], ext.c0.ref(), ext.c1.ref(), {}, {}, {}},
           p_ready);
    if (fork) {
      fork->join();
      st.mod_down_finish(ext_refs, out_refs, b.level);
    } else {
      mod_down(st, plan, ext_refs, out_refs, b.level);
    }
  }
}

void run_dataflow(const KeySwitchStages& st, const KeySwitchPlan& plan, const Batch& b) {
  switch (plan.dataflow) {
    case Dataflow::kDPOB:
      run_dpob(st, plan, b);
      return;
    case Dataflow::kDSOB:
    case Dataflow::kDSOC:
    case Dataflow::kDPOC:
      run_serial_or_chunked(st, plan, b);
      return;
    case Dataflow::kAuto:
      break;
  }
  throw ParameterError("KeySwitcher: dataflow auto must be resolved by the planner before it runs");
}

}  // namespace theo::keyswitch
