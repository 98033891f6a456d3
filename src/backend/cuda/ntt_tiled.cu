// The NTT's shared-memory tile kernels (ntt.cu says how a transform is split into phases): each
// phase holds a tile of whole columns or rows in shared memory and runs its stages there in passes
// of kRadixLog stages held in registers. Any N and split (NttConfig::log_n1, tile_log, radix_log).

#include <algorithm>
#include <cstddef>

#include "backend/cuda/check.h"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/ntt_common.cuh"

namespace theo::cuda {
namespace {

using namespace ntt_detail;

// One pass of R consecutive stages [s0, s0 + R) held in registers: each thread owns the 2^R words
// of a sequence that these stages mix (stride d_last = L / 2^(s0 + R)), so a tile needs one barrier
// per R stages instead of one per stage. Sequences of length L = 2^l_log; kRows: sequence `seq` is
// a contiguous row (sm[seq << l_log | p]), else a column (sm[p << log_seqs | seq]). The twiddle of
// local stage s at position p is tw[2^(sbase + s) + ((row0 + seq) << s) + p / 2^(l_log - s)] for
// rows and tw[2^s + p / 2^(l_log - s)] for columns (the global Cooley-Tukey group index).
template <bool kInverse, int R, bool kRows>
__device__ __forceinline__ void radix_pass(u32* sm, const i32* tw, const Modulus& m, u32 l_log,
                                           u32 s0, u32 log_seqs, u32 sbase, u32 row0) {
  constexpr u32 K = 1u << R;
  const u32 dl_log = l_log - s0 - R;
  const u32 items = 1u << (l_log - R + log_seqs);
  for (u32 it = threadIdx.x; it < items; it += blockDim.x) {
    u32 seq, lo, hi;
    if constexpr (kRows) {
      lo = it & ((1u << dl_log) - 1);
      const u32 rest = it >> dl_log;
      hi = rest & ((1u << s0) - 1);
      seq = rest >> s0;
    } else {
      seq = it & ((1u << log_seqs) - 1);
      const u32 rest = it >> log_seqs;
      lo = rest & ((1u << dl_log) - 1);
      hi = rest >> dl_log;
    }
    const u32 base = (hi << (l_log - s0)) | lo;
    const u32 rowoff = kRows ? row0 + seq : 0u;
    u32 x[K];
    // Contiguous words (the last row pass): 16-byte shared loads cut the bank conflicts of the
    // stride-K pattern by 4x.
    const bool vec = kRows && K >= 4 && dl_log == 0;
    if (vec) {
#pragma unroll
      for (u32 k = 0; k < K; k += 4) {
        const uint4 v = *reinterpret_cast<const uint4*>(sm + ((seq << l_log) | (base + k)));
        x[k] = v.x, x[k + 1] = v.y, x[k + 2] = v.z, x[k + 3] = v.w;
      }
    } else {
#pragma unroll
      for (u32 k = 0; k < K; ++k) {
        const u32 p = base + (k << dl_log);
        x[k] = sm[kRows ? (seq << l_log) | p : (p << log_seqs) | seq];
      }
    }
#pragma unroll
    for (int jj = 0; jj < R; ++jj) {
      const int j = kInverse ? R - 1 - jj : jj;
      const u32 s = s0 + static_cast<u32>(j);
      const u32 half = K >> (j + 1);
      // The thread's words form 2^j groups at this stage; one twiddle load per group.
#pragma unroll
      for (u32 gi = 0; gi < (1u << j); ++gi) {
        const u32 k0 = gi * 2 * half;
        const u32 p = base + (k0 << dl_log);
        const i32 w = tw[(1u << (sbase + s)) + (rowoff << s) + (p >> (l_log - s))];
#pragma unroll
        for (u32 k = k0; k < k0 + half; ++k) {
          if constexpr (kInverse) {
            const u32 a = x[k], b = x[k + half];
            x[k] = add_mod(a, b, m.q);
            x[k + half] = mont_mul_c(sub_mod(a, b, m.q), w, m);
          } else {
            const u32 a = x[k];
            const u32 v = mont_mul_c(x[k + half], w, m);
            x[k] = add_mod(a, v, m.q);
            x[k + half] = sub_mod(a, v, m.q);
          }
        }
      }
    }
    if (vec) {
#pragma unroll
      for (u32 k = 0; k < K; k += 4)
        *reinterpret_cast<uint4*>(sm + ((seq << l_log) | (base + k))) =
            make_uint4(x[k], x[k + 1], x[k + 2], x[k + 3]);
    } else {
#pragma unroll
      for (u32 k = 0; k < K; ++k) {
        const u32 p = base + (k << dl_log);
        sm[kRows ? (seq << l_log) | p : (p << log_seqs) | seq] = x[k];
      }
    }
  }
}

template <bool kInverse, bool kRows, int kRadixLog>
__device__ __forceinline__ void dispatch_pass(u32 r, u32* sm, const i32* tw, const Modulus& m,
                                              u32 l_log, u32 s0, u32 log_seqs, u32 sbase,
                                              u32 row0) {
  switch (r) {
    case 1:
      radix_pass<kInverse, 1, kRows>(sm, tw, m, l_log, s0, log_seqs, sbase, row0);
      break;
    case 2:
      radix_pass<kInverse, 2, kRows>(sm, tw, m, l_log, s0, log_seqs, sbase, row0);
      break;
    case 3:
      radix_pass<kInverse, 3, kRows>(sm, tw, m, l_log, s0, log_seqs, sbase, row0);
      break;
    default:
      radix_pass<kInverse, kRadixLog, kRows>(sm, tw, m, l_log, s0, log_seqs, sbase, row0);
  }
  __syncthreads();
}

// All l_log stages of the sequences in the tile, kRadixLog stages per pass (the last pass takes the
// remainder); the inverse runs the same passes in reverse order.
template <bool kInverse, bool kRows, int kRadixLog>
__device__ __forceinline__ void tile_stages(u32* sm, const i32* tw, const Modulus& m, u32 l_log,
                                            u32 log_seqs, u32 sbase, u32 row0) {
  constexpr u32 kR = kRadixLog;
  const u32 last = ((l_log - 1) / kR) * kR;
  for (u32 i = 0; i <= last; i += kR) {
    const u32 s0 = kInverse ? last - i : i;
    dispatch_pass<kInverse, kRows, kRadixLog>(min(kR, l_log - s0), sm, tw, m, l_log, s0, log_seqs,
                                              sbase, row0);
  }
}

// Forward phase 1 (with the optional pre-multiplier; first phase: reads src, may copy it) or
// inverse phase 2 (with the post-multiplier, which always carries N^-1; in place). Radix 8 passes
// fit in 40 registers (launch bounds 512 x 3: six 256-thread blocks per SM, so a 48-limb N = 2^16
// transform is one wave on 132 SMs); radix 16 passes need fewer barriers but ~56.
template <bool kInverse, bool kConst, bool kCopyInput, int kRadixLog>
__global__ void __launch_bounds__(512, kRadixLog == 3 ? 3 : 2)
    ntt_columns(const __grid_constant__ RingTables t, const __grid_constant__ NttBatch b,
                u32 log_n1, u32 log_c) {
  pdl_entry();
  static_assert(!(kInverse && kCopyInput), "the inverse column phase is the last one");
  extern __shared__ u32 sm[];
  const Item it = item_of(t, b, kInverse);
  const u32 log_n2 = t.log_n - log_n1;
  const u32 tile = 1u << (log_n1 + log_c);
  const u32 cmask = (1u << log_c) - 1;
  const u32 c0 = blockIdx.x << log_c;
  const i32 c = static_cast<i32>(it.c);
  const u32* in = kInverse ? it.data : it.src;
  // Columns are C = 2^log_c contiguous words per row (launch_ntt keeps log_c >= 2): 16-byte loads,
  // kLoadBatch of them in flight before the batch's first store.
  const auto at = [&](u32 e) {
    return (static_cast<std::size_t>(e >> log_c) << log_n2) + c0 + (e & cmask);
  };
  const u32 step = blockDim.x * 4;
  for (u32 e0 = threadIdx.x * 4; e0 < tile; e0 += step * kLoadBatch) {
    uint4 v[kLoadBatch];
    load_batch(v, e0, step, tile, [&](u32 e) { return in + at(e); });
#pragma unroll
    for (u32 j = 0; j < kLoadBatch; ++j) {
      const u32 e = e0 + j * step;
      if (e >= tile) break;
      if constexpr (kCopyInput) *reinterpret_cast<uint4*>(it.input_copy + at(e)) = v[j];
      if constexpr (!kInverse && kConst) {
        v[j].x = mont_mul_c(v[j].x, c, it.m), v[j].y = mont_mul_c(v[j].y, c, it.m);
        v[j].z = mont_mul_c(v[j].z, c, it.m), v[j].w = mont_mul_c(v[j].w, c, it.m);
      }
      *reinterpret_cast<uint4*>(sm + e) = v[j];
    }
  }
  __syncthreads();
  tile_stages<kInverse, false, kRadixLog>(sm, it.tw, it.m, log_n1, log_c, 0, 0);
#pragma unroll 4
  for (u32 e = threadIdx.x * 4; e < tile; e += blockDim.x * 4) {
    uint4 v = *reinterpret_cast<const uint4*>(sm + e);
    if constexpr (kInverse && kConst) {
      v.x = mont_mul_c(v.x, c, it.m), v.y = mont_mul_c(v.y, c, it.m);
      v.z = mont_mul_c(v.z, c, it.m), v.w = mont_mul_c(v.w, c, it.m);
    }
    *reinterpret_cast<uint4*>(it.data + at(e)) = v;
  }
}

// Inverse phase 1 (reads src; kFused: copies it) or forward phase 2 (in place; kFused: the
// sub_mul epilogue on the limbs that have one).
template <bool kInverse, bool kFused, int kRadixLog>
__global__ void __launch_bounds__(512, kRadixLog == 3 ? 3 : 2)
    ntt_rows(const __grid_constant__ RingTables t, const __grid_constant__ NttBatch b, u32 log_n1,
             u32 log_r) {
  pdl_entry();
  extern __shared__ u32 sm[];
  const Item it = item_of(t, b, kInverse);
  const u32 log_n2 = t.log_n - log_n1;
  const u32 tile = 1u << (log_r + log_n2);
  const u32 row0 = blockIdx.x << log_r;
  const std::size_t base = static_cast<std::size_t>(row0) << log_n2;
  const u32* in = (kInverse ? it.src : it.data) + base;
  // Rows are contiguous: 16-byte loads (tile >= 4 words, base 16-byte aligned when data is),
  // kLoadBatch of them in flight before the batch's first store.
  const u32 step = blockDim.x * 4;
  for (u32 e0 = threadIdx.x * 4; e0 < tile; e0 += step * kLoadBatch) {
    uint4 v[kLoadBatch];
    load_batch(v, e0, step, tile, [&](u32 e) { return in + e; });
#pragma unroll
    for (u32 j = 0; j < kLoadBatch; ++j) {
      const u32 e = e0 + j * step;
      if (e >= tile) break;
      if constexpr (kInverse && kFused) *reinterpret_cast<uint4*>(it.input_copy + base + e) = v[j];
      *reinterpret_cast<uint4*>(sm + e) = v[j];
    }
  }
  __syncthreads();
  tile_stages<kInverse, true, kRadixLog>(sm, it.tw, it.m, log_n2, log_r, log_n1, row0);
  const bool epilogue = !kInverse && kFused && it.sub != nullptr;
  for (u32 e0 = threadIdx.x * 4; e0 < tile; e0 += step * kLoadBatch) {
    uint4 a[kLoadBatch];
    if (epilogue) load_batch(a, e0, step, tile, [&](u32 e) { return it.sub + base + e; });
#pragma unroll
    for (u32 j = 0; j < kLoadBatch; ++j) {
      const u32 e = e0 + j * step;
      if (e >= tile) break;
      uint4 v = *reinterpret_cast<const uint4*>(sm + e);
      if (epilogue) v = sub_mul4(a[j], v, static_cast<i32>(it.s), it.m);
      *reinterpret_cast<uint4*>(it.data + base + e) = v;
    }
  }
}

template <int kR>
void run_phases(const RingTables& t, const NttBatch& b, LaunchFlags f, bool inverse, u32 log_n1,
                u32 log_c, u32 log_r, dim3 grid_c, dim3 grid_r, u32 threads, std::size_t smem,
                cudaStream_t s) {
  if (!inverse) {
    with_flag(f.consts, [&](auto kc) {
      with_flag(f.input_copy, [&](auto ke) {
        launch_kernel(ntt_columns<false, decltype(kc)::value, decltype(ke)::value, kR>, grid_c,
                      threads, smem, s, t, b, log_n1, log_c);
      });
    });
    THEO_CUDA_CHECK_LAUNCH();
    with_flag(f.epilogue, [&](auto kf) {
      launch_kernel(ntt_rows<false, decltype(kf)::value, kR>, grid_r, threads, smem, s, t, b,
                    log_n1, log_r);
    });
    THEO_CUDA_CHECK_LAUNCH();
  } else {
    with_flag(f.input_copy, [&](auto kf) {
      launch_kernel(ntt_rows<true, decltype(kf)::value, kR>, grid_r, threads, smem, s, t, b, log_n1,
                    log_r);
    });
    THEO_CUDA_CHECK_LAUNCH();
    launch_kernel(ntt_columns<true, true, false, kR>, grid_c, threads, smem, s, t, b, log_n1,
                  log_c);
    THEO_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void launch_ntt_tiled(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                      LaunchFlags f, bool inverse, cudaStream_t s) {
  const u32 log_n = t.log_n;
  const u32 log_n1 = cfg.log_n1 ? std::min(cfg.log_n1, log_n - 2) : log_n / 2;
  const u32 log_n2 = log_n - log_n1;
  // The tile holds at least 4 whole columns (16-byte row pieces) and 4 whole rows, and at most the
  // polynomial.
  const u32 tile_log = std::min(log_n, std::max({cfg.tile_log, log_n1 + 2, log_n2 + 2}));
  const u32 log_c = tile_log - log_n1;
  const u32 log_r = tile_log - log_n2;
  const u32 threads = std::max(32u, std::min({cfg.threads, 512u, 1u << (tile_log - 1)}));
  const std::size_t smem = (std::size_t{1} << tile_log) * sizeof(u32);
  const dim3 grid_c(1u << (log_n2 - log_c), limbs);
  const dim3 grid_r(1u << (log_n1 - log_r), limbs);
  if (cfg.radix_log == 4)
    run_phases<4>(t, b, f, inverse, log_n1, log_c, log_r, grid_c, grid_r, threads, smem, s);
  else
    run_phases<3>(t, b, f, inverse, log_n1, log_c, log_r, grid_c, grid_r, threads, smem, s);
}

}  // namespace theo::cuda
