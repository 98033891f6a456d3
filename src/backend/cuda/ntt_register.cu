// The NTT's register-resident kernels for N = 2^(4e) (2^12 and 2^16; ntt.cu says how a transform
// is split into phases): each phase's 2e stages in two register passes with one exchange through
// shared memory, Shoup twiddles, row twiddles made on the fly, and a persistent form of the row
// kernel.

#include <algorithm>
#include <type_traits>
#include <utility>

#include "backend/cuda/check.h"
#include "backend/cuda/launch.cuh"
#include "backend/cuda/ntt_common.cuh"
#include "theo/errors.h"

namespace theo::cuda {
namespace {

using namespace ntt_detail;

__device__ __forceinline__ const uint2* shoup_tw(const RingTables& t, u32 id, bool inverse) {
  return (inverse ? t.inv_shoup : t.fwd_shoup) + (static_cast<std::size_t>(id) << t.log_n);
}

// ---- register-resident phases (N = 2^(4e)) ---------------------------------------------------
// Each phase has L = 2e stages over sequences of 2^L words, split into two register passes of e
// stages. A sequence is served by T = 2^e threads holding E = 2^e words each: pass A holds
// positions p = t + T k (stages 0..e-1 pair k with k + E / 2^(j+1)), pass B positions p = E t + k
// (stages e..2e-1, same pairing). A phase is: load pattern 1 from global straight into registers,
// its e stages, one exchange through shared memory (one barrier), pattern 2's e stages, store to
// global. The forward phase is A then B, the inverse B then A with Gentleman-Sande butterflies.
//
// The twiddle of phase-local stage s = s0 + j for group g is tw[2^(sbase + s) + (row << s) + g]
// with g = (goff << j) + gi: goff = 0 in pass A (the group does not depend on t, so all threads
// read the same words), goff = t in pass B.
// Shoup butterflies on canonical words. a * w - floor(a w' / 2^32) q lies in [0, 2q) for any
// a < 2^32, so the multiply needs no reduced input (the inverse feeds a - b + q directly). The
// [0, 2q) -> [0, q) corrections are min(x, x - q): when x < q the difference wraps above 2^31 > x
// (q < 2^31), so one IADD and one IMNMX replace a compare and a select. Inverse stage outputs are
// canonical; forward ones lie in [0, 2q) (also between the two phases, through global memory) and
// the last forward phase makes them canonical before its store. The transform's result is the
// unique canonical one, so the words do not depend on the split (and equal the CPU's).
__device__ __forceinline__ u32 shoup_lazy(u32 a, uint2 w, u32 q) {
  return a * w.x - __umulhi(a, w.y) * q;
}
__device__ __forceinline__ u32 reduce2(u32 x, u32 q) {
  return min(x, x - q);
}

// A stage's 2^j twiddles of one thread are contiguous and aligned to 2^j entries (every term of
// the index is a multiple of 2^j), so the rows kernels' words come in 16-byte loads: 5 load
// instructions for the 15 twiddles of a 4-stage pass instead of 15.
// The columns kernels' Shoup pairs are warp-uniform (broadcast) loads; 16-byte loads of them
// measured no faster and cost the inverse kernel a spill.
template <int kCount>
__device__ __forceinline__ void load_tw(const uint2* p, u32, uint2 (&w)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i)
    w[i] = __ldg(p + i);
}
// w from w' = floor(w 2^32 / q), for a twiddle w in [1, q): q is odd and w < q, so w 2^32 / q
// is not an integer and w 2^32 - q < w' q < w 2^32, hence (w - 1) 2^32 < w' q < w 2^32 (q < 2^32):
// the high word of w' q is exactly w - 1. One multiply-high with an addend, where testing the low
// word for zero cost two more instructions per twiddle (~10% of the row kernels). Every table
// word is a power of a root of unity, never 0 (checked where the tables are built).
__device__ __forceinline__ uint2 shoup_pair(u32 wp, u32 q) {
  return uint2{__umulhi(wp, q) + 1u, wp};
}
template <int kCount>
__device__ __forceinline__ void load_tw(const u32* p, u32 q, uint2 (&w)[kCount]) {
  if constexpr (kCount == 1) {
    w[0] = shoup_pair(__ldg(p), q);
  } else if constexpr (kCount == 2) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    w[0] = shoup_pair(v.x, q);
    w[1] = shoup_pair(v.y, q);
  } else {
#pragma unroll
    for (int i = 0; i < kCount; i += 4) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p + i));
      w[i] = shoup_pair(v.x, q);
      w[i + 1] = shoup_pair(v.y, q);
      w[i + 2] = shoup_pair(v.z, q);
      w[i + 3] = shoup_pair(v.w, q);
    }
  }
}

