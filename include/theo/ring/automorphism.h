#pragma once
// Index maps shared by host and device code: bit reversal, the NTT-domain automorphism map, and
// the Galois elements of CKKS rotations.

#include "theo/common.h"
#include "theo/math/modarith.h"

namespace theo {

THEO_HD u32 bit_reverse(u32 x, u32 log_n) {
#if defined(__CUDA_ARCH__)
  return log_n == 0 ? 0u : (__brev(x) >> (32 - log_n));
#else
  u32 r = 0;
  for (u32 i = 0; i < log_n; ++i) {
    r = (r << 1) | (x & 1u);
    x >>= 1;
  }
  return r;
#endif
}

// Source index of output i for out = phi_k(in) on NTT-domain data (bit-reversed evaluation order).
THEO_HD u32 automorphism_src_index(u32 i, u32 k, u32 log_n) {
  const u32 two_n_mask = (2u << log_n) - 1u;
  const u32 m = bit_reverse(i, log_n);
  const u32 e = static_cast<u32>((static_cast<u64>(2 * m + 1) * k) & two_n_mask);
  return bit_reverse((e - 1) >> 1, log_n);
}

// Galois element of a left rotation by r slots: 5^r mod 2N (r may be negative).
inline u32 galois_element_for_rotation(i64 r, u32 log_n) {
  const u64 two_n = u64{2} << log_n;
  const u64 order = two_n / 4;  // multiplicative order of 5 mod 2N
  i64 e = r % static_cast<i64>(order);
  if (e < 0) e += static_cast<i64>(order);
  u64 g = 1, b = 5;
  for (u64 x = static_cast<u64>(e); x; x >>= 1) {
    if (x & 1) g = (g * b) % two_n;
    b = (b * b) % two_n;
  }
  return static_cast<u32>(g);
}

// The inverse of an odd Galois element mod 2N (phi_g^-1 = phi_(g^-1)): 2N divides 2^32, so the
// inverse mod 2^32 reduces to it.
inline u32 galois_element_inverse(u32 g, u32 log_n) {
  return inverse_mod_2_32(g) & ((2u << log_n) - 1u);
}

// Galois element of complex conjugation: 2N - 1.
inline u32 galois_element_for_conjugation(u32 log_n) {
  return (2u << log_n) - 1u;
}

}  // namespace theo
