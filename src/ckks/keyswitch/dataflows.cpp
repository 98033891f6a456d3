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

std::size_t count(const Switches& s) {
  return s.keys.size();
}
// One input for every switch (hoisting).
bool shared_input(const Switches& s) {
  return s.inputs.size() == 1 && count(s) > 1;
}
u32 galois_of(const Switches& s, std::size_t i) {
  return s.galois.empty() ? u32{1} : s.galois[i];
}
// The terms switch i adds before its finish.
KeyMultTerms terms(const Switches& s, std::size_t i) {
  if (s.add0.empty()) return {};
  const std::size_t at = s.add0.size() == 1 ? 0 : i;
  return {s.add0[at], s.add1.empty() ? ConstPolyRef{} : s.add1[at], s.scale};
}

// Two streams when the plan asks for them and no caller's fork is open (forks do not nest; e.g.
// the bootstrapper's two EvalMod lanes already overlap).
bool two_streams(const Stages& st, const KeySwitchPlan& plan) {
  return plan.streams > 1 && !st.context().backend().forked();
}

// Every digit of every ModUp result, as read-only references.
std::vector<std::vector<ConstPolyRef>> digit_refs(std::span<const ModUpDigits> up) {
  std::vector<std::vector<ConstPolyRef>> refs(up.size());
  for (std::size_t i = 0; i < up.size(); ++i)
    for (const RnsPoly& p : up[i].digits)
      refs[i].push_back(p.cref());
  return refs;
}

