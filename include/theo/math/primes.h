#pragma once
// Primes for 32-bit RNS: primality, NTT-friendly prime search, and the canonical NTT root.

#include <vector>

#include "theo/common.h"

namespace theo {

// Deterministic primality test for any 64-bit n.
bool is_prime(u64 n);

// `count` distinct primes q = 1 (mod 2N) with q < 2^31, nearest to 2^log_target first
// (alternating above/below), skipping every prime in `exclude`. N = 2^log_n, 10 <= log_n <= 17,
// 20 <= log_target <= 31. Throws ParameterError when not enough primes exist.
std::vector<u32> find_ntt_primes(u32 log_n, u32 log_target, u32 count,
                                 const std::vector<u32>& exclude = {});

// Primes q = 1 (mod 2N) in [lo, hi), ascending. Requires hi <= 2^32.
std::vector<u32> ntt_primes_in_range(u32 log_n, u64 lo, u64 hi);

// Up to `count` primes q = 1 (mod 2N) in [lo, hi), hi <= 2^32, ordered by closeness to `center`
// (ties: the smaller first), skipping every prime in `exclude`. Fewer when the range runs out.
// find_ntt_primes is this with center = 2^log_target, lo = 2N + 1, hi = 2^31.
std::vector<u32> ntt_primes_near(u32 log_n, u64 center, u32 count, u64 lo, u64 hi,
                                 const std::vector<u32>& exclude = {});

// Smallest generator of the multiplicative group mod prime q.
u32 primitive_root(u32 q);

// The canonical primitive 2N-th root of unity psi used by every backend's NTT:
// psi = g^((q-1)/2N) with g = primitive_root(q). Requires q = 1 (mod 2N).
u32 ntt_root(u32 q, u32 n);

}  // namespace theo
