#pragma once
// Device helpers on top of math/modarith.h. Twiddles and constants are kept in Montgomery form
// (w * 2^32 mod q), so one signed Montgomery reduction per product gives the plain product.

#include "theo/math/modarith.h"

namespace theo::cuda {

// a * w * 2^-32 mod q, canonical. |a * w| < q * 2^31: a canonical and w centered or canonical.
__device__ __forceinline__ u32 mont_mul_c(u32 a, i32 w, const Modulus& m) {
  return canon(smr(static_cast<i64>(a) * w, m.q, m.qinv), m.q);
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
