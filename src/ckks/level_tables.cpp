// Per-level tables of the Context: bases, default scales, key-switching digits with their BConv
// plans, ModDown and rational-rescale constants.

#include <algorithm>
#include <cmath>
#include <string>

#include "theo/ckks/context.h"
#include "theo/errors.h"

namespace theo {

namespace {

Basis id_range(u32 lo, u32 hi) {
  return lo < hi ? Basis::range(lo, hi - lo) : Basis{};
}

u32 product_mod(const std::vector<u32>& primes, const Basis& ids, u32 q) {
  u32 acc = 1 % q;
  for (u32 i = 0; i < ids.size; ++i)
    acc = mul_mod_ref(acc, primes[ids[i]] % q, q);
  return acc;
}

long double product(const std::vector<u32>& primes, const Basis& ids) {
  long double acc = 1;
  for (u32 i = 0; i < ids.size; ++i)
    acc *= static_cast<long double>(primes[ids[i]]);
  return acc;
}

void build_digits(Backend& be, LevelData& lv, u32 q_max, u32 alpha, const Basis& p_basis) {
  const u32 a = lv.first_id;
  const u32 b = lv.first_id + lv.limbs;
  for (u32 chunk = 0; chunk * alpha < q_max; ++chunk) {
    const u32 lo = std::max(a, chunk * alpha);
    const u32 hi = std::min(b, std::min(q_max, (chunk + 1) * alpha));
    if (lo >= hi) continue;
    DigitPlan d;
    d.chunk = chunk;
    d.start = lo - a;
    d.count = hi - lo;
    const Basis src = id_range(lo, hi);
    if (lo > a) d.to_before = be.make_bconv(src, id_range(a, lo));
    d.to_after = be.make_bconv(src, id_range(hi, b).concat(p_basis));
    d.intt_post_consts = d.to_after->table().src_hat_inv;
    lv.digits.push_back(std::move(d));
  }
}

// The tables of the output-chunked dataflows with `chunks` chunks: for every chunk and digit, the
// chunk's limbs before and after the digit's own (within the chunk) as conversions from the digit.
OutputChunkPlans build_output_chunks(Backend& be, const LevelData& lv, u32 alpha, u32 chunks) {
  OutputChunkPlans o;
  o.chunks = chunks;
  o.ranges = output_chunks(lv.limbs + alpha, chunks);
  for (const ChunkRange& r : o.ranges) {
    std::vector<std::vector<ChunkPiece>> per_digit;
    for (const DigitPlan& d : lv.digits) {
      const Basis src = lv.q_basis.slice(d.start, d.count);
      std::vector<ChunkPiece> pieces;
      const u32 lo = r.first, hi = r.first + r.count;
      const auto add = [&](u32 a, u32 b) {
        if (a < b) pieces.push_back({a, b - a, be.make_bconv(src, lv.pq_basis.slice(a, b - a))});
      };
      add(lo, std::min(hi, d.start));
      add(std::max(lo, d.start + d.count), hi);
      per_digit.push_back(std::move(pieces));
    }
    o.pieces.push_back(std::move(per_digit));
  }
  return o;
}

void build_mod_down(Backend& be, const std::vector<u32>& primes, LevelData& lv,
                    const Basis& p_basis) {
  // Exact BConv: the ModDown result is round(u / P) with no fast-BConv overflow, which would
  // otherwise be multiplied by the secret and cost ~1.5 bits of precision per key switch.
  lv.mod_down = be.make_bconv(p_basis, lv.q_basis, /*exact=*/true);
  lv.mod_down_intt_consts = lv.mod_down->table().src_hat_inv;
  for (u32 i = 0; i < lv.limbs; ++i) {
    const u32 q = primes[lv.q_basis[i]];
    lv.p_inv.push_back(inv_mod(product_mod(primes, p_basis, q), q));
  }
}

// Rescale tables from `cur` (level l) to `prev` (level l - 1). With a nonempty `extra` (P, laid
// out after S_l), the plan divides Q_l u P data by P * Pi_L in one pass: the merged ModDown.
RescalePlan build_rescale(Backend& be, const std::vector<u32>& primes, const LevelData& cur,
                          const LevelData& prev, const Basis& extra, long double* ratio) {
  const u32 a = cur.first_id, b = cur.first_id + cur.limbs;
  const u32 pa = prev.first_id, pb = prev.first_id + prev.limbs;
  RescalePlan rs;
  Basis leaving;
  if (a < pa) {
    const u32 hi = std::min(b, pa);
    rs.leaving.push_back({0, hi - a});
    leaving = leaving.concat(id_range(a, hi));
  }
  if (b > pb) {
    const u32 lo = std::max(a, pb);
    rs.leaving.push_back({lo - a, b - lo});
    leaving = leaving.concat(id_range(lo, b));
  }
  if (!extra.empty()) {
    // P follows S_l; when the leaving limbs end S_l, the two ranges form one slice.
    if (!rs.leaving.empty() && rs.leaving.back()[0] + rs.leaving.back()[1] == cur.limbs)
      rs.leaving.back()[1] += extra.size;
    else
      rs.leaving.push_back({cur.limbs, extra.size});
    leaving = leaving.concat(extra);
  }
  if (leaving.size == extra.size) {
    throw ParameterError("level_config: level " + std::to_string(cur.level) +
                         " has no prime that level " + std::to_string(prev.level) +
                         " lacks, so it cannot rescale to it");
  }
  const Basis entering = id_range(pa, std::min(pb, a)).concat(id_range(std::max(pa, b), pb));
  rs.leaving_basis = leaving;
  const u32 stay_lo = std::max(a, pa), stay_hi = std::min(b, pb);
  if (stay_lo < stay_hi) {
    rs.stay_src = stay_lo - a;
    rs.stay_dst = stay_lo - pa;
    rs.stay_count = stay_hi - stay_lo;
  }
  // Exact BConv, for the same reason as ModDown: the rescale rounds to nearest.
  rs.bconv = be.make_bconv(leaving, prev.q_basis, /*exact=*/true);
  const auto& hat_inv = rs.bconv->table().src_hat_inv;
  for (u32 j = 0; j < leaving.size; ++j) {
    const u32 q = primes[leaving[j]];
    rs.intt_post_consts.push_back(mul_mod_ref(hat_inv[j], product_mod(primes, entering, q), q));
  }
  for (u32 i = 0; i < prev.limbs; ++i) {
    const PrimeId id = prev.q_basis[i];
    const u32 q = primes[id];
    const u32 pi_l_inv = inv_mod(product_mod(primes, leaving, q), q);
    if (cur.q_basis.find(id) >= 0) {
      const u32 pi_e = product_mod(primes, entering, q);
      rs.ntt_pre_consts.push_back(inv_mod(pi_e, q));
      rs.stay_consts.push_back(mul_mod_ref(pi_e, pi_l_inv, q));
    } else {
      rs.ntt_pre_consts.push_back(neg_mod(pi_l_inv, q));
    }
  }
  if (ratio != nullptr) *ratio = product(primes, leaving) / product(primes, entering);
  return rs;
}

}  // namespace

void Context::build_levels() {
  const u32 q_max = terminal_count_ + main_count_;
  const Basis p_basis = this->p_basis();
  levels_.resize(params_.level_config.size());
  for (u32 l = 0; l < levels_.size(); ++l) {
    LevelData& lv = levels_[l];
    lv.level = l;
    lv.main_count = params_.level_config[l][0];
    lv.terminal_count = params_.level_config[l][1];
    if (lv.main_count > main_count_ || lv.terminal_count > terminal_count_ ||
        lv.main_count + lv.terminal_count == 0) {
      throw ParameterError("level_config[" + std::to_string(l) + "] does not fit the prime lists");
    }
    lv.first_id = terminal_count_ - lv.terminal_count;
    lv.limbs = lv.main_count + lv.terminal_count;
    lv.q_basis = Basis::range(lv.first_id, lv.limbs);
    lv.pq_basis = lv.q_basis.concat(p_basis);
    double log2_q = 0;
    std::vector<u32> level_primes;
    for (u32 i = 0; i < lv.limbs; ++i) {
      level_primes.push_back(ring_.primes[lv.q_basis[i]]);
      log2_q += std::log2(static_cast<double>(level_primes.back()));
    }
    lv.log2_q = log2_q;
    lv.crt = std::make_shared<const CrtReconstructor>(std::span<const u32>(level_primes));
    build_digits(*backend_, lv, q_max, alpha_, p_basis);
    build_mod_down(*backend_, ring_.primes, lv, p_basis);
    for (const DigitPlan& d : lv.digits)
      lv.mod_up_intt_consts.insert(lv.mod_up_intt_consts.end(), d.intt_post_consts.begin(),
                                   d.intt_post_consts.end());
    for (u32 i = 0; i < lv.limbs; ++i)
      lv.p_mod_q.push_back(product_mod(ring_.primes, p_basis, ring_.primes[lv.q_basis[i]]));
    if (l == 0) {
      lv.scale = std::ldexp(1.0L, static_cast<int>(params_.log_default_scale));
    } else {
      const LevelData& prev = levels_[l - 1];
      lv.rescale = build_rescale(*backend_, ring_.primes, lv, prev, {}, &lv.rescale_ratio);
      lv.mod_down_rescale = build_rescale(*backend_, ring_.primes, lv, prev, p_basis, nullptr);
      // Delta_l^2 / r_l = Delta_{l-1}: two operands at the default scale multiply and rescale
      // exactly onto the default scale of the level below.
      lv.scale = std::sqrt(levels_[l - 1].scale * lv.rescale_ratio);
    }
  }
}

const OutputChunkPlans* LevelData::chunk_plans(u32 chunks) const {
  for (const OutputChunkPlans& o : output_chunk_plans)
    if (o.chunks == chunks) return &o;
  return nullptr;
}

void Context::build_output_chunk_plans() {
  const KeySwitchOptions& ks = policy_.key_switching();
  for (u32 l = 0; l < levels_.size(); ++l) {
    LevelData& lv = levels_[l];
    std::vector<u32> counts;
    const DataflowChoice& c = planner_->dataflow(l).choice;
    if (is_chunked(c.dataflow)) counts.push_back(c.chunks);
    const bool prepared =
        ks.prepare_all &&
        (ks.prepare_levels.empty() || std::find(ks.prepare_levels.begin(), ks.prepare_levels.end(),
                                                l) != ks.prepare_levels.end());
    if (prepared)
      for (u32 k = kMinChunks; k <= kMaxChunks; ++k)
        counts.push_back(k);
    for (const u32 k : counts)
      if (lv.chunk_plans(k) == nullptr)
        lv.output_chunk_plans.push_back(build_output_chunks(*backend_, lv, alpha_, k));
  }
}

}  // namespace theo
