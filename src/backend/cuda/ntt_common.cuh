#pragma once
// What the NTT kernels of ntt_tiled.cu and ntt_register.cu share: the limb a grid row transforms
// (Item), ModDown's / rescale's tail, batched loads, the launch flags, and the two launchers that
// launch_ntt (ntt.cu) picks between.

#include <type_traits>

#include "backend/cuda/arith.cuh"
#include "backend/cuda/kernels.h"

namespace theo::cuda {
namespace ntt_detail {

// The limb of grid row blockIdx.y: where it is read from and written to, its prime and constants.
struct Item {
  const u32* src;   // read by the first phase (== data in place)
  u32* data;        // written by the first phase, transformed in place by the second
  u32* input_copy;  // first phase: receives the words read (nullptr: none)
  const u32* sub;   // last forward phase: data = (sub - y) * s (nullptr: plain y)
  Modulus m;
  const i32* tw;
  u32 id;  // PrimeId
  u32 c;   // Montgomery pre- / post-multiplier
  u32 s;   // Montgomery epilogue multiplier
};

__device__ __forceinline__ Item item_of_limb(const RingTables& t, const NttBatch& b, bool inverse,
                                             u32 index) {
  const NttLimb& l = b.limb[index];
  const NttPoly& p = b.poly[ntt_limb_poly(l.ref)];
  const u32 limb = ntt_limb_index(l.ref);
  const u32 id = ntt_limb_prime(l.ref);
  const std::size_t off = static_cast<std::size_t>(limb) << t.log_n;
  const u32 w = limb - p.sub_first;  // wraps above sub_limbs below the window
  Item it;
  it.src = p.src + off;
  it.data = p.dst + off;
  it.input_copy = p.input_copy != nullptr ? p.input_copy + off : nullptr;
  it.sub = p.sub != nullptr && w < p.sub_limbs ? p.sub + (static_cast<std::size_t>(w) << t.log_n)
                                               : nullptr;
  it.m = t.mod[id];
  it.tw = (inverse ? t.inv : t.fwd) + (static_cast<std::size_t>(id) << t.log_n);
  it.id = id;
  it.c = l.c;
  it.s = l.s;
  return it;
}
// The limb of grid row blockIdx.y.
__device__ __forceinline__ Item item_of(const RingTables& t, const NttBatch& b, bool inverse) {
  return item_of_limb(t, b, inverse, blockIdx.y);
}

// ModDown's / rescale's tail on four output words: y <- (a - y) * s.
__device__ __forceinline__ uint4 sub_mul4(uint4 a, uint4 y, i32 s, const Modulus& m) {
  return make_uint4(
      mont_mul_c(sub_mod(a.x, y.x, m.q), s, m), mont_mul_c(sub_mod(a.y, y.y, m.q), s, m),
      mont_mul_c(sub_mod(a.z, y.z, m.q), s, m), mont_mul_c(sub_mod(a.w, y.w, m.q), s, m));
}

// Global loads are issued in batches ahead of the stores that follow them. A kernel's stores
// (a copy of its input, its output after an epilogue) may alias its loads as far as the compiler
// can tell, so a store between two loads keeps the second behind the first's whole latency (DRAM
// or L2) when the store needs the first's words: a thread's loads then run one at a time.
constexpr u32 kLoadBatch = 4;
// v[j] = *ptr(e0 + j step) for the j with e0 + j step < tile, all before any use of them.
template <typename Ptr>
__device__ __forceinline__ void load_batch(uint4 (&v)[kLoadBatch], u32 e0, u32 step, u32 tile,
                                           Ptr&& ptr) {
#pragma unroll
  for (u32 j = 0; j < kLoadBatch; ++j)
    if (e0 + j * step < tile) v[j] = *reinterpret_cast<const uint4*>(ptr(e0 + j * step));
}

// Calls f(std::bool_constant<flag>{}), so that a runtime flag picks a kernel instantiation.
template <typename F>
void with_flag(bool flag, F&& f) {
  if (flag)
    f(std::true_type{});
  else
    f(std::false_type{});
}

struct LaunchFlags {
  bool consts;      // forward pre-multipliers (the inverse always multiplies)
  bool input_copy;  // the first phase copies what it reads
  bool epilogue;    // forward: some limbs take the sub_mul epilogue
};

}  // namespace ntt_detail

// The shared-memory tile kernels (any N, NttConfig's split, tile and radix): ntt_tiled.cu.
void launch_ntt_tiled(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                      ntt_detail::LaunchFlags f, bool inverse, cudaStream_t s);
// The register-resident kernels (N = 2^12 and 2^16, the even split): ntt_register.cu.
void launch_ntt_register(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                         ntt_detail::LaunchFlags f, bool inverse, cudaStream_t s);

}  // namespace theo::cuda
