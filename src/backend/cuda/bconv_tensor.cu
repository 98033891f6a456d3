// Tensor-core BConv for source bases up to 16 limbs (every ModUp digit, ModDown, rescale): the
// byte-split table of bconv_tensor_table.h, four u8 x u8 -> s32 mma.m16n8k32 byte planes per
// 16-row output tile, summed in 64 bits and reduced once. The blocked kernel spends two issue
// slots of the integer multiply pipe per 32 x 32 -> 64-bit product (12 per output word for a
// 12-limb digit, plus ~9 for the reduction); here the products run on the tensor cores and an
// output word costs its reduction only. Same congruence as the CPU's sum, so the same words.
//
// A warp takes 2 x 8 consecutive columns (two mma n-tiles), a block 8 warps = 128 columns and
// every output row. Lane (g, c) = (lane / 4, lane % 4) loads x_{c + 4r} of columns g and 8 + g:
// those are its B words (the mma's k order was built around this), so no shuffles. The exact-mode
// v (a double sum in j order, as the contract fixes) takes one lane per column.

#include <algorithm>

#include "backend/cuda/arith.cuh"
#include "backend/cuda/async_copy.cuh"
#include "backend/cuda/bconv_source.cuh"
#include "backend/cuda/bconv_tensor_table.h"
#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"

