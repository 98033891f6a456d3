// Fast basis conversion (Cheddar §4.2, lazy reduction): inputs and matrix constants are centered
// (|t_j| <= s_j / 2, |M_ij| <= d_i / 2, M in Montgomery form), so a product is below 2^60 in
// magnitude and the accumulator stays a signed 64-bit integer. The tile kernel folds it every 4
// terms by replacing its high word's 2^32 with 2^32 mod d_i (one wide multiply-add, fold_hi); the
// small-source kernel adds or subtracts d_i 2^32. Either changes nothing mod d_i, the sum is exact,
// so the words equal the CPU's.
//
// Kernels: the tensor-core kernel (bconv_tensor.cu) takes refined plans of up to 16 sources; for
// the others the blocked kernel (wherever n is a multiple of 128 and its tables fit 48 KB of
// shared memory) computes each coefficient's t_j once and gives every thread 4 coefficients x up
// to 4 output rows; the tile kernel (the fallback, and BConvConfig::blocked = 0) gives a thread
// one coefficient and kTile output limbs, the block's kTile x |S| slice of the matrix in shared
// memory, and re-reads the input once per output tile; the small-source kernel is opt-in.

#include <algorithm>

#include "backend/cuda/arith.cuh"
#include "backend/cuda/bconv_source.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"

