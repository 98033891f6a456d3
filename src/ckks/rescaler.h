#pragma once
// Rational rescaling and generic level lowering on bare polynomial lists (ciphertext or plaintext
// parts, NTT domain), used by the Evaluator.

#include <optional>
#include <span>
#include <vector>

#include "theo/ckks/context.h"

namespace theo::detail {

// (K * x) / r_l from level l to l - 1 for each poly x (see RescalePlan); K >= 1 must be coprime
// to every prime of level l - 1 that stays (choose_multiplier guarantees it).
std::vector<RnsPoly> rescale_polys(const Context& ctx, std::span<const ConstPolyRef> polys,
                                   u32 level, u64 k = 1);

// The two halves of a rational rescale, shared with ModDown merged with the rescale
// (src/ckks/keyswitch/stages.cpp), which issues them as its plan says.
struct RescaleIssue {
  bool fusion = true;            // out-of-place gathering INTT; the tail fused into the NTT
  bool batched_launches = true;  // every conversion in one backend op
};
// gathered[i] made from the leaving limbs of xs[i] (rs.leaving's pieces) and taken to the
// coefficient domain with intt_consts: one out-of-place INTT gathers and transforms them with
// fusion, else copies, then an INTT.
void gather_leaving_intt(Backend& be, bool fusion, const RescalePlan& rs,
                         std::span<const ConstPolyRef> xs, std::vector<RnsPoly>& gathered,
                         std::span<const u32> intt_consts);
// The rest once the leaving limbs are in the coefficient domain with their constants applied:
// BConv into out[i] (over S_{l-1}), the NTT, and on the staying limbs y = (x - r') * stay_consts,
// the tail fused into the NTT's last phase (Cheddar Seq.3) or, without fusion, a separate
// sub_mul_scalar.
void convert_and_finish(Backend& be, const RescaleIssue& issue, const RescalePlan& rs,
                        std::span<const ConstPolyRef> leaving, std::span<const u32> ntt_consts,
                        std::span<const ConstPolyRef> stay_src, std::span<const u32> stay_consts,
                        std::span<const PolyRef> out);

struct Lowered {
  std::vector<RnsPoly> polys;
  long double scale = 0;
};

// Moves polys at (from, scale) to level `to` keeping the encoded value: per level one
// multiply-by-K-and-rescale, landing on Delta_j (target_scale at the last step). Plain limb
// dropping when S_to is a subset of S_from and the scale already matches the goal.
Lowered level_down_polys(const Context& ctx, std::span<const ConstPolyRef> polys, u32 from,
                         long double scale, u32 to, std::optional<long double> target_scale);

}  // namespace theo::detail
