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

std::vector<u32> levels_of(const std::vector<Ciphertext>& cts) {
  std::vector<u32> l;
  for (const Ciphertext& c : cts)
    l.push_back(c.level());
  return l;
}

}  // namespace

std::vector<Ciphertext> multiply_batch(const Evaluator& ev, std::span<const Ciphertext* const> a,
                                       std::span<const Ciphertext* const> b, const RelinKey& rlk) {
  const Context& ctx = *ev.context();
  require_pairs("multiply_batch", a, b);
  detail::require_usable(ctx, rlk, "multiply_batch: relinearization key");
  std::vector<Ciphertext> t;
  for (std::size_t i = 0; i < a.size(); ++i)
    t.push_back(ev.multiply(*a[i], *b[i]));
  Backend& be = ctx.backend();
  std::vector<Ciphertext> out(t.size());
  for (const auto& [level, idx] : by_level(levels_of(t))) {
    const LevelData& lv = ctx.level(level);
    std::vector<ConstPolyRef> d2;
    std::vector<const SwitchingKey*> keys;
    std::vector<std::vector<RnsPoly>> polys(idx.size());
    std::vector<PolyRef> out0, out1;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      d2.push_back(t[idx[j]].poly(2).cref());
      keys.push_back(&rlk.key());
      polys[j].push_back(be.make_poly(lv.q_basis));
      polys[j].push_back(be.make_poly(lv.q_basis));
      out0.push_back(polys[j][0].ref());
      out1.push_back(polys[j][1].ref());
    }
    ev.key_switcher().switch_keys(d2, keys, level, out0, out1);
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const Ciphertext& tj = t[idx[j]];
      be.add(polys[j][0].cref(), tj.poly(0).cref(), polys[j][0].ref());
      be.add(polys[j][1].cref(), tj.poly(1).cref(), polys[j][1].ref());
      out[idx[j]] = Ciphertext(ctx.id(), level, tj.scale(), tj.slots(), std::move(polys[j]));
    }
  }
  return out;
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
  const KeySwitcher& ks = ev.key_switcher();
  Backend& be = ctx.backend();
  std::vector<Ciphertext> out(t.size());
  for (const auto& [level, idx] : by_level(levels_of(t))) {
    const LevelData& lv = ctx.level(level);
    const std::size_t b_size = ks.planner().plan(level, idx.size(), batch).batch;
    for (std::size_t start = 0; start < idx.size(); start += b_size) {
      const std::size_t count = std::min(b_size, idx.size() - start);
      std::vector<ConstPolyRef> d2;
      for (std::size_t j = 0; j < count; ++j)
        d2.push_back(t[idx[start + j]].poly(2).cref());
      const std::vector<ModUpDigits> ups = ks.mod_up(d2, level);
      // As multiply_relin_rescale: KeyMult, then d0 / d1 join the extended pair as P * d_i, then
      // one ModDown merged with the rescale over all polys of the batch.
      std::vector<RnsPoly> ext;
      std::vector<PolyRef> parts, out0, out1;
      std::vector<std::vector<ConstPolyRef>> digits(count);
      for (std::size_t j = 0; j < count; ++j) {
        ext.push_back(be.make_poly(lv.pq_basis));
        ext.push_back(be.make_poly(lv.pq_basis));
        out0.push_back(ext[2 * j].ref());
        out1.push_back(ext[2 * j + 1].ref());
        for (const RnsPoly& p : ups[j].digits)
          digits[j].push_back(p.cref());
      }
      ks.stages().key_mult_shared_key(digits, level, rlk.key(), out0, out1);
      for (std::size_t j = 0; j < count; ++j) {
        const Ciphertext& tj = t[idx[start + j]];
        for (int i = 0; i < 2; ++i) {
          const PolyRef q_part = ext[2 * j + i].slice(0, lv.limbs);
          be.mul_scalar_add(tj.poly(i).cref(), lv.p_mod_q, q_part, q_part);
        }
      }
      for (RnsPoly& e : ext)
        parts.push_back(e.ref());
      std::vector<RnsPoly> polys = detail::mod_down_rescale_polys(ctx, parts, level);
      for (std::size_t j = 0; j < count; ++j) {
        const Ciphertext& tj = t[idx[start + j]];
        std::vector<RnsPoly> pair;
        pair.push_back(std::move(polys[2 * j]));
        pair.push_back(std::move(polys[2 * j + 1]));
        out[idx[start + j]] = Ciphertext(ctx.id(), level - 1, tj.scale() / lv.rescale_ratio,
                                         tj.slots(), std::move(pair));
      }
    }
  }
  return out;
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
    ev.key_switcher().switch_keys(d, ks, level, out0, out1);
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
  const u32 limbs = lv.limbs;
  const KeySwitcher& ks = ev.key_switcher();
  Backend& be = ctx.backend();
  const std::size_t b = ks.planner().plan(level, in.size()).batch;
  for (std::size_t start = 0; start < in.size(); start += b) {
    const std::size_t count = std::min(b, in.size() - start);
    // Evaluator::mod_down of every input of the batch in one stage-3 pass.
    std::vector<RnsPoly> down;
    std::vector<PolyRef> ext_refs, down_refs;
    for (std::size_t j = 0; j < count; ++j) {
      ExtendedCiphertext& e = in[start + j];
      for (RnsPoly* p : {&e.c0, &e.c1}) {
        ext_refs.push_back(p->ref());
        down.push_back(be.make_poly(lv.q_basis));
        down_refs.push_back(down.back().ref());
      }
    }
    ks.mod_down(ext_refs, down_refs, level);
    // Evaluator::rotate_hoisted_extended of each result by its one shift; their ModUps together.
    std::vector<RnsPoly> c0p;
    std::vector<ConstPolyRef> to_raise;
    for (std::size_t j = 0; j < count; ++j) {
      c0p.push_back(be.make_poly(lv.q_basis));
      be.mul_scalar(down[2 * j].cref(), lv.p_mod_q, c0p.back().ref());
      if (elements[start + j] != 1) to_raise.push_back(down[2 * j + 1].cref());
    }
    const std::vector<ModUpDigits> ups = ks.mod_up(to_raise, level);
    std::size_t raised = 0;
    for (std::size_t j = 0; j < count; ++j) {
      const ExtendedCiphertext& src = in[start + j];
      const u32 g = elements[start + j];
      ExtendedCiphertext e{ctx.id(),
                           level,
                           src.scale,
                           src.slots,
                           be.make_poly(lv.pq_basis),
                           be.make_poly(lv.pq_basis)};
      if (g == 1) {
        be.copy(c0p[j].cref(), e.c0.slice(0, limbs));
        be.mul_scalar(down[2 * j + 1].cref(), lv.p_mod_q, e.c1.slice(0, limbs));
        be.fill_zero(e.c0.slice(limbs, ctx.alpha()));
        be.fill_zero(e.c1.slice(limbs, ctx.alpha()));
      } else {
        const ModUpDigits& up = ups[raised++];
        std::vector<ConstPolyRef> digits;
        for (const RnsPoly& d : up.digits)
          digits.push_back(d.cref());
        ks.stages().key_mult(digits, level, *keys.find(g), e.c0.ref(), e.c1.ref(),
                             KeyMultPart::kAll, g, c0p[j].cref());
      }
      out.push_back(std::move(e));
    }
    for (std::size_t j = 0; j < count; ++j)
      in[start + j] = ExtendedCiphertext{};
  }
  return out;
}

}  // namespace theo
