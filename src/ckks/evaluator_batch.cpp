// Batched evaluator ops (theo/ckks/evaluator_batch.h): independent ops at one level share their
// key-switching launches in L2-sized batches. Each issues, per op, the backend ops of the single
// op it mirrors (named in the header), so the words are the same; only the grouping differs.

#include "theo/ckks/evaluator_batch.h"

#include <map>
#include <string>

#include "ckks/checks.h"
#include "ckks/evaluator_internal.h"
#include "ckks/rescaler.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

namespace {

void require_pairs(const char* op, std::span<const Ciphertext* const> a,
                   std::span<const Ciphertext* const> b) {
  if (a.size() != b.size()) {
    throw ParameterError(std::string(op) + ": as many second operands as first ones are needed (" +
                         std::to_string(a.size()) + " and " + std::to_string(b.size()) + ")");
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == nullptr || b[i] == nullptr) {
      throw ParameterError(std::string(op) + ": operand pair " + std::to_string(i) +
                           " has a null pointer");
    }
  }
}

// Indices of `levels` grouped by value: a batch of key switches shares one level.
std::map<u32, std::vector<std::size_t>> by_level(const std::vector<u32>& levels) {
  std::map<u32, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < levels.size(); ++i)
    groups[levels[i]].push_back(i);
  return groups;
}

// The polys of cts[j] for j in group, in order.
std::vector<ConstPolyRef> group_refs(std::span<const Ciphertext* const> cts,
                                     const std::vector<std::size_t>& group) {
  std::vector<ConstPolyRef> refs;
  for (const std::size_t j : group)
    for (const RnsPoly& p : cts[j]->polys())
      refs.push_back(p.cref());
  return refs;
}

// Hands polys (group_refs' order) back out: out[j] holds cts[j]'s share at `level`, at scale
// scale_of(*cts[j]).
template <typename ScaleOf>
void regroup(const Context& ctx, std::span<const Ciphertext* const> cts,
             const std::vector<std::size_t>& group, std::vector<RnsPoly>& polys, u32 level,
             ScaleOf scale_of, std::vector<Ciphertext>& out) {
  std::size_t next = 0;
  for (const std::size_t j : group) {
    std::vector<RnsPoly> mine;
    for (std::size_t k = 0; k < cts[j]->size(); ++k)
      mine.push_back(std::move(polys[next++]));
    out[j] = Ciphertext(ctx.id(), level, scale_of(*cts[j]), cts[j]->slots(), std::move(mine));
  }
}

std::vector<u32> levels_of(std::span<const Ciphertext* const> cts) {
  std::vector<u32> l;
  for (const Ciphertext* c : cts)
    l.push_back(c->level());
  return l;
}

std::vector<const Ciphertext*> pointers_to(const std::vector<Ciphertext>& cts) {
  std::vector<const Ciphertext*> p;
  for (const Ciphertext& c : cts)
    p.push_back(&c);
  return p;
}

}  // namespace

std::vector<Ciphertext> detail::switch_tensors(const Evaluator& ev,
                                               std::span<const Ciphertext* const> t,
                                               const RelinKey& rlk, KeySwitchFinish finish,
                                               u32 batch) {
  const Context& ctx = *ev.context();
  const bool rescale = finish == KeySwitchFinish::kModDownRescale;
  Backend& be = ctx.backend();
  std::vector<Ciphertext> out(t.size());
  for (const auto& [level, idx] : by_level(levels_of(t))) {
    const LevelData& lv = ctx.level(level);
    const LevelData& out_level = rescale ? ctx.level(level - 1) : lv;
    std::vector<ConstPolyRef> d0, d1, d2;
    std::vector<const SwitchingKey*> keys;
    std::vector<std::vector<RnsPoly>> polys(idx.size());
    std::vector<PolyRef> out0, out1;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Ciphertext& tj = *t[idx[j]];
      d0.push_back(tj.poly(0).cref());
      d1.push_back(tj.poly(1).cref());
      d2.push_back(tj.poly(2).cref());
      keys.push_back(&rlk.key());
      polys[j].push_back(be.make_poly(out_level.q_basis));
      polys[j].push_back(be.make_poly(out_level.q_basis));
      out0.push_back(polys[j][0].ref());
      out1.push_back(polys[j][1].ref());
    }
    ev.key_switcher().run({.level = level,
                           .inputs = d2,
                           .keys = keys,
                           .add0 = d0,
                           .add1 = d1,
                           .scale = lv.p_mod_q,
                           .finish = finish,
                           .out0 = out0,
                           .out1 = out1,
                           .batch = batch});
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Ciphertext& tj = *t[idx[j]];
      out[idx[j]] = Ciphertext(ctx.id(), out_level.level,
                               rescale ? tj.scale() / lv.rescale_ratio : tj.scale(), tj.slots(),
                               std::move(polys[j]));
    }
  }
  return out;
}

