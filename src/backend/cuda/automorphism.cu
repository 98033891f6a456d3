// Automorphisms on NTT-domain data, and their sum in one kernel (Cheddar Par.4): each thread
// computes the source index of its word once per Galois element, then gathers that word from every
// input for several limbs and keeps the running sum in registers, so out is written once.

#include "backend/cuda/arith.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"
#include "theo/ring/automorphism.h"

namespace theo::cuda {
namespace {

constexpr u32 kLimbsPerThread = 4;

__global__ void automorphism_sum_kernel(const __grid_constant__ ConstPtrs ins,
                                        const __grid_constant__ GaloisList ks, u32 terms, u32* out,
                                        bool accumulate, u32 log_n,
                                        const __grid_constant__ Basis basis, const Modulus* mods) {
  pdl_entry();
  const u32 n = 1u << log_n;
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u32 limb0 = blockIdx.y * kLimbsPerThread;
  const u32 limbs = min(kLimbsPerThread, basis.size - limb0);
  u32 src[kMaxTerms];
  for (u32 j = 0; j < terms; ++j)
    src[j] = automorphism_src_index(i, ks.k[j], log_n);
  for (u32 l = 0; l < limbs; ++l) {
    const u32 limb = limb0 + l;
    const u32 q = mods[basis.ids[limb]].q;
    const std::size_t base = static_cast<std::size_t>(limb) * n;
    u32 acc = accumulate ? out[base + i] : 0u;
    for (u32 j = 0; j < terms; ++j)
      acc = add_mod(acc, ins.p[j][base + src[j]], q);
    out[base + i] = acc;
  }
}

}  // namespace

void launch_automorphism_sum(const ConstPtrs& ins, const GaloisList& ks, u32 terms, u32* out,
                             bool accumulate, u32 log_n, const Basis& basis, const Modulus* mods,
                             cudaStream_t s) {
  if (basis.size == 0) return;
  constexpr u32 threads = 256;
  const u32 n = 1u << log_n;
  const dim3 grid((n + threads - 1) / threads,
                  (basis.size + kLimbsPerThread - 1) / kLimbsPerThread);
  launch_kernel(automorphism_sum_kernel, grid, threads, 0, s, ins, ks, terms, out, accumulate,
                log_n, basis, mods);
  THEO_CUDA_CHECK_LAUNCH();
}

}  // namespace theo::cuda
