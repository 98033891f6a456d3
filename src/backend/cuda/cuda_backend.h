#pragma once
// The CUDA backend (internal header: tests and benchmarks reach the stream and the tunables here;
// the scheme layer only sees theo::Backend).

#include <cuda_runtime.h>

#include <memory>

#include "backend/cuda/kernels.h"
#include "theo/ring/backend.h"

namespace theo::cuda {

// Every kernel parameter the backend chooses; the defaults are tuned for sm_90.
struct Tuning {
  NttConfig ntt;
  BConvConfig bconv;
  u32 elementwise_threads = 256;
};

std::unique_ptr<Backend> make_backend(const RingParams& ring, const Tuning& tuning = {});
// The stream all of `be`'s work is issued on; throws ParameterError if `be` is not a CUDA backend.
cudaStream_t stream_of(Backend& be);
// Replace the tunables of a CUDA backend (benchmark sweeps).
void set_tuning(Backend& be, const Tuning& tuning);

}  // namespace theo::cuda
