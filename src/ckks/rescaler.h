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

// ModDown merged with the rescale (LevelData::mod_down_rescale): each x over Q_l u P of level l
// becomes round(x * Pi_E / (P * Pi_L)) over S_{l-1}, one rounding instead of ModDown's and the
// rescale's. The inputs are scratch: their leaving and P limbs are overwritten.
std::vector<RnsPoly> mod_down_rescale_polys(const Context& ctx, std::span<const PolyRef> ext,
                                            u32 level);

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