std::vector<Ciphertext> multiply_batch(const Evaluator& ev, std::span<const Ciphertext* const> a,
                                       std::span<const Ciphertext* const> b, const RelinKey& rlk) {
  const Context& ctx = *ev.context();
  require_pairs("multiply_batch", a, b);
  detail::require_usable(ctx, rlk, "multiply_batch: relinearization key");
  std::vector<Ciphertext> t;
  for (std::size_t i = 0; i < a.size(); ++i)
    t.push_back(ev.multiply(*a[i], *b[i]));
  return detail::switch_tensors(ev, pointers_to(t), rlk, KeySwitchFinish::kModDown, 0);
}

std::vector<Ciphertext> multiply_relin_rescale_batch(const Evaluator& ev,
                                                     std::span<const Ciphertext* const> a,
                                                     std::span<const Ciphertext* const> b,
                                                     const RelinKey& rlk, u32 batch) {
  const Context& ctx = *ev.context();
  require_pairs("multiply_relin_rescale_batch", a, b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    detail::require_usable(ctx, *a[i], "multiply_relin_rescale_batch: a");
    detail::require_usable(ctx, *b[i], "multiply_relin_rescale_batch: b");
    if (std::min(a[i]->level(), b[i]->level()) == 0) {
      throw LevelError("multiply_relin_rescale_batch: pair " + std::to_string(i) +
                       " has an operand at level 0, which cannot be rescaled");
    }
  }
  detail::require_usable(ctx, rlk, "multiply_relin_rescale_batch: relinearization key");
  std::vector<Ciphertext> t;
  for (std::size_t i = 0; i < a.size(); ++i)
    t.push_back(ev.multiply(*a[i], *b[i]));
  return detail::switch_tensors(ev, pointers_to(t), rlk, KeySwitchFinish::kModDownRescale, batch);
}

std::vector<Ciphertext> rescale_batch(const Evaluator& ev, std::span<const Ciphertext* const> cts) {
  const Context& ctx = *ev.context();
  std::vector<u32> levels;
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (cts[i] == nullptr) {
      throw ParameterError("rescale_batch: ciphertext " + std::to_string(i) + " is null");
    }
    detail::require_usable(ctx, *cts[i], "rescale_batch: ciphertext");
    if (cts[i]->level() == 0) {
      throw LevelError("rescale_batch: ciphertext " + std::to_string(i) +
                       " is at level 0; there is no level to rescale to");
    }
    levels.push_back(cts[i]->level());
  }
  std::vector<Ciphertext> out(cts.size());
  // Rescaling does not depend on the scale: one pass per level, each ciphertext keeps its own.
  for (const auto& [level, idx] : by_level(levels)) {
    std::vector<RnsPoly> polys = detail::rescale_polys(ctx, group_refs(cts, idx), level);
    const long double ratio = ctx.level(level).rescale_ratio;
    regroup(
        ctx, cts, idx, polys, level - 1, [&](const Ciphertext& c) { return c.scale() / ratio; },
        out);
  }
  return out;
}