// Calls stage(std::integral_constant<int, j>{}) for the kE stages of a register pass, j = 0, 1, ...
// forward and in reverse order for the inverse; compile-time stage indices give every loop of a
// stage a constant trip count (with j a runtime loop variable NVVM unrolls the inner loops before
// the outer one and leaves partially unrolled loops over a local-memory x[] for ptxas).
template <int kE, bool kInverse, typename Stage>
__device__ __forceinline__ void for_each_stage(Stage&& stage) {
  [&]<int... J>(std::integer_sequence<int, J...>) {
    if constexpr (kInverse)
      (stage(std::integral_constant<int, kE - 1 - J>{}), ...);
    else
      (stage(std::integral_constant<int, J>{}), ...);
  }
  (std::make_integer_sequence<int, kE>{});
}

// The butterflies of stage j over a thread's 2^kE words; mul(d, gi) is d times group gi's twiddle,
// in [0, q), for any d in [0, 2q) (forward: the word b; inverse: a - b + q).
template <int kE, bool kInverse, int j, typename Mul>
__device__ __forceinline__ void butterflies(u32 (&x)[1 << kE], u32 q, Mul&& mul) {
  constexpr u32 half = (1u << kE) >> (j + 1);
#pragma unroll
  for (u32 gi = 0; gi < (1u << j); ++gi) {
#pragma unroll
    for (u32 h = 0; h < half; ++h) {
      const u32 k = gi * 2 * half + h;
      const u32 a = x[k], b = x[k + half];
      if constexpr (kInverse) {
        x[k] = reduce2(a + b, q);
        x[k + half] = mul(a - b + q, gi);
      } else {
        // Forward words lie in [0, 2q) between stages (2q < 2^32 for every q < 2^31): a is
        // brought to [0, q), b may be any such word, and both outputs are left in [0, 2q), one
        // correction fewer per butterfly than canonical outputs.
        const u32 a1 = reduce2(a, q);
        const u32 v = mul(b, gi);
        x[k] = a1 + v;
        x[k + half] = a1 - v + q;
      }
    }
  }
}

// One stage with Shoup twiddles from a table (pairs, or w' alone; load_tw).
template <int kE, bool kInverse, int j, typename Tw>
__device__ __forceinline__ void reg_stage(u32 (&x)[1 << kE], const Tw* tws, u32 q) {
  uint2 ws[1 << j];
  load_tw(tws, q, ws);
  butterflies<kE, kInverse, j>(x, q,
                               [&](u32 d, u32 gi) { return reduce2(shoup_lazy(d, ws[gi], q), q); });
}

template <int kE, bool kInverse, typename Tw>
__device__ __forceinline__ void reg_stages(u32 (&x)[1 << kE], const Tw* tw, u32 q, u32 sbase,
                                           u32 s0, u32 row, u32 goff) {
  for_each_stage<kE, kInverse>([&]<int j>(std::integral_constant<int, j>) {
    const u32 s = s0 + static_cast<u32>(j);
    reg_stage<kE, kInverse, j>(x, tw + (1u << (sbase + s)) + (row << s) + (goff << j), q);
  });
}

