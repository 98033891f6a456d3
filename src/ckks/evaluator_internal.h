#pragma once
// Helpers shared by the Evaluator's source files.

#include <optional>
#include <span>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/extended.h"
#include "theo/ckks/keys.h"

namespace theo {
class Evaluator;
class KeySwitcher;
}  // namespace theo

namespace theo::detail {

// The tensors t (three polys each) relinearized by one KeySwitcher::run per level: d_2 switched
// with the relinearization key, d_0 and d_1 added as P * d_j before the finish, which divides
// them by P exactly (ModDown(u + P d) = ModDown(u) + d); with ModDown + rescale the one rounding
// covers the whole result (Cheddar §5). `batch`: switches per batch (0: the planner's).
std::vector<Ciphertext> switch_tensors(const Evaluator& ev, std::span<const Ciphertext* const> t,
                                       const RelinKey& rlk, KeySwitchFinish finish, u32 batch);

// Hoisted rotations left extended: switch i reads inputs[i] (or the one shared input) through
// phi_galois[i] with *keys[i], adds phi_galois[i](P c0) (terms: one per switch or shared) and
// stays over Q_l u P in (out0[i], out1[i]); `batch` switches per batch (0: the planner's).
void rotate_extended(const KeySwitcher& switcher, u32 level, std::span<const ConstPolyRef> inputs,
                     std::span<const SwitchingKey* const> keys, std::span<const u32> galois,
                     std::span<const ConstPolyRef> terms, std::span<const PolyRef> out0,
                     std::span<const PolyRef> out1, u32 batch);

// A new extended ciphertext at `level` (its polys over Q_l u P, not initialized).
ExtendedCiphertext new_extended(const Context& ctx, u32 level, long double scale, u32 slots);
// P * (c0, c1) over Q_l u P, the rotation by 0 of hoisted rotations: e's Q_l limbs get c0p
// (= P * c0, given) and P * c1, its P limbs zero.
void extend_unrotated(const Context& ctx, ConstPolyRef c0p, ConstPolyRef c1, ExtendedCiphertext& e);

std::vector<ConstPolyRef> refs_of(const Ciphertext& ct);

// ct moved to `level` (value kept; scale -> target_scale or Delta_level).
Ciphertext lower_ciphertext(const Context& ctx, const Ciphertext& ct, u32 level,
                            std::optional<long double> target_scale);
Plaintext lower_plaintext(const Context& ctx, const Plaintext& pt, u32 level,
                          std::optional<long double> target_scale);

// The key for Galois element g, or MissingKeyError saying how to generate it (naming the
// rotation when given).
const SwitchingKey& find_galois_key(const Context& ctx, const GaloisKeys& keys, u32 g,
                                    std::optional<int> rotation);

}  // namespace theo::detail
