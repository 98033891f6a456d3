#include "backend/cuda/check.h"

#include <string>

#include "theo/errors.h"

namespace theo::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  // Sticky errors (e.g. an illegal address in a kernel) cannot be cleared; others can, so that a
  // caller who catches the exception may continue with the backend.
  (void)cudaGetLastError();
  throw BackendError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                     cudaGetErrorString(err) + ") in " + expr + " at " + file + ":" +
                     std::to_string(line));
}

void throw_out_of_memory(std::size_t bytes, const char* what) {
  (void)cudaGetLastError();
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    free_bytes = total_bytes = 0;
  }
  throw OutOfMemoryError(std::string(what) + ": out of device memory: asked for " +
                         std::to_string(bytes) + " bytes, " + std::to_string(free_bytes) +
                         " bytes free of " + std::to_string(total_bytes));
}

}  // namespace theo::cuda
