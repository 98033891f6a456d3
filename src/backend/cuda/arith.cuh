#pragma once
// Device helpers on top of math/modarith.h. Twiddles and constants are kept in Montgomery form
// (w * 2^32 mod q), so one signed Montgomery reduction per product gives the plain product.

#include "theo/math/modarith.h"

namespace theo::cuda {

// Signed Montgomery reduction of the product a * w (Cheddar Alg. 2) in 32-bit multiplies only:
// the low and high words of a * w come from mul.lo / mul.hi, so no 64-bit multiply or shift is
// emitted (a plain smr(i64(a) * w) compiles to a 64 x 64 multiply when a is unsigned).
// Requires |a * w| < q * 2^31; the result is in (-q, q).
__device__ __forceinline__ i32 smr_mul(i32 a, i32 w, const Modulus& m) {
  const u32 lo = static_cast<u32>(a) * static_cast<u32>(w);
  const i32 hi = __mulhi(a, w);
  const i32 z = static_cast<i32>(lo * static_cast<u32>(m.qinv));
  return hi - __mulhi(z, static_cast<i32>(m.q));
}

// a * w * 2^-32 mod q, canonical. a < 2^31 (canonical) and |a * w| < q * 2^31: w centered or
// canonical.
__device__ __forceinline__ u32 mont_mul_c(u32 a, i32 w, const Modulus& m) {
  return canon(smr_mul(static_cast<i32>(a), w, m), m.q);
}

// a * b mod q for canonical a, b: the second reduction multiplies by 2^64 mod q to cancel 2^-32.
__device__ __forceinline__ u32 mul_mod_c(u32 a, u32 b, const Modulus& m) {
  const i32 t = smr_mul(static_cast<i32>(a), static_cast<i32>(b), m);
  return canon(smr_mul(t, static_cast<i32>(m.r2_mod), m), m.q);
}

// a * b + c with 32-bit a, b and 64-bit c as one wide multiply-add (PTX mad.wide): the C++ forms
// compile to 64 x 64 multiplies (sign extension) or to a product and a 64-bit add with carry.
// ptxas may still split a chain of them into products summed by IADD3 pairs.
__device__ __forceinline__ i64 mad_wide_s32(i32 a, i32 b, i64 c) {
  i64 d;
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(d) : "r"(a), "r"(b), "l"(c));
  return d;
}
__device__ __forceinline__ u64 mad_wide_u32(u32 a, u32 b, u64 c) {
  u64 d;
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(d) : "r"(a), "r"(b), "l"(c));
  return d;
}

template <int W>
__device__ __forceinline__ void load_words(const u32* p, u32 (&v)[W]) {
  if constexpr (W == 4) {
    const uint4 x = *reinterpret_cast<const uint4*>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  } else {
#pragma unroll
    for (int w = 0; w < W; ++w)
      v[w] = p[w];
  }
}

template <int W>
__device__ __forceinline__ void store_words(u32* p, const u32 (&v)[W]) {
  if constexpr (W == 4) {
    *reinterpret_cast<uint4*>(p) = make_uint4(v[0], v[1], v[2], v[3]);
  } else {
#pragma unroll
    for (int w = 0; w < W; ++w)
      p[w] = v[w];
  }
}

}  // namespace theo::cuda