// ---- row twiddles made on the fly (Cheddar §4.2, OT) -------------------------------------------
// The row phase's second register pass, stage j < e, reads tw[2^(3e + j) + (r << (e + j)) + g] for
// row r and group g < 2^(e + j). Bit reversal over log N = 4e bits adds over disjoint bit ranges,
// so that twiddle is psi^brev(2^(3e + j) + g) x psi^(brev_2e(r) 2^(e - j)): row 0's twiddle, shared
// by every row and limb of the prime (2^(e + j) words that stay in L1), times a factor of the row
// and stage (RingTables::fwd_rowf / inv_rowf). One signed Montgomery multiply forms the twiddle in
// Montgomery form, and the butterfly multiplies by Montgomery (no Shoup companion to rebuild), so
// such a stage reads row 0's words instead of its share of the table's N words per limb (which a
// key switch's key stream evicts, so they mostly come from DRAM).
template <int kE, bool kInverse, int j>
__device__ __forceinline__ void reg_stage_otf(u32 (&x)[1 << kE], const i32* tws0, i32 f,
                                              const Modulus& m) {
  constexpr u32 kGroups = 1u << j;
  i32 w[kGroups];
  if constexpr (kGroups >= 4) {
#pragma unroll
    for (u32 i = 0; i < kGroups; i += 4) {
      const int4 v = __ldg(reinterpret_cast<const int4*>(tws0 + i));
      w[i] = v.x, w[i + 1] = v.y, w[i + 2] = v.z, w[i + 3] = v.w;
    }
  } else if constexpr (kGroups == 2) {
    const int2 v = __ldg(reinterpret_cast<const int2*>(tws0));
    w[0] = v.x, w[1] = v.y;
  } else {
    w[0] = __ldg(tws0);
  }
  // Both factors centered: |product| <= q^2 / 4, and each twiddle lies in (-q, q).
#pragma unroll
  for (u32 gi = 0; gi < kGroups; ++gi)
    w[gi] = smr_mul(w[gi], f, m);
  const u32 q = m.q;
  butterflies<kE, kInverse, j>(x, q, [&](u32 d, u32 gi) {
    // The multiplicand in (-q, q) (|d w| < q^2 < q 2^31): the inverse's a - b + q less q is the
    // signed a - b; the forward's b is brought to [0, q).
    const i32 e = kInverse ? static_cast<i32>(d - q) : static_cast<i32>(reduce2(d, q));
    return canon(smr_mul(e, w[gi], m), q);
  });
}

// The second pass (stages e..2e-1 of the row phase) of thread th in row `row`: its last kOtf
// stages (those with the most twiddles: stage j has 2^j per thread) make their twiddles on the fly
// from row 0's (tw0) and the row's factors f[j], the others read w' from the table (tw).
template <int kE, bool kInverse, int kOtf>
__device__ __forceinline__ void reg_stages_b(u32 (&x)[1 << kE], const u32* tw, const i32* tw0,
                                             const i32* f, const Modulus& m, u32 sbase, u32 row,
                                             u32 th) {
  for_each_stage<kE, kInverse>([&]<int j>(std::integral_constant<int, j>) {
    const u32 s = kE + j;
    if constexpr (j >= kE - kOtf)
      reg_stage_otf<kE, kInverse, j>(x, tw0 + (1u << (sbase + s)) + (th << j), __ldg(f + j), m);
    else
      reg_stage<kE, kInverse, j>(x, tw + (1u << (sbase + s)) + (row << s) + (th << j), m.q);
  });
}

// The exchange between a column kernel's two register passes: the thread's words x[k], at
// positions from(k), go through shared memory (sm[p * 32 + lane]: 32 columns per position) and
// come back from positions to(k).
template <u32 E, typename From, typename To>
__device__ __forceinline__ void exchange_columns(u32 (&x)[E], u32* sm, u32 lane, From&& from,
                                                 To&& to) {
#pragma unroll
  for (u32 k = 0; k < E; ++k)
    sm[from(k) * 32 + lane] = x[k];
  __syncthreads();
#pragma unroll
  for (u32 k = 0; k < E; ++k)
    x[k] = sm[to(k) * 32 + lane];
}