namespace theo::cuda {
namespace {

constexpr u32 kTcWarps = 8;
constexpr u32 kTcTiles = 2;                      // mma n-tiles (8 columns) per warp
constexpr u32 kTcWarpCols = 8 * kTcTiles;        // columns per warp
constexpr u32 kTcCols = kTcWarps * kTcWarpCols;  // columns per block
constexpr u32 kTcMaxKBlocks = 3;                 // (r0 + 2) / 2 for r0 <= 4
constexpr std::size_t kTcMaxSmem = 48 * 1024;

__device__ __forceinline__ void mma_u8(i32 (&d)[4], const uint4& a, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

__host__ __device__ inline u32 tc_kblocks(const BConvDevice& b) {
  return (b.tc_r0 + 2) / 2;
}
__host__ __device__ inline u32 tc_mtiles(const BConvDevice& b) {
  return (b.dst_size + 15) / 16;
}
std::size_t tc_smem(const BConvDevice& b) {
  const std::size_t frags = std::size_t{tc_mtiles(b)} * 4 * tc_kblocks(b) * 32;
  return frags * sizeof(uint4) + std::size_t{16} * tc_mtiles(b) * sizeof(int4);
}

// The block's copy of the fragment table and the row constants, by asynchronous copies: every
// thread issues all of its 16-byte copies at once. (A plain load -> store loop waited one L2
// round trip per iteration at each block's start: ncu put ~30% of the kernel's stall samples on
// that store.) The tables are immutable, so the copies are issued before the PDL wait and travel
// during the tail of the kernel before; tc_block waits for them.
__device__ __forceinline__ void tc_stage_tables(const BConvDevice& b) {
  extern __shared__ uint4 stc[];
  const u32 nfrag = tc_mtiles(b) * 4 * tc_kblocks(b) * 32;
  const uint4* gfrag = reinterpret_cast<const uint4*>(b.tc_frags);
  for (u32 e = threadIdx.x; e < nfrag; e += blockDim.x)
    cp_async16(stc + e, gfrag + e);
  const int4* grows = reinterpret_cast<const int4*>(b.tc_rows);
  for (u32 e = threadIdx.x; e < 16 * tc_mtiles(b); e += blockDim.x)
    cp_async16(stc + nfrag + e, grows + e);
  cp_async_commit();
}

template <bool kConstMult, bool kExact>
__device__ __forceinline__ void tc_block(const BConvDevice& b, const u32* in, u32* out, u32 n) {
  extern __shared__ uint4 stc[];
  const u32 src = b.src_size, dst = b.dst_size, r0 = b.tc_r0;
  const u32 kbs = tc_kblocks(b), mts = tc_mtiles(b);
  const u32 nfrag = mts * 4 * kbs * 32;
  const int4* const srows = reinterpret_cast<const int4*>(stc + nfrag);
  const u32 lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
  const u32 n0 = blockIdx.x * kTcCols + (threadIdx.x >> 5) * kTcWarpCols;

  // The inputs and the source moduli while the tables are in flight.
  u32 x[kTcTiles][4];
#pragma unroll
  for (u32 t = 0; t < kTcTiles; ++t)
#pragma unroll
    for (u32 r = 0; r < 4; ++r) {
      const u32 j = c + 4 * r;
      x[t][r] = j < src ? in[static_cast<std::size_t>(j) * n + n0 + 8 * t + g] : 0u;
    }
  Modulus sm[4];
  u32 hat[4] = {};
#pragma unroll
  for (u32 r = 0; r < 4; ++r) {
    const u32 j = c + 4 * r;
    sm[r] = j < src ? b.src_mod[j] : Modulus{};
    if constexpr (kConstMult) hat[r] = j < src ? b.src_hat_inv[j] : 0u;
  }
  cp_async_wait_all();
  __syncthreads();

  // B words: x_{c + 4r} for r < r0, the flag word at r0 (byte a: x_{c + 4a} > s / 2), zeros after.
  u32 bw[kTcTiles][2 * kTcMaxKBlocks];
#pragma unroll
  for (u32 t = 0; t < kTcTiles; ++t) {
    u32 flags = 0;
#pragma unroll
    for (u32 r = 0; r < 4; ++r) {
      if (c + 4 * r < src) {
        u32 xv = x[t][r];
        if constexpr (kConstMult) xv = mont_mul_c(xv, static_cast<i32>(hat[r]), sm[r]);
        x[t][r] = xv;
        flags |= (xv > (sm[r].q >> 1) ? 1u : 0u) << (8 * r);
      }
    }
#pragma unroll
    for (u32 r = 0; r < 2 * kTcMaxKBlocks; ++r)
      bw[t][r] = (r < 4 ? x[t][r & 3] : 0u) | (r == r0 ? flags : 0u);
  }
  // Exact mode: v of the warp's column n0 + lane by lane < 16 alone (the contract's double sum runs
  // in j order, so a column's sum cannot be split over the four lanes holding its words), then
  // handed to the lanes whose outputs need it. No block barrier waits on it.
  i32 wv[kTcTiles][2] = {};
  if constexpr (kExact) {
    i32 v = 0;
    if (lane < kTcWarpCols) {
      const double dacc = bconv_source_terms<kConstMult, true, kBConvTensorMaxSrc>(
          b, in, n, n0 + lane, [](u32, i32) {});
      // Negated: the epilogue subtracts v Q with one multiply-add.
      v = -static_cast<i32>(floor(__dadd_rn(dacc, 0.5)));
    }
#pragma unroll
    for (u32 t = 0; t < kTcTiles; ++t)
#pragma unroll
      for (u32 e = 0; e < 2; ++e)
        wv[t][e] = __shfl_sync(0xffffffffu, v, 8 * t + 2 * c + e);
  }

  for (u32 m = 0; m < mts; ++m) {
    i32 acc[4][kTcTiles][4] = {};
#pragma unroll
    for (u32 pb = 0; pb < 4; ++pb)
#pragma unroll
      for (u32 kb = 0; kb < kTcMaxKBlocks; ++kb)
        if (kb < kbs) {
          const uint4 a = stc[((m * 4 + pb) * kbs + kb) * 32 + lane];
#pragma unroll
          for (u32 t = 0; t < kTcTiles; ++t)
            mma_u8(acc[pb][t], a, bw[t][2 * kb], bw[t][2 * kb + 1]);
        }
        // Accumulator i of a lane: row g + 8 (i / 2), column 2c + i % 2 of the n-tile.
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      const u32 row = 16 * m + g + 8 * h;
      if (row >= dst) continue;
      const int4 rc = srows[row];
      const u32 q = static_cast<u32>(rc.x);
      u32* const orow = out + static_cast<std::size_t>(row) * n + n0 + 2 * c;
#pragma unroll
      for (u32 t = 0; t < kTcTiles; ++t) {
        u32 o[2];
#pragma unroll
        for (u32 e = 0; e < 2; ++e) {
          const u32 i = 2 * h + e;
          // P_0 + 2^8 P_1 and P_2 + 2^8 P_3 fit 32 bits (P_b < 2^23); one wide multiply-add joins
          // them.
          const u32 lo = static_cast<u32>(acc[0][t][i]) + (static_cast<u32>(acc[1][t][i]) << 8);
          const u32 hi = static_cast<u32>(acc[2][t][i]) + (static_cast<u32>(acc[3][t][i]) << 8);
          i64 sum = static_cast<i64>(mad_wide_u32(hi, 1u << 16, lo));
          if constexpr (kExact) sum = mad_wide_s32(wv[t][e], rc.z, sum);
          const i32 z = static_cast<i32>(static_cast<u32>(sum) * static_cast<u32>(rc.y));
          const u32 y = static_cast<u32>(static_cast<i32>(sum >> 32) - __mulhi(z, rc.x));
          o[e] = min(y, y + q);  // (-q, q) -> [0, q): a negative y wraps above 2^31 > y + q
        }
        *reinterpret_cast<uint2*>(orow + 8 * t) = make_uint2(o[0], o[1]);
      }
    }
  }
}

template <bool kConstMult, bool kExact>
__global__ void __launch_bounds__(kTcWarps * 32, 4)
    bconv_tensor_kernel(const __grid_constant__ BConvDevice b, const u32* in, u32* out, u32 n) {
  tc_stage_tables(b);
  pdl_entry();
  tc_block<kConstMult, kExact>(b, in, out, n);
}

struct TensorBatchArgs {
  BConvDevice b[kMaxBConvBatch];
  const u32* in[kMaxBConvBatch];
  u32* out[kMaxBConvBatch];
};

// Grid row y is conversion y (Backend::bconv_matmul_batch: the digits of one ModUp).
template <bool kExact>
__global__ void __launch_bounds__(kTcWarps * 32, 4)
    bconv_tensor_batch_kernel(const __grid_constant__ TensorBatchArgs a, u32 n) {
  const u32 y = blockIdx.y;
  tc_stage_tables(a.b[y]);
  pdl_entry();
  tc_block<false, kExact>(a.b[y], a.in[y], a.out[y], n);
}

}  // namespace

bool bconv_tensor_applies(const BConvDevice& b, u32 n) {
  return b.tc_r0 > 0 && b.tc_frags != nullptr && b.dst_size > 0 && n % kTcCols == 0 &&
         tc_smem(b) <= kTcMaxSmem;
}

void launch_bconv_tensor(const BConvDevice& b, const u32* in, u32* out, u32 n, bool const_mult,
                         cudaStream_t s) {
  const dim3 grid(n / kTcCols);
  const std::size_t smem = tc_smem(b);
  constexpr u32 threads = kTcWarps * 32;
  if (const_mult) {
    if (b.exact)
      launch_kernel(bconv_tensor_kernel<true, true>, grid, threads, smem, s, b, in, out, n);
    else
      launch_kernel(bconv_tensor_kernel<true, false>, grid, threads, smem, s, b, in, out, n);
  } else {
    if (b.exact)
      launch_kernel(bconv_tensor_kernel<false, true>, grid, threads, smem, s, b, in, out, n);
    else
      launch_kernel(bconv_tensor_kernel<false, false>, grid, threads, smem, s, b, in, out, n);
  }
  THEO_CUDA_CHECK_LAUNCH();
}

void launch_bconv_tensor_batch(std::span<const BConvDevice> bs, std::span<const u32* const> ins,
                               std::span<u32* const> outs, u32 n, cudaStream_t s) {
  constexpr u32 threads = kTcWarps * 32;
  for (std::size_t k0 = 0; k0 < bs.size(); k0 += kMaxBConvBatch) {
    const u32 count = static_cast<u32>(std::min<std::size_t>(kMaxBConvBatch, bs.size() - k0));
    TensorBatchArgs a{};
    std::size_t smem = 0;
    for (u32 k = 0; k < count; ++k) {
      a.b[k] = bs[k0 + k];
      a.in[k] = ins[k0 + k];
      a.out[k] = outs[k0 + k];
      smem = std::max(smem, tc_smem(a.b[k]));
    }
    const dim3 grid(n / kTcCols, count);
    if (bs[k0].exact)
      launch_kernel(bconv_tensor_batch_kernel<true>, grid, threads, smem, s, a, n);
    else
      launch_kernel(bconv_tensor_batch_kernel<false>, grid, threads, smem, s, a, n);
    THEO_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace theo::cuda
