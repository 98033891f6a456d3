#pragma once
// Error checking for CUDA runtime calls and kernel launches. Every failure becomes a
// theo::BackendError naming the call site, so a bad launch is never silently ignored.

#include <cuda_runtime.h>

#include <cstddef>

namespace theo::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
// Out-of-memory: names the requested size and what cudaMemGetInfo reports free.
[[noreturn]] void throw_out_of_memory(std::size_t bytes, const char* what);

}  // namespace theo::cuda

#define THEO_CUDA_CHECK(expr)                                               \
  do {                                                                      \
    const cudaError_t theo_err_ = (expr);                                   \
    if (theo_err_ != cudaSuccess)                                           \
      ::theo::cuda::throw_cuda_error(theo_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: catches bad configurations (the launch itself returns no status).
#define THEO_CUDA_CHECK_LAUNCH() THEO_CUDA_CHECK(cudaGetLastError())
