#pragma once
// Kernel launches with programmatic dependent launch (PDL, sm_90+). A kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may be launched, and its blocks made
// resident, while the kernel ahead of it in the stream still runs; it waits for that kernel's
// completion and memory at griddepcontrol.wait. Every kernel of this backend calls pdl_entry()
// before its first access to memory an earlier kernel may write (only immutable tables, such
// as a BConv plan's, may be read before it), so any of them may be launched this way: the launch
// latency and block ramp-up of each kernel then overlap the tail of the one before (in CUDA
// Graphs the stream edge becomes a programmatic edge). Without the attribute, or before sm_90,
// pdl_entry() does nothing.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"

namespace theo::cuda {

__device__ __forceinline__ void pdl_entry() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  // The next kernel may launch once every block of this one has passed the wait above, so at
  // most one kernel waits ahead of the running one and it never takes slots this one still needs.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                   cudaStream_t s, Args&&... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = programmatic_launch() ? 1 : 0;
  THEO_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace theo::cuda
