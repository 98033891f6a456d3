#pragma once
// The 25-30 prime system (Cheddar §3.2): main primes ~2^30, terminal primes ~2^25 and a rescaling
// cycle that keeps every level's scale within 0.1 bit of 2^log_scale; bootstrapping levels use
// double rescaling with larger scales.

#include "theo/math/params.h"

namespace theo {

struct PrimeSystemSpec {
  u32 log_n = 16;
  u32 log_scale = 40;             // 30..50
  u32 levels = 10;                // non-bootstrapping levels above level 0 (L_eff)
  u32 boot_levels = 0;            // extra levels for bootstrapping (0: none)
  u32 log_boot_scale = 0;         // scale of bootstrapping levels (0: pick ~2^55..2^60)
  u32 log_base = 0;               // bits of the level-0 modulus (0: log_scale + 10)
  u32 alpha = 0;                  // auxiliary primes (0: chosen so that dnum is about 4)
  u32 dense_hamming_weight = 0;   // 0: N/2
  u32 sparse_hamming_weight = 0;  // 0: none (32 when boot_levels > 0)
  u32 num_cts_levels = 0;  // with boot_levels > 0; 0: min(4, ...) so that cts + stc <= boot_levels
  u32 num_stc_levels = 0;  // with boot_levels > 0; 0: min(3, ...)
};

// Builds a validated ParameterSet. Throws ParameterError when the request cannot be met.
ParameterSet generate_prime_system(const PrimeSystemSpec& spec);

// log2 of the scale of every level, as the library defines it: Delta_0 = 2^log_default_scale and
// Delta_l = sqrt(Delta_{l-1} * Q_l / Q_{l-1}), the scale at which a product at level l, rescaled to
// level l-1, lands exactly on Delta_{l-1}. Meaningful for the non-bootstrapping levels
// 0..default_encryption_level (bootstrapping manages its own scales above).
std::vector<double> level_log2_scales(const ParameterSet& p);

}  // namespace theo
