#pragma once
// The HomomorphicEncryption.org 128-bit table for ternary secrets, as OpenFHE tabulates it.

#include "theo/common.h"

namespace theo {

struct ParameterSet;

// Max log2(PQ) for 128-bit security with a ternary secret at N = 2^log_n (0 when not tabulated:
// 2^13 -> 218, 2^14 -> 438, 2^15 -> 881, 2^16 -> 1747, 2^17 -> 3523; below 2^13 nothing is secure).
double max_log2_pq_128(u32 log_n);

// Throws SecurityError, saying by how many bits log2(PQ) is over the bound, unless
// allow_insecure is true.
void check_security(const ParameterSet& p, bool allow_insecure);

}  // namespace theo
