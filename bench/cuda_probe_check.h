#pragma once
// CK(call): a checked CUDA runtime call of a standalone probe (bench/compact_keys_probe.cu, and
// tests/cuda/bandwidth_probe.cu, which links no library). On failure the probe prints the error,
// the call and its site, and exits with status 1.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                               \
  do {                                                                                         \
    const cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(err_), __FILE__, \
                   __LINE__, #call);                                                           \
      std::exit(EXIT_FAILURE);                                                                 \
    }                                                                                          \
  } while (0)
