#pragma once
// Host-side helpers shared by the scheme code: residues of signed and huge integers, products of
// primes modulo a prime, and uploads of small-integer polynomials to every limb.

#include <span>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/math/prng.h"

namespace theo::detail {

inline u32 reduce_i64(i64 v, u32 q) {
  const i64 r = v % static_cast<i64>(q);
  return static_cast<u32>(r < 0 ? r + static_cast<i64>(q) : r);
}

// v must be an integer value (already rounded); any magnitude a long double can hold is handled
// exactly by splitting v = mantissa * 2^exponent.
u32 reduce_long_double(long double v, u32 q);

// The integer round(v) modulo every prime of `basis` (v up to ~2^16000).
std::vector<u32> residues_of(long double v, const Context& ctx, const Basis& basis);

// prod of the primes `ids` modulo q.
u32 product_mod(const Context& ctx, std::span<const PrimeId> ids, u32 q);

// Uploads small signed coefficients (coefficient domain) onto every limb of dst.
void upload_signed(const Context& ctx, std::span<const i32> coeffs, PolyRef dst);
void upload_signed(const Context& ctx, std::span<const i64> coeffs, PolyRef dst);

// Uniform words in [0, q) for every limb of `basis`, limb by limb (sampled directly in the NTT
// domain: the NTT is a bijection, so the distribution is the same).
RnsPoly sample_uniform(const Context& ctx, Prng& prng, const Basis& basis);

// Small signed polynomial (coefficients) -> NTT domain over `basis`.
RnsPoly small_poly_ntt(const Context& ctx, std::span<const i32> coeffs, const Basis& basis);

// log2 of a positive scale with 6 decimals, e.g. "2^40.000000".
std::string scale_string(long double scale);

}  // namespace theo::detail