// Columns: a warp is 32 adjacent columns at one position p, so every global access is a full
// 128-byte line and every shared access (sm[p * 32 + lane]) is conflict-free. 32 T threads.
// Launch bounds: kMinBlocks blocks per SM. At N = 2^16 the default is three 512-thread blocks
// (40 registers, no spills with the Shoup butterflies), so 48 limbs (384 blocks) are one wave on
// 132 SMs instead of 1.45; launches that fit one wave of two blocks per SM may take the
// 64-register build (NttConfig::cols_wide).
// Forward: the first phase (reads src; kCopyInput: copies it); inverse: the last one (in place).
template <int kE, bool kInverse, bool kConst, bool kCopyInput, int kMinBlocks>
__global__ void __launch_bounds__(32 << kE, kMinBlocks)
    ntt_cols_reg(const __grid_constant__ RingTables t, const __grid_constant__ NttBatch b) {
  pdl_entry();
  static_assert(!(kInverse && kCopyInput), "the inverse column phase is the last one");
  constexpr u32 E = 1u << kE, L = 2 * kE;
  __shared__ u32 sm[32u << L];
  const Item it = item_of(t, b, kInverse);
  const u32 lane = threadIdx.x & 31, th = threadIdx.x >> 5;
  // N = 2^(2L) (run_reg's precondition): a compile-time row stride lets every column access be
  // one base address plus an immediate offset.
  constexpr u32 log_n2 = L;
  const std::size_t col0 = blockIdx.x * 32 + lane;
  u32* col = it.data + col0;
  const i32 c = static_cast<i32>(it.c);
  const uint2* tw = shoup_tw(t, it.id, kInverse);
  u32 x[E];
  // Pattern A: p = th + E k; pattern B: p = E th + k (T = E).
  const auto pa = [&](u32 k) { return th + E * k; };
  const auto pb = [&](u32 k) { return E * th + k; };
  if constexpr (!kInverse) {
    const u32* in = it.src + col0;
    // Every load before the first store of the input copy (see kLoadBatch).
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = in[static_cast<std::size_t>(pa(k)) << log_n2];
#pragma unroll
    for (u32 k = 0; k < E; ++k) {
      if constexpr (kCopyInput)
        it.input_copy[col0 + (static_cast<std::size_t>(pa(k)) << log_n2)] = x[k];
      if constexpr (kConst) x[k] = mont_mul_c(x[k], c, it.m);
    }
    reg_stages<kE, false>(x, tw, it.m.q, 0, 0, 0, 0);
    exchange_columns(x, sm, lane, pa, pb);
    reg_stages<kE, false>(x, tw, it.m.q, 0, kE, 0, th);
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      col[static_cast<std::size_t>(pb(k)) << log_n2] = x[k];
  } else {
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = col[static_cast<std::size_t>(pb(k)) << log_n2];
    reg_stages<kE, true>(x, tw, it.m.q, 0, kE, 0, th);
    exchange_columns(x, sm, lane, pb, pa);
    reg_stages<kE, true>(x, tw, it.m.q, 0, 0, 0, 0);
#pragma unroll
    for (u32 k = 0; k < E; ++k) {
      if constexpr (kConst) x[k] = mont_mul_c(x[k], c, it.m);
      col[static_cast<std::size_t>(pa(k)) << log_n2] = x[k];
    }
  }
}

// Rows: 256 threads = 256 / E rows of 2^L contiguous words. Shared index r (2^L + E) + p + p / E:
// the pattern-A store (p = t + E k) and the pattern-B load (p = E t + k) are a per-row E x E
// transpose, and the padding makes both conflict-free for the 32 / E rows a warp touches. A
// row's E threads lie in one warp, so the exchanges need __syncwarp only (no block barrier).
// Inverse: the first phase (reads src; kFused: copies it); forward: the last one (in place;
// kFused: the sub_mul epilogue on the limbs that have one).
// kOtf: how many of the second pass's stages make their twiddles on the fly (reg_stages_b).
//
// A tile (a block's 256 / E rows) is its loads (rows_load) and then the rest (rows_finish), so
// the persistent form can issue the next tile's loads before this tile's transform.

// The words thread th of row `row` transforms first: forward pattern A from data, inverse
// pattern B from src (16-byte loads).
template <int kE, bool kInverse>
__device__ __forceinline__ void rows_load(const Item& it, u32 row, u32 th, u32 (&x)[1u << kE]) {
  constexpr u32 E = 1u << kE, L = 2 * kE;
  const std::size_t row_off = static_cast<std::size_t>(row) << L;
  if constexpr (!kInverse) {
    const u32* rp = it.data + row_off;
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = rp[th + E * k];
  } else {
    const u32* in = it.src + row_off + E * th;
#pragma unroll
    for (u32 k = 0; k < E; k += 4) {
      const uint4 v = *reinterpret_cast<const uint4*>(in + k);
      x[k] = v.x, x[k + 1] = v.y, x[k + 2] = v.z, x[k + 3] = v.w;
    }
  }
}

