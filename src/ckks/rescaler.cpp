#include "ckks/rescaler.h"

#include <cmath>
#include <string>

#include "ckks/batched_ops.h"
#include "ckks/checks.h"
#include "theo/errors.h"

namespace theo::detail {

namespace {

// Nearest integer K >= 1 to `exact` whose residue is nonzero modulo every prime of `basis`.
u64 choose_multiplier(const Context& ctx, long double exact, const Basis& basis) {
  const long double cap = 0x1p62L;
  u64 k =
      exact < 1 ? 1 : (exact > cap ? static_cast<u64>(cap) : static_cast<u64>(std::llround(exact)));
  for (;;) {
    bool ok = true;
    for (u32 i = 0; i < basis.size && ok; ++i)
      ok = (k % ctx.prime(basis[i])) != 0;
    if (ok) return k;
    ++k;
  }
}

// The leaving limbs of each poly as pieces of x -> slices of its gathered poly, with the INTT
// constants of every piece: one out-of-place INTT call gathers and transforms them.
struct LeavingPieces {
  std::vector<PolyRef> dst;
  std::vector<ConstPolyRef> src;
  std::vector<u32> consts;  // one per limb of every piece in turn
};

LeavingPieces leaving_pieces(const RescalePlan& rs, std::span<const ConstPolyRef> xs,
                             std::vector<RnsPoly>& gathered, std::span<const u32> consts) {
  LeavingPieces p;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    u32 pos = 0;
    for (const auto& [offset, count] : rs.leaving) {
      p.dst.push_back(gathered[i].slice(pos, count));
      p.src.push_back(xs[i].slice(offset, count));
      p.consts.insert(p.consts.end(), consts.begin() + pos, consts.begin() + pos + count);
      pos += count;
    }
  }
  return p;
}

}  // namespace

void gather_leaving_intt(Backend& be, bool fusion, const RescalePlan& rs,
                         std::span<const ConstPolyRef> xs, std::vector<RnsPoly>& gathered,
                         std::span<const u32> intt_consts) {
  for (std::size_t i = 0; i < xs.size(); ++i)
    gathered.push_back(be.make_poly(rs.leaving_basis));
  if (fusion) {
    // The INTT gathers the leaving limbs itself (out of place from their pieces of x).
    const LeavingPieces pieces = leaving_pieces(rs, xs, gathered, intt_consts);
    be.intt(pieces.dst, pieces.consts, pieces.src);
    return;
  }
  std::vector<PolyRef> gathered_refs;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    u32 pos = 0;
    for (const auto& [offset, count] : rs.leaving) {
      be.copy(xs[i].slice(offset, count), gathered[i].slice(pos, count));
      pos += count;
    }
    gathered_refs.push_back(gathered[i].ref());
  }
  be.intt(gathered_refs, intt_consts);
}

void convert_and_finish(Backend& be, const RescaleIssue& issue, const RescalePlan& rs,
                        std::span<const ConstPolyRef> leaving, std::span<const u32> ntt_consts,
                        std::span<const ConstPolyRef> stay_src, std::span<const u32> stay_consts,
                        std::span<const PolyRef> out) {
  std::vector<BConvJob> jobs;
  for (std::size_t i = 0; i < leaving.size(); ++i)
    jobs.push_back({rs.bconv.get(), leaving[i], out[i]});
  bconv_matmul_jobs(be, jobs, issue.batched_launches);
  if (rs.stay_count > 0 && issue.fusion) {
    be.ntt_sub_mul_scalar(out, ntt_consts, stay_src, rs.stay_dst, stay_consts);
    return;
  }
  be.ntt(out, ntt_consts);
  if (rs.stay_count > 0) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const PolyRef y = out[i].slice(rs.stay_dst, rs.stay_count);
      be.sub_mul_scalar(stay_src[i], y, stay_consts, y);
    }
  }
}