std::vector<Ciphertext> level_down_batch(const Evaluator& ev,
                                         std::span<const Ciphertext* const> cts, u32 level) {
  const Context& ctx = *ev.context();
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (cts[i] == nullptr) {
      throw ParameterError("level_down_batch: ciphertext " + std::to_string(i) + " is null");
    }
    detail::require_usable(ctx, *cts[i], "level_down_batch: ciphertext");
    if (level > cts[i]->level()) {
      throw LevelError("level_down_batch: target level " + std::to_string(level) +
                       " is above ciphertext " + std::to_string(i) + "'s level " +
                       std::to_string(cts[i]->level()));
    }
  }
  // One group per (level, scale): level_down_polys lowers polys that share both.
  std::vector<Ciphertext> out(cts.size());
  std::vector<bool> done(cts.size(), false);
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::size_t> group;
    for (std::size_t j = i; j < cts.size(); ++j) {
      if (!done[j] && cts[j]->level() == cts[i]->level() && cts[j]->scale() == cts[i]->scale()) {
        group.push_back(j);
        done[j] = true;
      }
    }
    if (cts[i]->level() == level) {
      for (const std::size_t j : group)
        out[j] = ev.clone(*cts[j]);
      continue;
    }
    detail::Lowered low = detail::level_down_polys(ctx, group_refs(cts, group), cts[i]->level(),
                                                   cts[i]->scale(), level, std::nullopt);
    regroup(
        ctx, cts, group, low.polys, level, [&](const Ciphertext&) { return low.scale; }, out);
  }
  return out;
}

std::vector<Ciphertext> rotate_batch(const Evaluator& ev, std::span<const Ciphertext* const> cts,
                                     std::span<const int> rotations, const GaloisKeys& keys) {
  const Context& ctx = *ev.context();
  if (cts.size() != rotations.size()) {
    throw ParameterError("rotate_batch: one rotation per ciphertext is needed (" +
                         std::to_string(cts.size()) + " ciphertexts, " +
                         std::to_string(rotations.size()) + " rotations)");
  }
  detail::require_usable(ctx, keys, "rotate_batch: galois keys");
  std::vector<u32> elements;
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (cts[i] == nullptr) throw ParameterError("rotate_batch: a ciphertext is null");
    detail::require_usable(ctx, *cts[i], "rotate_batch: ciphertext");
    if (cts[i]->size() != 2) {
      throw ParameterError("rotate_batch: a ciphertext has 3 polynomials; relinearize it first");
    }
    const u32 g = galois_element_for_rotation(rotations[i], ctx.log_n());
    if (g != 1) detail::find_galois_key(ctx, keys, g, rotations[i]);
    elements.push_back(g);
  }
  Backend& be = ctx.backend();
  std::vector<Ciphertext> out(cts.size());
  std::vector<u32> levels;
  for (const Ciphertext* c : cts)
    levels.push_back(c->level());
  for (const auto& [level, all] : by_level(levels)) {
    const LevelData& lv = ctx.level(level);
    std::vector<std::size_t> idx;
    for (const std::size_t i : all) {
      if (elements[i] == 1) {
        out[i] = ev.clone(*cts[i]);
      } else {
        idx.push_back(i);
      }
    }
    if (idx.empty()) continue;
    // As apply_galois: phi_g(c1) is key-switched, phi_g(c0) added to the first output.
    std::vector<RnsPoly> c1(idx.size());
    std::vector<std::vector<RnsPoly>> polys(idx.size());
    std::vector<ConstPolyRef> d;
    std::vector<const SwitchingKey*> ks;
    std::vector<PolyRef> out0, out1;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Ciphertext& a = *cts[idx[j]];
      c1[j] = be.make_poly(lv.q_basis);
      be.automorphism(a.poly(1).cref(), elements[idx[j]], c1[j].ref());
      polys[j].push_back(be.make_poly(lv.q_basis));
      polys[j].push_back(be.make_poly(lv.q_basis));
      d.push_back(c1[j].cref());
      ks.push_back(keys.find(elements[idx[j]]));
      out0.push_back(polys[j][0].ref());
      out1.push_back(polys[j][1].ref());
    }
    ev.key_switcher().run({.level = level, .inputs = d, .keys = ks, .out0 = out0, .out1 = out1});
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Ciphertext& a = *cts[idx[j]];
      const ConstPolyRef c0_in[] = {a.poly(0).cref()};
      const u32 g[] = {elements[idx[j]]};
      be.automorphism_sum(c0_in, g, polys[j][0].ref(), /*accumulate=*/true);
      out[idx[j]] = Ciphertext(ctx.id(), level, a.scale(), a.slots(), std::move(polys[j]));
    }
  }
  return out;
}