// Everything after rows_load: the input copy, both register passes with the exchange through the
// row's shared words srow, and the stores (with the epilogue).
template <int kE, bool kInverse, bool kFused, int kOtf>
__device__ __forceinline__ void rows_finish(const RingTables& t, const Item& it, u32 row, u32 th,
                                            u32* srow, u32 (&x)[1u << kE]) {
  constexpr u32 E = 1u << kE, L = 2 * kE;
  constexpr u32 n1 = L;  // N = 2^(2L) (run_reg's precondition)
  const std::size_t row_off = static_cast<std::size_t>(row) << L;
  u32* rp = it.data + row_off;
  const u32* tw = (kInverse ? t.inv_wp : t.fwd_wp) + (static_cast<std::size_t>(it.id) << (2 * L));
  const i32* tw0 = (kInverse ? t.inv : t.fwd) + (static_cast<std::size_t>(it.id) << (2 * L));
  const i32* rowf = (kInverse ? t.inv_rowf : t.fwd_rowf) +
                    ((static_cast<std::size_t>(it.id) << L) + row) * RingTables::kRowFactors;
  const auto sidx = [](u32 p) { return p + (p >> kE); };
  const auto pass_b = [&]() {
    reg_stages_b<kE, kInverse, kOtf>(x, tw, tw0, rowf, it.m, n1, row, th);
  };
  if constexpr (!kInverse) {
    reg_stages<kE, false>(x, tw, it.m.q, n1, 0, row, 0);
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      srow[sidx(th + E * k)] = x[k];
    __syncwarp();
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = srow[sidx(E * th + k)];
    pass_b();
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = reduce2(x[k], it.m.q);  // [0, 2q) -> canonical
    if (kFused && it.sub != nullptr) {
      // Every operand load before the first store (see kLoadBatch).
      const u32* ap = it.sub + row_off + E * th;
      const i32 sc = static_cast<i32>(it.s);
      uint4 a[E / 4];
#pragma unroll
      for (u32 k = 0; k < E; k += 4)
        a[k / 4] = *reinterpret_cast<const uint4*>(ap + k);
#pragma unroll
      for (u32 k = 0; k < E; k += 4)
        *reinterpret_cast<uint4*>(rp + E * th + k) =
            sub_mul4(a[k / 4], make_uint4(x[k], x[k + 1], x[k + 2], x[k + 3]), sc, it.m);
    } else {
#pragma unroll
      for (u32 k = 0; k < E; k += 4)
        *reinterpret_cast<uint4*>(rp + E * th + k) = make_uint4(x[k], x[k + 1], x[k + 2], x[k + 3]);
    }
  } else {
    if constexpr (kFused) {
#pragma unroll
      for (u32 k = 0; k < E; k += 4)
        *reinterpret_cast<uint4*>(it.input_copy + row_off + E * th + k) =
            make_uint4(x[k], x[k + 1], x[k + 2], x[k + 3]);
    }
    pass_b();
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      srow[sidx(E * th + k)] = x[k];
    __syncwarp();
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = srow[sidx(th + E * k)];
    reg_stages<kE, true>(x, tw, it.m.q, n1, 0, row, 0);
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      rp[th + E * k] = x[k];
  }
}

// One tile per block: grid (2^L / rows per block, limbs). Six blocks per SM (40 registers): 48
// limbs at N = 2^16 (768 blocks) are one wave.
template <int kE, bool kInverse, bool kFused, int kOtf>
__global__ void __launch_bounds__(256, 6)
    ntt_rows_reg(const __grid_constant__ RingTables t, const __grid_constant__ NttBatch b) {
  pdl_entry();
  constexpr u32 E = 1u << kE, L = 2 * kE, kRows = 256 / E, kStride = (1u << L) + E;
  __shared__ u32 sm[kRows * kStride];
  const Item it = item_of(t, b, kInverse);
  const u32 th = threadIdx.x & (E - 1), r = threadIdx.x >> kE;
  const u32 row = blockIdx.x * kRows + r;
  u32 x[E];
  rows_load<kE, kInverse>(it, row, th, x);
  rows_finish<kE, kInverse, kFused, kOtf>(t, it, row, th, sm + r * kStride, x);
}