// ModDown of a batch: every poly in one pass (plan.mod_down_together), else one after another.
void mod_down(const Stages& st, const KeySwitchPlan& plan, std::span<const PolyRef> in,
              std::span<const PolyRef> out, u32 level) {
  if (plan.mod_down_together || in.size() <= 1) {
    st.mod_down(in, out, level);
    return;
  }
  if (in.size() != out.size()) {
    throw ParameterError("KeySwitcher: one ModDown output per input is needed");
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    st.mod_down(in.subspan(i, 1), out.subspan(i, 1), level);
}

// The outputs in (c0, c1) order per switch, as the extended pairs are laid out.
std::vector<PolyRef> interleaved(std::span<const PolyRef> out0, std::span<const PolyRef> out1) {
  std::vector<PolyRef> out;
  for (std::size_t i = 0; i < out0.size(); ++i) {
    out.push_back(out0[i]);
    out.push_back(out1[i]);
  }
  return out;
}

// Stages 2 and 3 of a digit-parallel batch with a ModDown finish: digits[i] (the ModUp digits of
// switch i) times its key, + its terms, -> (out0[i], out1[i]) over Q_l. One stream: every KeyMult
// (one pass under a shared key, the terms added after it), then ModDown. Two streams: every
// switch's KeyMult P part, fork(), the ModDown lift of those P parts on the branch, end_fork(),
// every Q part of KeyMult (with the terms) on the main stream, join(), then the ModDown tails.
void key_mult_mod_down(const Stages& st, const KeySwitchPlan& plan, const Switches& s,
                       std::span<const std::vector<ConstPolyRef>> digits,
                       std::span<const PolyRef> ext) {
  const std::size_t n = count(s);
  Backend& be = st.context().backend();
  const std::vector<PolyRef> out = interleaved(s.out0, s.out1);
  const auto key_mult = [&](std::size_t i, KeyMultPart part) {
    st.key_mult(digits[i], s.level, *s.keys[i], ext[2 * i], ext[2 * i + 1], part, galois_of(s, i),
                terms(s, i));
  };
  if (!two_streams(st, plan)) {
    for (std::size_t i = 0; i < n; ++i)
      key_mult(i, KeyMultPart::kAll);       // KeyMult
    mod_down(st, plan, ext, out, s.level);  // ModDown
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    key_mult(i, KeyMultPart::kP);  // KeyMult, P part
  {
    ForkScope fork(be);
    st.mod_down_lift(ext, out, s.level);  // ModDown's lift (second stream)
    be.end_fork();
    for (std::size_t i = 0; i < n; ++i)
      key_mult(i, KeyMultPart::kQ);  // KeyMult, Q part (first stream)
    fork.join();
  }
  st.mod_down_finish(ext, out, s.level);  // ModDown's tail
}

// Digit-parallel, output-bulk: one ModUp of every input (in the plan's ModUp digit groups; one of
// a shared input), then KeyMult and the finish over the batch.
void run_digit_parallel(const Stages& st, const KeySwitchPlan& plan, const Switches& s) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(s.level);
  Backend& be = ctx.backend();
  const std::size_t n = count(s);
  const std::vector<ModUpDigits> up = st.mod_up(s.inputs, s.level, plan.mod_up);  // ModUp
  const std::vector<std::vector<ConstPolyRef>> refs = digit_refs(up);
  std::vector<std::vector<ConstPolyRef>> digits;
  for (std::size_t i = 0; i < n; ++i)
    digits.push_back(refs[shared_input(s) ? 0 : i]);
  if (s.finish == KeySwitchFinish::kExtended) {
    // Hoisted rotations under one term: one KeyMult pass over all of them.
    if (shared_input(s) && !s.galois.empty() && s.add0.size() <= 1) {
      st.key_mult_rotations(digits[0], s.level, s.keys, s.galois, s.out0, s.out1, terms(s, 0).add0);
      return;
    }
    for (std::size_t i = 0; i < n; ++i)
      st.key_mult(digits[i], s.level, *s.keys[i], s.out0[i], s.out1[i], KeyMultPart::kAll,
                  galois_of(s, i), terms(s, i));
    return;
  }
  // The extended pairs in (c0, c1) order per switch, made before any fork, outliving the join.
  std::vector<RnsPoly> ext;
  std::vector<PolyRef> ext_refs;
  for (std::size_t i = 0; i < 2 * n; ++i) {
    ext.push_back(be.make_poly(lv.pq_basis));
    ext_refs.push_back(ext.back().ref());
  }
  if (plan.shared_key_pass) {
    // Every KeyMult in one pass that reads the key once, then the terms on the Q_l limbs.
    std::vector<PolyRef> e0, e1;
    for (std::size_t i = 0; i < n; ++i) {
      e0.push_back(ext_refs[2 * i]);
      e1.push_back(ext_refs[2 * i + 1]);
    }
    st.key_mult_shared_key(digits, s.level, *s.keys[0], e0, e1);
    for (std::size_t i = 0; i < n && !s.add0.empty(); ++i) {
      const KeyMultTerms t = terms(s, i);
      for (int j = 0; j < 2; ++j) {
        const PolyRef q_part = ext_refs[2 * i + j].slice(0, lv.limbs);
        be.mul_scalar_add(j == 0 ? t.add0 : t.add1, t.scale, q_part, q_part);
      }
    }
    finish(st, plan, s.finish, ext_refs, s.out0, s.out1, s.level);
    return;
  }
  if (s.finish == KeySwitchFinish::kModDown) {
    key_mult_mod_down(st, plan, s, digits, ext_refs);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    st.key_mult(digits[i], s.level, *s.keys[i], ext_refs[2 * i], ext_refs[2 * i + 1],
                KeyMultPart::kAll, galois_of(s, i), terms(s, i));
  finish(st, plan, s.finish, ext_refs, s.out0, s.out1, s.level);
}

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

void check_extension(const Context& ctx, const LevelData& lv, const ModUpKeyMult& e) {
  const std::string level = std::to_string(e.level);
  if (!(e.d.basis == lv.q_basis))
    throw ParameterError("KeySwitcher: input is not over the basis of level " + level);
  if (!(e.ext0.basis == lv.pq_basis) || !(e.ext1.basis == lv.pq_basis))
    throw ParameterError("KeySwitcher: extended outputs are not over Q_l u P of level " + level);
  if (e.key == nullptr || e.key->empty() || e.key->context_id() != ctx.id() ||
      e.key->dnum() != ctx.dnum())
    throw ContextError("KeySwitcher: the switching key is empty or not of this Context");
  if (!e.terms.empty() && (!(e.terms.add0.basis == lv.q_basis) ||
                           !(e.terms.add1.basis == lv.q_basis) || e.terms.scale.size() != lv.limbs))
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
Added added(const ModUpKeyMult& e, u32 limbs, bool first_digit, const Range& r, ConstPolyRef prev0,
            ConstPolyRef prev1, std::span<const u32> ones) {
  if (!first_digit) return {prev0, prev1, ones.subspan(0, r.count)};
  if (!e.terms.empty() && r.first < limbs)
    return {e.terms.add0.slice(r.first, r.count), e.terms.add1.slice(r.first, r.count),
            e.terms.scale.subspan(r.first, r.count)};
  return {};
}

// Digit-serial, output-bulk: one digit's INTT -> conversion onto all of Q_l u P -> KeyMult after
// another. The digits' KeyMults sum in two accumulators used in turn, so that each step reads the
// previous sum and writes the other (Backend::key_mult_add_scaled with s = 1), and the last one
// writes ext. The last digit's P limbs go first: ModDown's lift may start on them.
void mod_up_key_mult_dsob(const Stages& st, const ModUpKeyMult& e,
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
void mod_up_key_mult_dsoc(const Stages& st, const KeySwitchPlan& plan, const ModUpKeyMult& e,
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
void mod_up_key_mult_dpoc(const Stages& st, const KeySwitchPlan& plan, const ModUpKeyMult& e,
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

// One switch after another under a digit-serial or output-chunked dataflow: mod_up_key_mult(), then
// the finish (with two streams, ModDown's lift of the P limbs on the second stream as soon as
// mod_up_key_mult() has written them, while the rest of the Q_l limbs are computed on the first).
void run_one_at_a_time(const Stages& st, const KeySwitchPlan& plan, const Switches& s) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(s.level);
  Backend& be = ctx.backend();
  for (std::size_t i = 0; i < count(s); ++i) {
    const ConstPolyRef d = s.inputs[shared_input(s) ? 0 : i];
    if (s.finish == KeySwitchFinish::kExtended) {
      mod_up_key_mult(st, plan, {s.level, d, s.keys[i], s.out0[i], s.out1[i], terms(s, i)}, {});
      continue;
    }
    RnsPoly ext0 = be.make_poly(lv.pq_basis), ext1 = be.make_poly(lv.pq_basis);
    const PolyRef ext_refs[] = {ext0.ref(), ext1.ref()};
    const PolyRef out_refs[] = {s.out0[i], s.out1[i]};
    const bool pipelined = s.finish == KeySwitchFinish::kModDown && two_streams(st, plan);
    std::optional<ForkScope> fork;
    const auto p_ready = [&] {
      if (!pipelined) return;
      fork.emplace(be);
      st.mod_down_lift(ext_refs, out_refs, s.level);  // branch: the P limbs of ext
      be.end_fork();
    };
    mod_up_key_mult(st, plan, {s.level, d, s.keys[i], ext0.ref(), ext1.ref(), terms(s, i)},
                    p_ready);
    if (fork) {
      fork->join();
      st.mod_down_finish(ext_refs, out_refs, s.level);
    } else {
      finish(st, plan, s.finish, ext_refs, s.out0.subspan(i, 1), s.out1.subspan(i, 1), s.level);
    }
  }
}

}  // namespace

void mod_up_key_mult(const Stages& st, const KeySwitchPlan& plan, const ModUpKeyMult& e,
                     const std::function<void()>& on_p_ready) {
  const Context& ctx = st.context();
  const LevelData& lv = ctx.level(e.level);
  check_extension(ctx, lv, e);
  switch (plan.dataflow) {
    case Dataflow::kDSOB:
      mod_up_key_mult_dsob(st, e, on_p_ready);
      return;
    case Dataflow::kDSOC:
      mod_up_key_mult_dsoc(st, plan, e, on_p_ready);
      return;
    case Dataflow::kDPOC:
      mod_up_key_mult_dpoc(st, plan, e, on_p_ready);
      return;
    case Dataflow::kDPOB:
    case Dataflow::kAuto:
      break;
  }
  throw ParameterError(
      "KeySwitcher: mod_up_key_mult() runs the digit-serial and output-chunked dataflows; " +
      std::string(dataflow_name(plan.dataflow)) + " is not one");
}

void run_batch(const Stages& st, const KeySwitchPlan& plan, const Switches& s) {
  if (count(s) == 0) return;
  switch (plan.dataflow) {
    case Dataflow::kDPOB:
      run_digit_parallel(st, plan, s);
      return;
    case Dataflow::kDSOB:
    case Dataflow::kDSOC:
    case Dataflow::kDPOC:
      run_one_at_a_time(st, plan, s);
      return;
    case Dataflow::kAuto:
      break;
  }
  throw ParameterError("KeySwitcher: a plan's dataflow is never auto (the planner resolves it)");
}

void finish(const Stages& st, const KeySwitchPlan& plan, KeySwitchFinish how,
            std::span<const PolyRef> ext, std::span<const PolyRef> out0,
            std::span<const PolyRef> out1, u32 level) {
  const std::vector<PolyRef> out = interleaved(out0, out1);
  switch (how) {
    case KeySwitchFinish::kModDown:
      mod_down(st, plan, ext, out, level);
      return;
    case KeySwitchFinish::kModDownRescale:
      st.mod_down_rescale(ext, out, level);
      return;
    case KeySwitchFinish::kExtended:
      break;
  }
  throw ParameterError("KeySwitcher: extended results have nothing left to finish");
}

}  // namespace theo::keyswitch
