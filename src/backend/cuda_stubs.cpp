// Definitions for builds without the CUDA backend; the real ones live in src/backend/cuda/.
#ifndef THEO_HAVE_CUDA

#include "theo/backend/factory.h"
#include "theo/errors.h"

namespace theo {

std::unique_ptr<Backend> make_cuda_backend(const RingParams&, const KernelTuningOverrides&) {
  throw BackendError("make_cuda_backend: this build of theodosian has no CUDA backend");
}

bool cuda_available() {
  return false;
}

}  // namespace theo

#endif