// Persistent form: a 1-D grid of resident blocks, block g taking tiles g, g + G, g + 2G, ... of
// all `tiles` (limb = tile / tiles per limb). Each thread loads the next tile's words into a
// second register set before it transforms this one, so one tile's loads overlap the previous
// tile's arithmetic; with one tile per block every block of a wave loads, then computes, then
// stores in step. It runs at ~80 registers and three blocks per SM: in launches of one or two
// tiles per block that beats the one-tile kernel, in larger ones the latter's occupancy wins
// (launch_rows picks by NttConfig::rows_persistent_tiles).
template <int kE, bool kInverse, bool kFused, int kOtf>
__global__ void __launch_bounds__(256, 3)
    ntt_rows_reg_persistent(const __grid_constant__ RingTables t,
                            const __grid_constant__ NttBatch b, u32 tiles) {
  pdl_entry();
  constexpr u32 E = 1u << kE, L = 2 * kE, kRows = 256 / E, kStride = (1u << L) + E;
  constexpr u32 kTilesPerLimb = (1u << L) / kRows;
  __shared__ u32 sm[kRows * kStride];
  const u32 th = threadIdx.x & (E - 1), r = threadIdx.x >> kE;
  u32 tile = blockIdx.x;
  if (tile >= tiles) return;
  const auto row_of = [&](u32 tl) { return (tl % kTilesPerLimb) * kRows + r; };
  Item it = item_of_limb(t, b, kInverse, tile / kTilesPerLimb);
  u32 row = row_of(tile);
  u32 x[E];
  rows_load<kE, kInverse>(it, row, th, x);
  for (;;) {
    const u32 next = tile + gridDim.x;
    const bool more = next < tiles;
    Item it_next;
    u32 row_next = 0, y[E];
    if (more) {
      it_next = item_of_limb(t, b, kInverse, next / kTilesPerLimb);
      row_next = row_of(next);
      rows_load<kE, kInverse>(it_next, row_next, th, y);
    }
    rows_finish<kE, kInverse, kFused, kOtf>(t, it, row, th, sm + r * kStride, x);
    if (!more) break;
    __syncwarp();  // the row's threads are done reading srow before the next tile writes it
    tile = next;
    it = it_next;
    row = row_next;
#pragma unroll
    for (u32 k = 0; k < E; ++k)
      x[k] = y[k];
  }
}

// Calls f(std::integral_constant<int, min(stages, kE)>{}) for stages in {0, 1, 2, kE}; other
// counts round down to one of these.
template <int kE, typename F>
void with_otf_stages(u32 stages, F&& f) {
  if (stages >= kE)
    f(std::integral_constant<int, kE>{});
  else if (stages >= 2)
    f(std::integral_constant<int, 2>{});
  else if (stages == 1)
    f(std::integral_constant<int, 1>{});
  else
    f(std::integral_constant<int, 0>{});
}

// The device's SM count, read once.
u32 device_sms() {
  static const u32 sms = [] {
    int dev = 0, n = 0;
    THEO_CUDA_CHECK(cudaGetDevice(&dev));
    THEO_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return static_cast<u32>(std::max(n, 1));
  }();
  return sms;
}