std::vector<RnsPoly> rescale_polys(const Context& ctx, std::span<const ConstPolyRef> polys,
                                   u32 level, u64 k) {
  if (level == 0) throw LevelError("cannot rescale at level 0: no level below it");
  const LevelData& lv = ctx.level(level);
  const LevelData& prev = ctx.level(level - 1);
  const RescalePlan& rs = lv.rescale;

  std::vector<u32> intt_consts = rs.intt_post_consts;
  std::vector<u32> ntt_consts = rs.ntt_pre_consts;
  std::vector<u32> stay_consts = rs.stay_consts;
  if (k != 1) {
    // K folds into the constants: K on the leaving limbs (so r carries it), K^-1 into r' on the
    // staying limbs and K into their final factor.
    for (u32 j = 0; j < rs.leaving_basis.size; ++j) {
      const u32 q = ctx.prime(rs.leaving_basis[j]);
      intt_consts[j] = mul_mod_ref(intt_consts[j], static_cast<u32>(k % q), q);
    }
    for (u32 i = 0; i < rs.stay_count; ++i) {
      const u32 q = ctx.prime(prev.q_basis[rs.stay_dst + i]);
      const u32 kq = static_cast<u32>(k % q);
      ntt_consts[rs.stay_dst + i] = mul_mod_ref(ntt_consts[rs.stay_dst + i], inv_mod(kq, q), q);
      stay_consts[i] = mul_mod_ref(stay_consts[i], kq, q);
    }
  }

  for (const ConstPolyRef& x : polys) {
    if (!(x.basis == lv.q_basis)) {
      throw ParameterError("rescale: polynomial is not over the basis of level " +
                           std::to_string(level));
    }
  }
  const RescaleIssue issue{ctx.policy().fusion(), ctx.policy().multi_poly_caching()};
  Backend& be = ctx.backend();
  std::vector<RnsPoly> leaving;
  gather_leaving_intt(be, issue.fusion, rs, polys, leaving, intt_consts);
  std::vector<ConstPolyRef> leaving_refs, stay_src;
  for (const RnsPoly& l : leaving)
    leaving_refs.push_back(l.cref());
  if (rs.stay_count > 0)
    for (const ConstPolyRef& x : polys)
      stay_src.push_back(x.slice(rs.stay_src, rs.stay_count));
  std::vector<RnsPoly> out;
  std::vector<PolyRef> out_refs;
  for (std::size_t i = 0; i < polys.size(); ++i) {
    out.push_back(be.make_poly(prev.q_basis));
    out_refs.push_back(out.back().ref());
  }
  convert_and_finish(be, issue, rs, leaving_refs, ntt_consts, stay_src, stay_consts, out_refs);
  return out;
}

Lowered level_down_polys(const Context& ctx, std::span<const ConstPolyRef> polys, u32 from,
                         long double scale, u32 to, std::optional<long double> target_scale) {
  if (to > from) {
    throw LevelError("level_down: cannot go up from level " + std::to_string(from) + " to level " +
                     std::to_string(to));
  }
  Backend& be = ctx.backend();
  const LevelData& src = ctx.level(from);
  const LevelData& dst = ctx.level(to);
  Lowered result;
  const long double goal = target_scale.value_or(dst.scale);
  const bool subset =
      dst.first_id >= src.first_id && dst.first_id + dst.limbs <= src.first_id + src.limbs;
  if (to == from || (subset && scales_match(scale, goal, ctx.scale_tolerance()))) {
    // Q_to divides Q_from: dropping limbs keeps value and scale.
    const u32 offset = dst.first_id - src.first_id;
    for (const ConstPolyRef& x : polys) {
      result.polys.push_back(be.make_poly(dst.q_basis));
      be.copy(x.slice(offset, dst.limbs), result.polys.back().ref());
    }
    result.scale = scale;
    return result;
  }
  std::vector<RnsPoly> current;
  long double s = scale;
  // When S_(to+1) is a window of S_from, drop straight to level to + 1 (value and scale kept, the
  // limbs read in place) and rescale once: one INTT -> BConv -> NTT pass instead of one per level.
  // Only when that one step's multiplier is large enough to land on the goal precisely.
  u32 start = from;
  std::vector<ConstPolyRef> dropped;
  if (from > to + 1) {
    const LevelData& mid = ctx.level(to + 1);
    const long double k_exact = goal * mid.rescale_ratio / s;
    if (mid.first_id >= src.first_id && mid.first_id + mid.limbs <= src.first_id + src.limbs &&
        k_exact >= 0x1p20L && k_exact <= 0x1p62L) {
      for (const ConstPolyRef& x : polys)
        dropped.push_back(x.slice(mid.first_id - src.first_id, mid.limbs));
      start = to + 1;
    }
  }
  for (u32 j = start; j > to; --j) {
    const LevelData& lv = ctx.level(j);
    const long double want = (j - 1 == to) ? goal : ctx.level(j - 1).scale;
    const u64 k = choose_multiplier(ctx, want * lv.rescale_ratio / s, ctx.level(j - 1).q_basis);
    std::vector<ConstPolyRef> in;
    if (!dropped.empty()) {
      in = std::move(dropped);
      dropped.clear();
    } else if (current.empty()) {
      in.assign(polys.begin(), polys.end());
    } else {
      for (const RnsPoly& p : current)
        in.push_back(p.cref());
    }
    current = rescale_polys(ctx, in, j, k);
    s = s * static_cast<long double>(k) / lv.rescale_ratio;
  }
  result.polys = std::move(current);
  result.scale = s;
  return result;
}

}  // namespace theo::detail
