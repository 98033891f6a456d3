#pragma once
// Shared helpers of the circuits tests: the small insecure bootstrapping preset and precision
// reporting (bits = -log2 max abs error, printed so that they show in the test log).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "theo/circuits/circuits.h"
#include "theo/math/prime_system.h"

namespace theo::test {

// N = 2^12, Delta = 2^40: 3 levels for the user above a 2-prime level 0 (like bootparam_40) and
// 13 bootstrapping levels (CoeffToSlot 2, EvalMod 9, SlotToCoeff 2). Insecure (CI only).
inline ParameterSet boot_test_params() {
  PrimeSystemSpec spec;
  spec.log_n = 12;
  spec.log_scale = 40;
  spec.levels = 3;
  spec.boot_levels = 13;
  spec.num_cts_levels = 2;
  spec.num_stc_levels = 2;
  return generate_prime_system(spec);
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
