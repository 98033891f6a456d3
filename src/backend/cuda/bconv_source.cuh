#pragma once
// The source side of a basis conversion for one coefficient, shared by the blocked and the
// tensor-core kernels: the centered terms t_j = center([x_j (Q/s_j)^-1]_{s_j}) in j order (the
// const-mult only for `bconv`), and in exact mode the contract's double sum sum_j t_j / s_j with
// explicit _rn intrinsics (a contracted fma would round differently from the CPU and change
// v = round(sum) on near-ties).

#include "backend/cuda/arith.cuh"
#include "backend/cuda/kernels.h"

namespace theo::cuda {

// Calls f(j, t_j) for j < b.src_size; returns the exact-mode sum (0 when !kExact). kMaxSrc > 0:
// the loop is unrolled for at most that many sources. Eight input loads are in flight per step.
template <bool kConstMult, bool kExact, u32 kMaxSrc = 0, typename F>
__device__ __forceinline__ double bconv_source_terms(const BConvDevice& b, const u32* in, u32 n,
                                                     std::size_t col, F&& f) {
  constexpr u32 kLoads = 8;
  const u32 src = b.src_size;
  double dacc = 0.0;
  const auto step = [&](u32 j0) {
    u32 x[kLoads];
#pragma unroll
    for (u32 jj = 0; jj < kLoads; ++jj)
      x[jj] = j0 + jj < src ? in[static_cast<std::size_t>(j0 + jj) * n + col] : 0u;
#pragma unroll
    for (u32 jj = 0; jj < kLoads; ++jj) {
      const u32 j = j0 + jj;
      if (j < src) {
        const Modulus sm = b.src_mod[j];
        u32 xv = x[jj];
        if constexpr (kConstMult) xv = mont_mul_c(xv, static_cast<i32>(b.src_hat_inv[j]), sm);
        const i32 t = center(xv, sm.q);
        f(j, t);
        if constexpr (kExact)
          dacc = __dadd_rn(dacc, __dmul_rn(static_cast<double>(t), b.src_inv[j]));
      }
    }
  };
  if constexpr (kMaxSrc > 0) {
#pragma unroll
    for (u32 j0 = 0; j0 < kMaxSrc; j0 += kLoads)
      step(j0);
  } else {
    for (u32 j0 = 0; j0 < src; j0 += kLoads)
      step(j0);
  }
  return dacc;
}

}  // namespace theo::cuda
