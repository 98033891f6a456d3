// Uniform sampling from a seed (Backend::sample_uniform): one thread per ChaCha20 block, i.e. per
// kValuesPerBlock consecutive words of one limb, so only the 32-byte seed crosses the host bus.

#include <cstdint>

#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"
#include "math/uniform_expand.h"

namespace theo::cuda {
namespace {

namespace ue = uniform_expand;

template <bool kVec>
__global__ void sample_uniform_kernel(ue::Key key, u64 stream_id, u32* out, u32 n, Basis basis,
                                      const Modulus* mods) {
  pdl_entry();
  const u32 block = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 first = block * ue::kValuesPerBlock;
  if (first >= n) return;
  const u32 limb = blockIdx.y;
  const PrimeId p = basis.ids[limb];
  u32 v[ue::kValuesPerBlock];
  const u32 q = mods[p].q;
  ue::expand_block(key, stream_id, p, block, q, ue::barrett64(q), v);
  u32* row = out + static_cast<std::size_t>(limb) * n;
  if constexpr (kVec) {
    *reinterpret_cast<uint4*>(row + first) = make_uint4(v[0], v[1], v[2], v[3]);
  } else {
#pragma unroll
    for (u32 j = 0; j < ue::kValuesPerBlock; ++j)
      if (first + j < n) row[first + j] = v[j];
  }
}
static_assert(ue::kValuesPerBlock == 4, "the vector store writes one uint4 per block");

}  // namespace

void launch_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id, u32* out, u32 n,
                           const Basis& basis, const Modulus* mods, cudaStream_t s) {
  if (basis.size == 0 || n == 0) return;
  const ue::Key key = ue::make_key(seed);
  constexpr u32 kThreads = 256;
  const u32 blocks = (n + ue::kValuesPerBlock - 1) / ue::kValuesPerBlock;
  const dim3 grid((blocks + kThreads - 1) / kThreads, basis.size);
  const bool vec = n % 4 == 0 && (reinterpret_cast<std::uintptr_t>(out) & 15u) == 0;
  if (vec)
    launch_kernel(sample_uniform_kernel<true>, grid, kThreads, 0, s, key, stream_id, out, n, basis,
                  mods);
  else
    launch_kernel(sample_uniform_kernel<false>, grid, kThreads, 0, s, key, stream_id, out, n, basis,
                  mods);
  THEO_CUDA_CHECK_LAUNCH();
}

}  // namespace theo::cuda