namespace theo::cuda {
namespace {

__device__ __forceinline__ i64 fold(i64 acc, i64 bound) {
  if (acc >= bound) return acc - 2 * bound;
  if (acc < -bound) return acc + 2 * bound;
  return acc;
}

// acc = hi 2^32 + lo with 2^32 = r (mod d), r centered: hi r + lo is congruent, and for any
// |acc| < 2^63 it is below 2^31 (d / 2) + 2^32 <= 2^61 + 2^32 in magnitude. One wide multiply-add
// replaces the two 64-bit compares and selects of fold(): four more products (each below 2^60)
// then stay below 2^63.
__device__ __forceinline__ i64 fold_hi(i64 acc, i32 r) {
  return mad_wide_s32(static_cast<i32>(acc >> 32), r, static_cast<i64>(static_cast<u32>(acc)));
}

// acc * 2^-32 mod d, canonical, for |acc| < 2^62 (a folded accumulator): the Montgomery step on
// the 64-bit value leaves y = hi - mulhi(z, d) with |hi| < 2^30 and |mulhi| < d / 2 < 2^30, so y
// fits 32 bits, and smr(y r) = y mod d needs only |y r| < d 2^31 (r centered). 32-bit multiplies.
__device__ __forceinline__ u32 reduce_acc(i64 acc, i32 r, const Modulus& m) {
  const i32 z = static_cast<i32>(static_cast<u32>(acc) * static_cast<u32>(m.qinv));
  const i32 y = static_cast<i32>(acc >> 32) - __mulhi(z, static_cast<i32>(m.q));
  return canon(smr(static_cast<i64>(y) * r, m), m.q);
}

template <int kTile, bool kConstMult, bool kExact>
__global__ void bconv_kernel(const __grid_constant__ BConvDevice b, const u32* in, u32* out,
                             u32 n) {
  pdl_entry();
  // [j] src_inv (exact mode, src4 slots so the matrix stays 16-byte aligned), then
  // [r * src4 + j] matrix entries, rows zero-padded to a multiple of 4 for 16-byte loads, then the
  // [j] source moduli and hat-inverse constants (shared, so the loop's only global loads are x).
  extern __shared__ double sdyn[];
  const u32 src = b.src_size;
  const u32 src4 = (src + 3) & ~3u;
  double* sinv = sdyn;
  i32* smat = reinterpret_cast<i32*>(sdyn + (kExact ? src4 : 0));
  Modulus* ssrc = reinterpret_cast<Modulus*>(smat + kTile * src4);
  u32* shat = reinterpret_cast<u32*>(ssrc + src);
  const u32 dst0 = blockIdx.y * kTile;
  const u32 rows = min(static_cast<u32>(kTile), b.dst_size - dst0);
  for (u32 e = threadIdx.x; e < kTile * src4; e += blockDim.x) {
    const u32 r = e / src4, j = e - r * src4;
    smat[e] = r < rows && j < src ? b.matrix[static_cast<std::size_t>(dst0 + r) * src + j] : 0;
  }
  for (u32 j = threadIdx.x; j < src; j += blockDim.x) {
    ssrc[j] = b.src_mod[j];
    if constexpr (kConstMult) shat[j] = b.src_hat_inv[j];
    if constexpr (kExact) sinv[j] = b.src_inv[j];
  }
  __syncthreads();
  const u32 idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;

  // Centered 2^32 mod d_r: the fold constant, and Montgomery's 1 for the final reduction.
  i32 rc[kTile];
#pragma unroll
  for (int r = 0; r < kTile; ++r) {
    const Modulus dm = b.dst_mod[dst0 + min(static_cast<u32>(r), rows - 1)];
    rc[r] = center(dm.r_mod, dm.q);
  }
  i64 acc[kTile];
#pragma unroll
  for (int r = 0; r < kTile; ++r)
    acc[r] = 0;
  // The contract's double sum, term by term in j order: explicit _rn intrinsics, because a
  // contracted fma would round differently from the CPU and change v on near-ties.
  double dacc = 0.0;

  // Four source limbs per step, each row's four matrix entries in one 16-byte shared broadcast,
  // one fold per row. The next step's inputs are loaded before this step's MACs, so at ~1/3
  // occupancy the DRAM latency is exposed once per tile instead of once per step.
  const auto load4 = [&](u32 j0, u32(&x)[4]) {
#pragma unroll
    for (u32 jj = 0; jj < 4; ++jj)
      x[jj] = j0 + jj < src ? in[static_cast<std::size_t>(j0 + jj) * n + idx] : 0u;
  };
  u32 xn[4];
  load4(0, xn);
  for (u32 j0 = 0; j0 < src; j0 += 4) {
    u32 x[4] = {xn[0], xn[1], xn[2], xn[3]};
    load4(j0 + 4, xn);
    i32 t[4];
#pragma unroll
    for (u32 jj = 0; jj < 4; ++jj) {
      const u32 j = j0 + jj;
      t[jj] = 0;
      if (j < src) {
        const Modulus sm = ssrc[j];
        if constexpr (kConstMult) x[jj] = mont_mul_c(x[jj], static_cast<i32>(shat[j]), sm);
        t[jj] = center(x[jj], sm.q);
        if constexpr (kExact)
          dacc = __dadd_rn(dacc, __dmul_rn(static_cast<double>(t[jj]), sinv[j]));
      }
    }
#pragma unroll
    for (int r = 0; r < kTile; ++r) {
      const int4 mv = *reinterpret_cast<const int4*>(smat + r * src4 + j0);
      i64 a = acc[r];
      a += static_cast<i64>(t[0]) * mv.x;
      a += static_cast<i64>(t[1]) * mv.y;
      a += static_cast<i64>(t[2]) * mv.z;
      a += static_cast<i64>(t[3]) * mv.w;
      acc[r] = fold_hi(a, rc[r]);
    }
  }
  if constexpr (kExact) {
    // |v| <= |S| / 2 + 1, so v * [Q]_{d_i} (centered, < 2^30 |v|) keeps the folded |acc| (below
    // 2^61 + 2^32) under reduce_acc's 2^62.
    const i32 v = static_cast<i32>(floor(__dadd_rn(dacc, 0.5)));
#pragma unroll
    for (int r = 0; r < kTile; ++r)
      if (static_cast<u32>(r) < rows) acc[r] -= static_cast<i64>(v) * b.q_mod_dst[dst0 + r];
  }
#pragma unroll
  for (int r = 0; r < kTile; ++r) {
    if (static_cast<u32>(r) < rows) {
      const Modulus dm = b.dst_mod[dst0 + r];
      out[static_cast<std::size_t>(dst0 + r) * n + idx] = reduce_acc(acc[r], rc[r], dm);
    }
  }
}

// Small source bases (|S| <= 16: every ModUp digit, ModDown, rescale, merged ModDown + rescale).
// The tile kernel above keeps kTile 64-bit accumulators and their fold bounds in registers (~90),
// so only ~16 warps per SM are resident and its DRAM loads are latency-bound. Here a thread keeps
// its |S| centered t_j (and the exact-mode v) in registers and walks the block's output rows one
// at a time with a single accumulator: ~40 registers, full occupancy, and a row's matrix entries
// come as 16-byte shared broadcasts (4 MACs per load). Blocks split the output rows (grid.y) so
// N = 2^16 still fills the GPU; the input is re-read once per row block, from L2.
template <int kMaxSrc, bool kConstMult, bool kExact>
__global__ void __launch_bounds__(256)
    bconv_small_kernel(const __grid_constant__ BConvDevice b, const u32* in, u32* out, u32 n,
                       u32 rows_per_block) {
  pdl_entry();
  extern __shared__ int4 sdyn4[];
  const u32 src = b.src_size;
  const u32 src4 = (src + 3) & ~3u;
  const u32 dst0 = blockIdx.y * rows_per_block;
  const u32 rows = min(rows_per_block, b.dst_size - dst0);
  // [r] dst modulus, then [r] q_mod_dst (exact), then [r * src4 + j] matrix rows, zero-padded.
  Modulus* smod = reinterpret_cast<Modulus*>(sdyn4);
  i32* sqd = reinterpret_cast<i32*>(smod + rows_per_block);
  i32* smat = sqd + ((rows_per_block + 3) & ~3u);
  for (u32 e = threadIdx.x; e < rows * src4; e += blockDim.x) {
    const u32 r = e / src4, j = e - r * src4;
    smat[e] = j < src ? b.matrix[static_cast<std::size_t>(dst0 + r) * src + j] : 0;
  }
  for (u32 r = threadIdx.x; r < rows; r += blockDim.x) {
    smod[r] = b.dst_mod[dst0 + r];
    if constexpr (kExact) sqd[r] = b.q_mod_dst[dst0 + r];
  }
  __syncthreads();
  const u32 idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;

  u32 x[kMaxSrc];
#pragma unroll
  for (int j = 0; j < kMaxSrc; ++j)
    x[j] = static_cast<u32>(j) < src ? in[static_cast<std::size_t>(j) * n + idx] : 0u;
  i32 t[kMaxSrc];
  double dacc = 0.0;
#pragma unroll
  for (int j = 0; j < kMaxSrc; ++j) {
    t[j] = 0;
    if (static_cast<u32>(j) < src) {
      const Modulus sm = b.src_mod[j];
      u32 v = x[j];
      if constexpr (kConstMult) v = mont_mul_c(v, static_cast<i32>(b.src_hat_inv[j]), sm);
      t[j] = center(v, sm.q);
      // Same order and rounding as the contract (no fma): see bconv_kernel.
      if constexpr (kExact)
        dacc = __dadd_rn(dacc, __dmul_rn(static_cast<double>(t[j]), b.src_inv[j]));
    }
  }
  const i64 v = kExact ? static_cast<i64>(floor(__dadd_rn(dacc, 0.5))) : 0;

  for (u32 r = 0; r < rows; ++r) {
    const Modulus dm = smod[r];
    const i64 bound = static_cast<i64>(dm.q) << 31;
    const int4* mrow = reinterpret_cast<const int4*>(smat + r * src4);
    i64 acc = 0;
#pragma unroll
    for (int j4 = 0; j4 < kMaxSrc / 4; ++j4) {
      if (static_cast<u32>(4 * j4) < src) {
        const int4 m = mrow[j4];
        acc += static_cast<i64>(t[4 * j4]) * m.x;
        acc += static_cast<i64>(t[4 * j4 + 1]) * m.y;
        acc += static_cast<i64>(t[4 * j4 + 2]) * m.z;
        acc += static_cast<i64>(t[4 * j4 + 3]) * m.w;
        acc = fold(acc, bound);
      }
    }
    if constexpr (kExact) acc -= v * sqd[r];
    out[static_cast<std::size_t>(dst0 + r) * n + idx] = canon(smr(fold(acc, bound), dm), dm.q);
  }
}

template <int kMaxSrc, bool kConstMult>
void launch_small(const BConvDevice& b, u32 rows_per_block, const u32* in, u32* out, u32 n,
                  cudaStream_t s) {
  constexpr u32 threads = 256;
  const dim3 grid((n + threads - 1) / threads, (b.dst_size + rows_per_block - 1) / rows_per_block);
  const u32 src4 = (b.src_size + 3) & ~3u;
  const std::size_t smem = rows_per_block * sizeof(Modulus) +
                           ((rows_per_block + 3) & ~3u) * sizeof(i32) +
                           static_cast<std::size_t>(rows_per_block) * src4 * sizeof(i32);
  if (b.exact)
    launch_kernel(bconv_small_kernel<kMaxSrc, kConstMult, true>, grid, threads, smem, s, b, in, out,
                  n, rows_per_block);
  else
    launch_kernel(bconv_small_kernel<kMaxSrc, kConstMult, false>, grid, threads, smem, s, b, in,
                  out, n, rows_per_block);
  THEO_CUDA_CHECK_LAUNCH();
}

template <bool kConstMult>
void dispatch_small(const BConvDevice& b, u32 rows_per_block, const u32* in, u32* out, u32 n,
                    cudaStream_t s) {
  if (b.src_size <= 4)
    launch_small<4, kConstMult>(b, rows_per_block, in, out, n, s);
  else if (b.src_size <= 8)
    launch_small<8, kConstMult>(b, rows_per_block, in, out, n, s);
  else
    launch_small<16, kConstMult>(b, rows_per_block, in, out, n, s);
}

// ---- blocked kernel (default) ------------------------------------------------------------------
// A block owns T = blockDim.x consecutive coefficients and every output limb. Phase 1: thread i
// computes the centered t_j of coefficient i for every source j (and the exact-mode v) once, into
// shared memory. Phase 2: the block's threads are kC output groups x T / kC coefficient sets of kC
// consecutive coefficients; a thread accumulates chunks of up to 4 output rows x its kC
// coefficients over all sources, t_j read as one kC-word shared load per source, matrix rows
// as 16-byte broadcasts, and writes each row's kC words with one vector store. The tile kernel
// redid the source work (load, const-mult, centering) once per output tile and the output work
// (modulus load, reduction) for one coefficient at a time.
//
// Folds: BConvDevice::fold_steps says after how many 4-term steps the accumulators must be folded
// (0: never; the host bounded every row's sum below 2^63, Theodosian §III-C2). One fold_hi after
// the loop brings any |acc| < 2^63 below 2^61 + 2^32 for the exact-mode subtraction and the
// reduction.
constexpr u32 kChunk = 4;  // output rows per accumulator chunk

template <int kC>
struct alignas(4 * kC) Lanes {
  i32 v[kC];
};

// Shared layout of the blocked kernel, in 4-byte words from the start of dynamic shared memory.
struct BlockedSmem {
  u32 t = 0;     // [src4][T] i32 centered t_j
  u32 v = 0;     // [T] i32 exact-mode v
  u32 mat = 0;   // [dst][src4] i32 matrix rows, zero-padded
  u32 rows = 0;  // [dst] int4 {q, qinv, center(2^32 mod d), centered mont(Q mod d)}
  u32 words = 0;
};
__host__ __device__ inline BlockedSmem blocked_smem(u32 src, u32 dst, u32 threads) {
  const u32 src4 = (src + 3) & ~3u;
  BlockedSmem l;
  l.t = 0;
  l.v = l.t + src4 * threads;
  l.mat = l.v + threads;
  l.rows = l.mat + dst * src4;
  l.words = l.rows + 4 * dst;
  return l;
}

// The final reduction of one accumulator (any |acc| < 2^63) to [acc * 2^-32 - v Q]_d, canonical.
// c = {q, qinv, rc, qd}. Two fold_hi steps leave |a| < 2^59 + 2^37, so one Montgomery step gives
// |y| < q / 2 + 2^27 + 2^5, inside (-q, q) for every q >= 2^28 + 2^6 (kBigQ: canon suffices);
// smaller moduli take one more Montgomery step by 2^32 mod d (y r 2^-32 = y mod d), as reduce_acc.
constexpr u32 kBigQ = (1u << 28) + (1u << 7);  // one bit of margin over 2^28 + 2^6
template <bool kExact, bool kBig>
__device__ __forceinline__ u32 reduce_out(i64 acc, const int4& c, i32 v) {
  i64 a = fold_hi(acc, c.z);
  if constexpr (kExact) a = mad_wide_s32(-v, c.w, a);
  const u32 q = static_cast<u32>(c.x);
  if constexpr (kBig) {
    a = fold_hi(a, c.z);
    const i32 z = static_cast<i32>(static_cast<u32>(a) * static_cast<u32>(c.y));
    return canon(static_cast<i32>(a >> 32) - __mulhi(z, static_cast<i32>(q)), q);
  } else {
    Modulus m;
    m.q = q;
    m.qinv = c.y;
    return reduce_acc(a, c.z, m);
  }
}

template <int kC, int kRows, bool kExact, bool kFold>
__device__ __forceinline__ void blocked_chunk(const i32* st, const i32* smat, const int4* srows,
                                              u32 src4, u32 sets, u32 set, u32 r0, u32 fold_steps,
                                              const Lanes<kC>& v, u32* out, u32 n, u32 c0) {
  i64 acc[kRows][kC];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < kC; ++c)
      acc[r][c] = 0;
  i32 rc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    rc[r] = srows[r0 + r].z;
  const Lanes<kC>* tl = reinterpret_cast<const Lanes<kC>*>(st) + set;
  u32 since = 0;
  for (u32 j0 = 0; j0 < src4; j0 += 4) {
    Lanes<kC> t[4];
#pragma unroll
    for (int jj = 0; jj < 4; ++jj)
      t[jj] = tl[(j0 + jj) * sets];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int4 m = *reinterpret_cast<const int4*>(smat + (r0 + r) * src4 + j0);
#pragma unroll
      for (int c = 0; c < kC; ++c)
        acc[r][c] = mad_wide_s32(
            t[3].v[c], m.w,
            mad_wide_s32(t[2].v[c], m.z,
                         mad_wide_s32(t[1].v[c], m.y, mad_wide_s32(t[0].v[c], m.x, acc[r][c]))));
    }
    if constexpr (kFold) {
      if (++since == fold_steps) {
        since = 0;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
          for (int c = 0; c < kC; ++c)
            acc[r][c] = fold_hi(acc[r][c], rc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int4 c = srows[r0 + r];
    Lanes<kC> y;
    // One warp-uniform branch per row, not per word.
    if (static_cast<u32>(c.x) > kBigQ) {
#pragma unroll
      for (int k = 0; k < kC; ++k)
        y.v[k] = static_cast<i32>(reduce_out<kExact, true>(acc[r][k], c, v.v[k]));
    } else {
#pragma unroll
      for (int k = 0; k < kC; ++k)
        y.v[k] = static_cast<i32>(reduce_out<kExact, false>(acc[r][k], c, v.v[k]));
    }
    *reinterpret_cast<Lanes<kC>*>(out + static_cast<std::size_t>(r0 + r) * n + c0) = y;
  }
}

// One block's work of the blocked kernel: coefficients [blockIdx.x T, (blockIdx.x + 1) T) of one
// conversion (b, in, out).
template <int kC, bool kConstMult, bool kExact, bool kFold>
__device__ __forceinline__ void blocked_block(const BConvDevice& b, const u32* in, u32* out,
                                              u32 n) {
  extern __shared__ int4 sblk[];
  const u32 src = b.src_size, dst = b.dst_size;
  const u32 src4 = (src + 3) & ~3u;
  const u32 T = blockDim.x, i = threadIdx.x;
  const BlockedSmem l = blocked_smem(src, dst, T);
  i32* const sw = reinterpret_cast<i32*>(sblk);
  i32* const st = sw + l.t;
  i32* const sv = sw + l.v;
  i32* const smat = sw + l.mat;
  int4* const srows = reinterpret_cast<int4*>(sw + l.rows);

  for (u32 e = i; e < dst * src4; e += T) {
    const u32 r = e / src4, j = e - r * src4;
    smat[e] = j < src ? b.matrix[static_cast<std::size_t>(r) * src + j] : 0;
  }
  for (u32 r = i; r < dst; r += T) {
    const Modulus dm = b.dst_mod[r];
    srows[r] = make_int4(static_cast<i32>(dm.q), dm.qinv, center(dm.r_mod, dm.q),
                         kExact ? b.q_mod_dst[r] : 0);
  }

  // Phase 1: coefficient c of this thread, every source in j order (the exact-mode double sum's
  // order), eight input loads in flight per step.
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * T + i;
  const double dacc =
      bconv_source_terms<kConstMult, kExact>(b, in, n, c, [&](u32 j, i32 t) { st[j * T + i] = t; });
  for (u32 j = src; j < src4; ++j)
    st[j * T + i] = 0;
  if constexpr (kExact) sv[i] = static_cast<i32>(floor(__dadd_rn(dacc, 0.5)));
  __syncthreads();

  // Phase 2: group g (warp-uniform: T / kC is a multiple of 32) takes output rows
  // [g dst / kC, (g + 1) dst / kC), split into ceil(rows / 4) chunks of near-equal size.
  const u32 sets = T / kC;
  const u32 g = i / sets, set = i - g * sets;
  const u32 c0 = blockIdx.x * T + kC * set;
  Lanes<kC> v{};
  if constexpr (kExact) v = reinterpret_cast<const Lanes<kC>*>(sv)[set];
  const u32 r_begin = g * dst / kC, rows = (g + 1) * dst / kC - r_begin;
  const u32 chunks = (rows + kChunk - 1) / kChunk;
  const u32 fs = b.fold_steps;
  for (u32 ch = 0; ch < chunks; ++ch) {
    const u32 r0 = r_begin + rows * ch / chunks;
    const u32 k = r_begin + rows * (ch + 1) / chunks - r0;
    if (k == 4)
      blocked_chunk<kC, 4, kExact, kFold>(st, smat, srows, src4, sets, set, r0, fs, v, out, n, c0);
    else if (k == 3)
      blocked_chunk<kC, 3, kExact, kFold>(st, smat, srows, src4, sets, set, r0, fs, v, out, n, c0);
    else if (k == 2)
      blocked_chunk<kC, 2, kExact, kFold>(st, smat, srows, src4, sets, set, r0, fs, v, out, n, c0);
    else
      blocked_chunk<kC, 1, kExact, kFold>(st, smat, srows, src4, sets, set, r0, fs, v, out, n, c0);
  }
}

template <int kC, bool kConstMult, bool kExact, bool kFold>
__global__ void __launch_bounds__(256)
    bconv_blocked_kernel(const __grid_constant__ BConvDevice b, const u32* in, u32* out, u32 n) {
  pdl_entry();
  blocked_block<kC, kConstMult, kExact, kFold>(b, in, out, n);
}

// Several conversions in one launch (Backend::bconv_matmul_batch): grid row y is conversion y.
// One launch fills the GPU with every conversion's blocks, where one conversion alone (n / T
// blocks, about one wave) leaves each block's load phase and MAC phase exposed in turn.
struct BConvBatchArgs {
  BConvDevice b[kMaxBConvBatch];
  const u32* in[kMaxBConvBatch];
  u32* out[kMaxBConvBatch];
};

template <int kC, bool kConstMult, bool kExact, bool kFold>
__global__ void __launch_bounds__(256)
    bconv_blocked_batch_kernel(const __grid_constant__ BConvBatchArgs a, u32 n) {
  pdl_entry();
  const u32 y = blockIdx.y;
  blocked_block<kC, kConstMult, kExact, kFold>(a.b[y], a.in[y], a.out[y], n);
}

template <int kC, bool kConstMult, bool kExact>
void launch_blocked_fold(const BConvDevice& b, u32 threads, std::size_t smem, const u32* in,
                         u32* out, u32 n, cudaStream_t s) {
  const dim3 grid(n / threads);
  if (b.fold_steps > 0)
    launch_kernel(bconv_blocked_kernel<kC, kConstMult, kExact, true>, grid, threads, smem, s, b, in,
                  out, n);
  else
    launch_kernel(bconv_blocked_kernel<kC, kConstMult, kExact, false>, grid, threads, smem, s, b,
                  in, out, n);
  THEO_CUDA_CHECK_LAUNCH();
}

// The blocked kernel's threads per block for conversions of these shapes (cfg.threads, halved
// down to 128 while some table would not fit), and its shared memory; 0 threads if none fits.
std::pair<u32, std::size_t> blocked_shape(std::span<const BConvDevice> bs, u32 threads, u32 n) {
  constexpr std::size_t kMaxSmem = 48 * 1024;
  auto smem_at = [&](u32 t) {
    std::size_t m = 0;
    for (const BConvDevice& b : bs)
      m = std::max<std::size_t>(m, blocked_smem(b.src_size, b.dst_size, t).words * std::size_t{4});
    return m;
  };
  u32 t = std::clamp(threads, 128u, 256u) & ~127u;
  while (t > 128 && smem_at(t) > kMaxSmem)
    t /= 2;
  const std::size_t smem = smem_at(t);
  if (smem > kMaxSmem || n % t != 0) return {0, 0};
  return {t, smem};
}

template <bool kExact, bool kFold>
void launch_batch_mode(const BConvBatchArgs& a, u32 count, u32 t, std::size_t smem, u32 n,
                       cudaStream_t s) {
  const dim3 grid(n / t, count);
  launch_kernel(bconv_blocked_batch_kernel<4, false, kExact, kFold>, grid, t, smem, s, a, n);
  THEO_CUDA_CHECK_LAUNCH();
}

// Launches the blocked kernel when its shape rules hold (T a multiple of 128 dividing n, the
// block's tables within the default 48 KB of shared memory, halving T down to 128 if needed);
// returns false otherwise. 4 coefficients per thread: on the H200 (12 -> 48, N = 2^16) this beat
// 2 per thread (15.8 vs 17.6 us; 64-register caps for more blocks per SM were slower still).
bool launch_blocked(const BConvDevice& b, u32 threads, const u32* in, u32* out, u32 n,
                    bool const_mult, cudaStream_t s) {
  constexpr int kC = 4;
  const auto [t, smem] = blocked_shape({&b, 1}, threads, n);
  if (t == 0) return false;
  if (const_mult) {
    if (b.exact)
      launch_blocked_fold<kC, true, true>(b, t, smem, in, out, n, s);
    else
      launch_blocked_fold<kC, true, false>(b, t, smem, in, out, n, s);
  } else {
    if (b.exact)
      launch_blocked_fold<kC, false, true>(b, t, smem, in, out, n, s);
    else
      launch_blocked_fold<kC, false, false>(b, t, smem, in, out, n, s);
  }
  return true;
}

template <int kTile, bool kConstMult>
void launch_mode(const BConvDevice& b, dim3 grid, u32 threads, std::size_t smem, const u32* in,
                 u32* out, u32 n, cudaStream_t s) {
  if (b.exact)
    launch_kernel(bconv_kernel<kTile, kConstMult, true>, grid, threads, smem, s, b, in, out, n);
  else
    launch_kernel(bconv_kernel<kTile, kConstMult, false>, grid, threads, smem, s, b, in, out, n);
  THEO_CUDA_CHECK_LAUNCH();
}

template <int kTile>
void launch_tile(const BConvDevice& b, u32 threads, const u32* in, u32* out, u32 n, bool const_mult,
                 cudaStream_t s) {
  const dim3 grid((n + threads - 1) / threads, (b.dst_size + kTile - 1) / kTile);
  const std::size_t src4 = (b.src_size + 3) & ~3u;
  const std::size_t smem = static_cast<std::size_t>(kTile) * src4 * sizeof(i32) +
                           (b.exact ? src4 * sizeof(double) : 0) +
                           b.src_size * (sizeof(Modulus) + sizeof(u32));
  if (const_mult)
    launch_mode<kTile, true>(b, grid, threads, smem, in, out, n, s);
  else
    launch_mode<kTile, false>(b, grid, threads, smem, in, out, n, s);
}

}  // namespace

void launch_bconv(const BConvDevice& b, const BConvConfig& cfg, const u32* in, u32* out, u32 n,
                  bool const_mult, cudaStream_t s) {
  if (b.dst_size == 0) return;
  if (cfg.small_rows > 0 && b.src_size <= kBConvSmallMaxSrc) {
    if (const_mult)
      dispatch_small<true>(b, cfg.small_rows, in, out, n, s);
    else
      dispatch_small<false>(b, cfg.small_rows, in, out, n, s);
    return;
  }
  if (cfg.tensor && bconv_tensor_applies(b, n)) {
    launch_bconv_tensor(b, in, out, n, const_mult, s);
    return;
  }
  if (cfg.blocked && launch_blocked(b, cfg.threads, in, out, n, const_mult, s)) return;
  const u32 threads = std::clamp(cfg.threads, 32u, 1024u);
  // dst_tile 0 = auto (H200 sweep, N = 2^16: 16 wins from 32 outputs up, 8 below).
  const u32 tile = cfg.dst_tile ? cfg.dst_tile : (b.dst_size >= 32 ? 16u : 8u);
  if (tile >= 16 && b.dst_size >= 16)
    launch_tile<16>(b, threads, in, out, n, const_mult, s);
  else if (tile >= 8)
    launch_tile<8>(b, threads, in, out, n, const_mult, s);
  else
    launch_tile<4>(b, threads, in, out, n, const_mult, s);
}

void launch_bconv_matmul_batch(std::span<const BConvDevice> bs, std::span<const u32* const> ins,
                               std::span<u32* const> outs, const BConvConfig& cfg, u32 n,
                               cudaStream_t s) {
  bool tensor = bs.size() > 1 && cfg.tensor && cfg.small_rows == 0;
  for (const BConvDevice& b : bs)
    tensor = tensor && b.exact == bs[0].exact && bconv_tensor_applies(b, n);
  if (tensor) {
    launch_bconv_tensor_batch(bs, ins, outs, n, s);
    return;
  }
  // Where the batch kernel does not apply (one conversion, the tile or small-source kernels
  // chosen, mixed exactness, tables too large), the conversions run one by one.
  bool batch = bs.size() > 1 && cfg.blocked && cfg.small_rows == 0;
  for (const BConvDevice& b : bs)
    batch = batch && b.exact == bs[0].exact && b.dst_size > 0;
  const auto [t, smem] = batch ? blocked_shape(bs, cfg.threads, n) : std::pair<u32, std::size_t>{};
  if (t == 0) {
    for (std::size_t k = 0; k < bs.size(); ++k)
      launch_bconv(bs[k], cfg, ins[k], outs[k], n, false, s);
    return;
  }
  for (std::size_t k0 = 0; k0 < bs.size(); k0 += kMaxBConvBatch) {
    const u32 count = static_cast<u32>(std::min<std::size_t>(kMaxBConvBatch, bs.size() - k0));
    BConvBatchArgs a{};
    bool fold = false;
    for (u32 k = 0; k < count; ++k) {
      a.b[k] = bs[k0 + k];
      a.in[k] = ins[k0 + k];
      a.out[k] = outs[k0 + k];
      fold = fold || a.b[k].fold_steps > 0;
    }
    // fold_steps = 0 never matches the fold counter, so the folding kernel serves such rows too.
    if (bs[0].exact)
      fold ? launch_batch_mode<true, true>(a, count, t, smem, n, s)
           : launch_batch_mode<true, false>(a, count, t, smem, n, s);
    else
      fold ? launch_batch_mode<false, true>(a, count, t, smem, n, s)
           : launch_batch_mode<false, false>(a, count, t, smem, n, s);
  }
}

}  // namespace theo::cuda