std::vector<ExtendedCiphertext> mod_down_rotate_extended_batch(const Evaluator& ev,
                                                               std::span<ExtendedCiphertext> in,
                                                               std::span<const int> shifts,
                                                               const GaloisKeys& keys) {
  const Context& ctx = *ev.context();
  if (in.size() != shifts.size()) {
    throw ParameterError("mod_down_rotate_extended_batch: one shift per input is needed");
  }
  std::vector<ExtendedCiphertext> out;
  if (in.empty()) return out;
  detail::require_usable(ctx, keys, "mod_down_rotate_extended_batch: galois keys");
  const u32 level = in.front().level;
  std::vector<u32> elements;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].empty() || in[i].context_id != ctx.id()) {
      throw ContextError(
          "mod_down_rotate_extended_batch: an input is empty or belongs to another Context");
    }
    if (in[i].level != level) {
      throw LevelError("mod_down_rotate_extended_batch: inputs at levels " + std::to_string(level) +
                       " and " + std::to_string(in[i].level) + "; batch one level at a time");
    }
    const u32 g = galois_element_for_rotation(shifts[i], ctx.log_n());
    if (g != 1) detail::find_galois_key(ctx, keys, g, shifts[i]);
    elements.push_back(g);
  }
  const LevelData& lv = ctx.level(level);
  const KeySwitcher& ks = ev.key_switcher();
  Backend& be = ctx.backend();
  std::vector<PolyRef> all_ext;
  std::vector<RnsPoly> all_down;
  std::vector<PolyRef> down0, down1;
  for (ExtendedCiphertext& e : in) {
    all_ext.push_back(e.c0.ref());
    all_ext.push_back(e.c1.ref());
    all_down.push_back(be.make_poly(lv.q_basis));
    down0.push_back(all_down.back().ref());
    all_down.push_back(be.make_poly(lv.q_basis));
    down1.push_back(all_down.back().ref());
  }
  // The batches the planner gives the ModDowns; each batch's rotations follow its ModDown, so
  // that they read its results while they are still in the cache.
  const KeySwitchRequest finish_all{
      .level = level, .extended = all_ext, .out0 = down0, .out1 = down1};
  for (const ScheduledBatch& b : ks.plan(finish_all).batches) {
    const std::size_t start = b.first, count = b.count;
    // Evaluator::mod_down of every input of the batch in one stage-3 pass.
    ks.run({.level = level,
            .extended = std::span<const PolyRef>(all_ext).subspan(2 * start, 2 * count),
            .out0 = std::span<const PolyRef>(down0).subspan(start, count),
            .out1 = std::span<const PolyRef>(down1).subspan(start, count)});
    // Evaluator::rotate_hoisted_extended of each result by its one shift; their ModUps together.
    std::vector<RnsPoly> c0p;
    std::vector<ConstPolyRef> to_raise, terms;
    std::vector<const SwitchingKey*> keys_of;
    std::vector<u32> gs;
    std::vector<PolyRef> o0, o1;
    for (std::size_t j = 0; j < count; ++j) {
      c0p.push_back(be.make_poly(lv.q_basis));
      be.mul_scalar(all_down[2 * (start + j)].cref(), lv.p_mod_q, c0p.back().ref());
    }
    for (std::size_t j = 0; j < count; ++j) {
      const u32 g = elements[start + j];
      ExtendedCiphertext e =
          detail::new_extended(ctx, level, in[start + j].scale, in[start + j].slots);
      if (g == 1) {
        detail::extend_unrotated(ctx, c0p[j].cref(), all_down[2 * (start + j) + 1].cref(), e);
      } else {
        to_raise.push_back(all_down[2 * (start + j) + 1].cref());
        terms.push_back(c0p[j].cref());
        keys_of.push_back(keys.find(g));
        gs.push_back(g);
        o0.push_back(e.c0.ref());
        o1.push_back(e.c1.ref());
      }
      out.push_back(std::move(e));
    }
    detail::rotate_extended(ks, level, to_raise, keys_of, gs, terms, o0, o1,
                            static_cast<u32>(std::max<std::size_t>(to_raise.size(), 1)));
    for (std::size_t j = 0; j < count; ++j)
      in[start + j] = ExtendedCiphertext{};
  }
  return out;
}

}  // namespace theo
