// Element-wise kernels: one thread per 4 words (16-byte loads and stores when every operand is
// 16-byte aligned), one grid row per limb so each block reads its modulus once. Every op is a
// single pass over its operands; tensor and key_mult fuse what would otherwise be several passes
// (Cheddar Par.1).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "backend/cuda/arith.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"

namespace theo::cuda {
namespace {

constexpr int inputs(EwOp op) {
  switch (op) {
    case EwOp::kNeg:
    case EwOp::kMulScalar:
    case EwOp::kAddScalar:
      return 1;
    case EwOp::kMulAdd:
      return 3;
    case EwOp::kTensor:
      return 4;
    default:
      return 2;
  }
}
constexpr int outputs(EwOp op) {
  return op == EwOp::kTensor ? 3 : 1;
}

// Canonical a * b mod q.
__device__ __forceinline__ u32 mulm(u32 a, u32 b, const Modulus& m) {
  return mul_mod_c(a, b, m);
}

template <EwOp kOp>
__device__ __forceinline__ void apply(const u32 (&x)[4], u32 (&y)[3], u32 c, const Modulus& m) {
  const u32 q = m.q;
  if constexpr (kOp == EwOp::kAdd) y[0] = add_mod(x[0], x[1], q);
  if constexpr (kOp == EwOp::kSub) y[0] = sub_mod(x[0], x[1], q);
  if constexpr (kOp == EwOp::kNeg) y[0] = neg_mod(x[0], q);
  if constexpr (kOp == EwOp::kMul) y[0] = mulm(x[0], x[1], m);
  if constexpr (kOp == EwOp::kMulAdd) y[0] = add_mod(mulm(x[0], x[1], m), x[2], q);
  if constexpr (kOp == EwOp::kMulScalar) y[0] = mont_mul_c(x[0], static_cast<i32>(c), m);
  if constexpr (kOp == EwOp::kAddScalar) y[0] = add_mod(x[0], c, q);
  if constexpr (kOp == EwOp::kMulScalarAdd)
    y[0] = add_mod(mont_mul_c(x[0], static_cast<i32>(c), m), x[1], q);
  if constexpr (kOp == EwOp::kSubMulScalar)
    y[0] = mont_mul_c(sub_mod(x[0], x[1], q), static_cast<i32>(c), m);
  if constexpr (kOp == EwOp::kTensor) {
    // c = s 2^64 mod q (s = 1: 2^64 mod q): the second reduction undoes the 2^-32 of the first
    // and multiplies by the limb's scale s (tensor_scaled) at no extra cost.
    const i32 r = static_cast<i32>(c);
    y[0] = canon(smr_mul(smr_mul(static_cast<i32>(x[0]), static_cast<i32>(x[2]), m), r, m), q);
    y[2] = canon(smr_mul(smr_mul(static_cast<i32>(x[1]), static_cast<i32>(x[3]), m), r, m), q);
    // Sum the two 2^-32-scaled products first, then undo the 2^-32 once (3 reductions, not 4).
    const u32 u = add_mod(mont_mul_c(x[0], static_cast<i32>(x[3]), m),
                          mont_mul_c(x[1], static_cast<i32>(x[2]), m), q);
    y[1] = mont_mul_c(u, r, m);
  }
}

template <EwOp kOp, int W>
__global__ void ew_kernel(const __grid_constant__ EwArgs args, u32 n,
                          const __grid_constant__ Basis basis, const Modulus* mods,
                          const __grid_constant__ LimbConsts consts) {
  pdl_entry();
  constexpr int kIn = inputs(kOp), kOut = outputs(kOp);
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * W;
  if (idx >= n) return;
  const u32 limb = blockIdx.y;
  const Modulus m = mods[basis.ids[limb]];
  const u32 c = consts.v[limb];
  const std::size_t off = static_cast<std::size_t>(limb) * n + idx;
  u32 in[4][W], out[3][W];
#pragma unroll
  for (int k = 0; k < kIn; ++k)
    load_words<W>(args.in[k] + off, in[k]);
#pragma unroll
  for (int w = 0; w < W; ++w) {
    u32 x[4] = {}, y[3] = {};
#pragma unroll
    for (int k = 0; k < kIn; ++k)
      x[k] = in[k][w];
    apply<kOp>(x, y, c, m);
#pragma unroll
    for (int k = 0; k < kOut; ++k)
      out[k][w] = y[k];
  }
#pragma unroll
  for (int k = 0; k < kOut; ++k)
    store_words<W>(args.out[k] + off, out[k]);
}

bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

template <EwOp kOp>
void launch_op(const EwArgs& a, u32 n, const Basis& basis, const Modulus* mods, const LimbConsts& c,
               u32 threads, cudaStream_t s) {
  bool vec = (n % 4) == 0;
  for (int k = 0; k < inputs(kOp); ++k)
    vec = vec && aligned16(a.in[k]);
  for (int k = 0; k < outputs(kOp); ++k)
    vec = vec && aligned16(a.out[k]);
  const u32 w = vec ? 4 : 1;
  const dim3 grid((n / w + threads - 1) / threads, basis.size);
  if (vec)
    launch_kernel(ew_kernel<kOp, 4>, grid, threads, 0, s, a, n, basis, mods, c);
  else
    launch_kernel(ew_kernel<kOp, 1>, grid, threads, 0, s, a, n, basis, mods, c);
  THEO_CUDA_CHECK_LAUNCH();
}

// launch_op<op> of every EwOp, indexed by the op (kTensor is the last one).
template <std::size_t... kOps>
constexpr auto op_launchers(std::index_sequence<kOps...>) {
  return std::array{&launch_op<static_cast<EwOp>(kOps)>...};
}
constexpr auto kOpLaunchers =
    op_launchers(std::make_index_sequence<static_cast<std::size_t>(EwOp::kTensor) + 1>());

// One 16-byte vector per thread, grid (vectors of a limb / threads, limbs, polys): the most bytes
// in flight the GPU can hold, and no index arithmetic beyond the block coordinates. On the H200 a
// two-read one-write stream measured fastest this way (tests/cuda/bandwidth_probe.cu): one-shot
// grids of one vector per thread beat grid-stride loops with 4 vectors per thread in flight by
// 2.5-7% at HAdd's 55-74 MB and at 1 GB (4.37 TB/s there, the copy's 4.27 TB/s reached); the load
// flavour (nc, cs, lu, L2 hints) made no difference beyond noise. Outputs are written with
// st.global.cs (evict first) when the op's bytes are more than 3/4 of the L2: its output cannot
// stay resident next to its inputs anyway (55 MB with the same inputs re-read: -7%, no change
// with cold inputs or at 74 MB; smaller ops, which fit, keep ordinary stores).
constexpr int kAddThreads = 256;

template <bool kSub, bool kStream>
__global__ void __launch_bounds__(kAddThreads)
    add_batch_kernel(const __grid_constant__ AddBatch t, const __grid_constant__ Basis basis,
                     const Modulus* mods, u32 n4) {
  pdl_entry();
  const u32 v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n4) return;
  const u32 limb = blockIdx.y, p = blockIdx.z;
  const std::size_t off = (static_cast<std::size_t>(limb) * n4 + v) * 4;
  const uint4 x = *reinterpret_cast<const uint4*>(t.a[p] + off);
  const uint4 y = *reinterpret_cast<const uint4*>(t.b[p] + off);
  const u32 m = mods[basis.ids[limb]].q;
  uint4 z;
  if constexpr (kSub) {
    z = make_uint4(sub_mod(x.x, y.x, m), sub_mod(x.y, y.y, m), sub_mod(x.z, y.z, m),
                   sub_mod(x.w, y.w, m));
  } else {
    z = make_uint4(add_mod(x.x, y.x, m), add_mod(x.y, y.y, m), add_mod(x.z, y.z, m),
                   add_mod(x.w, y.w, m));
  }
  uint4* dst = reinterpret_cast<uint4*>(t.out[p] + off);
  if constexpr (kStream)
    __stcs(dst, z);
  else
    *dst = z;
}

template <bool kSub>
void launch_add_batch_t(bool stream_out, const AddBatch& t, u32 count, u32 n, const Basis& basis,
                        const Modulus* mods, cudaStream_t s) {
  const u32 n4 = n / 4;
  const dim3 grid((n4 + kAddThreads - 1) / kAddThreads, basis.size, count);
  if (stream_out)
    launch_kernel(add_batch_kernel<kSub, true>, grid, kAddThreads, 0, s, t, basis, mods, n4);
  else
    launch_kernel(add_batch_kernel<kSub, false>, grid, kAddThreads, 0, s, t, basis, mods, n4);
  THEO_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_add_batch(bool subtract, const AddBatch& t, u32 count, u32 n, const Basis& basis,
                      const Modulus* mods, std::size_t l2_bytes, cudaStream_t s) {
  if (count == 0 || basis.size == 0) return;
  const std::size_t bytes = 3 * sizeof(u32) * static_cast<std::size_t>(basis.size) * n * count;
  const bool stream_out = 4 * bytes > 3 * l2_bytes;
  if (subtract)
    launch_add_batch_t<true>(stream_out, t, count, n, basis, mods, s);
  else
    launch_add_batch_t<false>(stream_out, t, count, n, basis, mods, s);
}

namespace {

template <int W>
__global__ void mul_scalar_sum_kernel(const __grid_constant__ ScalarSumArgs args, u32 terms,
                                      u32* out, bool accumulate, u32 n,
                                      const __grid_constant__ Basis basis, const Modulus* mods) {
  pdl_entry();
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * W;
  if (idx >= n) return;
  const u32 limb = blockIdx.y;
  const Modulus m = mods[basis.ids[limb]];
  const std::size_t off = static_cast<std::size_t>(limb) * n + idx;
  u32 acc[W] = {};
  if (accumulate) load_words<W>(out + off, acc);
  for (u32 k = 0; k < terms; ++k) {
    u32 x[W];
    load_words<W>(args.a[k] + off, x);
    const i32 c = static_cast<i32>(args.c[k][limb]);
#pragma unroll
    for (int w = 0; w < W; ++w)
      acc[w] = add_mod(acc[w], mont_mul_c(x[w], c, m), m.q);
  }
  store_words<W>(out + off, acc);
}

}  // namespace

void launch_mul_scalar_sum(const ScalarSumArgs& args, u32 terms, u32* out, bool accumulate, u32 n,
                           const Basis& basis, const Modulus* mods, u32 block_threads,
                           cudaStream_t s) {
  if (basis.size == 0 || terms == 0) return;
  bool vec = n % 4 == 0 && (reinterpret_cast<std::uintptr_t>(out) & 15u) == 0;
  for (u32 k = 0; k < terms; ++k)
    vec = vec && (reinterpret_cast<std::uintptr_t>(args.a[k]) & 15u) == 0;
  const u32 w = vec ? 4 : 1;
  const dim3 grid((n / w + block_threads - 1) / block_threads, basis.size);
  if (vec)
    launch_kernel(mul_scalar_sum_kernel<4>, grid, block_threads, 0, s, args, terms, out, accumulate,
                  n, basis, mods);
  else
    launch_kernel(mul_scalar_sum_kernel<1>, grid, block_threads, 0, s, args, terms, out, accumulate,
                  n, basis, mods);
  THEO_CUDA_CHECK_LAUNCH();
}

void launch_elementwise(EwOp op, const EwArgs& a, u32 n, const Basis& basis, const Modulus* mods,
                        const LimbConsts* consts, u32 threads, cudaStream_t s) {
  if (basis.size == 0) return;
  static const LimbConsts kNone{};
  const LimbConsts& c = consts ? *consts : kNone;
  const auto index = static_cast<std::size_t>(op);
  if (index < kOpLaunchers.size()) kOpLaunchers[index](a, n, basis, mods, c, threads, s);
}

}  // namespace theo::cuda
