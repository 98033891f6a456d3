#pragma once
// Shared helpers of the circuits tests: the small insecure bootstrapping preset and precision
// reporting (bits = -log2 max abs error, printed so that they show in the test log).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "theo/circuits/circuits.h"

namespace theo::test {

// presets/test_boot_n12.json: N = 2^12, Delta = 2^40, 3 user levels above a 2-prime level 0 (like
// bootparam_40) and 13 bootstrapping levels; made by generate_prime_system (log_n 12, log_scale
// 40, levels 3, boot_levels 13, cts 2, stc 2). Insecure (CI only).
inline ParameterSet boot_test_params() {
  return load_preset("test_boot_n12");
}

inline double bits(const std::vector<Cplx>& got, const std::vector<Cplx>& want) {
  const double e = max_abs_error(got, want);
  return e > 0 ? -std::log2(e) : 1000.0;
}

inline void print_bits(const char* what, double b) {
  std::printf("[precision] %-40s %.2f bits\n", what, b);
  std::fflush(stdout);
}

}  // namespace theo::test