// A row launch: the one-tile kernel, or the persistent kernel on at most cfg.rows_resident blocks
// per SM (capped by the occupancy the kernel reaches), never more blocks than tiles, as
// cfg.rows_persistent_tiles picks. The SM count and the occupancy are read from the device
// once per kernel.
template <int kE, bool kInverse, bool kFused, int kOtf>
void launch_rows(const RingTables& t, const NttBatch& b, u32 limbs, const NttConfig& cfg,
                 cudaStream_t s) {
  constexpr u32 L = 2 * kE, kTilesPerLimb = (1u << L) / (256u >> kE);
  const auto kernel = ntt_rows_reg_persistent<kE, kInverse, kFused, kOtf>;
  static const u32 occupancy = [&] {
    int blocks = 0;
    THEO_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, 256, 0));
    return static_cast<u32>(std::max(blocks, 1));
  }();
  const u32 tiles = kTilesPerLimb * limbs;
  const u32 capacity = device_sms() * std::min(cfg.rows_resident, occupancy);
  // Limits in half tiles per block. The forward kernel with the ModDown / rescale epilogue loads a
  // second operand per tile and measured slower in the persistent form at two tiles per block
  // (rescale at 25 limbs, 1.94 tiles: +3.5% on the H100) but faster at 1.05-1.13 (rescale and
  // ModDown at 14 limbs: -6%), so it gets at most 1.5.
  const std::size_t half_tiles = !kInverse && kFused
                                     ? std::min<std::size_t>(2 * cfg.rows_persistent_tiles, 3)
                                     : 2 * std::size_t{cfg.rows_persistent_tiles};
  const bool persistent =
      cfg.rows_resident > 0 && 2 * std::size_t{tiles} <= std::size_t{capacity} * half_tiles;
  if (!persistent) {
    launch_kernel(ntt_rows_reg<kE, kInverse, kFused, kOtf>, dim3(kTilesPerLimb, limbs), 256, 0, s,
                  t, b);
    return;
  }
  launch_kernel(kernel, dim3(std::min(tiles, capacity)), 256, 0, s, t, b, tiles);
}

// A column launch: the default build, or at N = 2^16 the two-blocks-per-SM build (64 registers)
// when cfg.cols_wide and the launch fits one wave of it.
template <int kE, bool kInverse, bool kConst, bool kCopyInput>
void launch_cols(const RingTables& t, const NttBatch& b, u32 limbs, const NttConfig& cfg,
                 cudaStream_t s) {
  constexpr u32 L = 2 * kE;
  const dim3 grid(1u << (t.log_n - L - 5), limbs);
  constexpr int kNarrow = kE == 4 ? 3 : 4, kWide = kE == 4 ? 2 : 4;
  if (kWide != kNarrow && cfg.cols_wide != 0 &&
      std::size_t{grid.x} * limbs <= std::size_t{device_sms()} * kWide) {
    launch_kernel(ntt_cols_reg<kE, kInverse, kConst, kCopyInput, kWide>, grid, 32u << kE, 0, s, t,
                  b);
    return;
  }
  launch_kernel(ntt_cols_reg<kE, kInverse, kConst, kCopyInput, kNarrow>, grid, 32u << kE, 0, s, t,
                b);
}

template <int kE>
void run_reg(const RingTables& t, const NttBatch& b, u32 limbs, LaunchFlags f, bool inverse,
             u32 otf, const NttConfig& cfg, cudaStream_t s) {
  constexpr u32 L = 2 * kE;
  if (t.log_n != 2 * L) throw BackendError("run_reg: the register NTT kernels need N = 2^(4 e)");
  if (!inverse) {
    with_flag(f.consts, [&](auto kc) {
      with_flag(f.input_copy, [&](auto ke) {
        launch_cols<kE, false, decltype(kc)::value, decltype(ke)::value>(t, b, limbs, cfg, s);
      });
    });
    THEO_CUDA_CHECK_LAUNCH();
    with_flag(f.epilogue, [&](auto kf) {
      with_otf_stages<kE>(otf, [&](auto ko) {
        launch_rows<kE, false, decltype(kf)::value, decltype(ko)::value>(t, b, limbs, cfg, s);
      });
    });
    THEO_CUDA_CHECK_LAUNCH();
  } else {
    with_flag(f.input_copy, [&](auto kf) {
      with_otf_stages<kE>(otf, [&](auto ko) {
        launch_rows<kE, true, decltype(kf)::value, decltype(ko)::value>(t, b, limbs, cfg, s);
      });
    });
    THEO_CUDA_CHECK_LAUNCH();
    launch_cols<kE, true, true, false>(t, b, limbs, cfg, s);
    THEO_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void launch_ntt_register(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                         LaunchFlags f, bool inverse, cudaStream_t s) {
  const u32 otf = t.fwd_rowf != nullptr && t.inv_rowf != nullptr ? cfg.row_otf : 0;
  if (t.log_n == 16)
    run_reg<4>(t, b, limbs, f, inverse, otf, cfg, s);
  else
    run_reg<3>(t, b, limbs, f, inverse, otf, cfg, s);
}

}  // namespace theo::cuda
