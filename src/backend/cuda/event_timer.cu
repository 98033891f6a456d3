// The stream hold of EventTimer (cuda_backend.h): GPU time of work issued on a backend's stream,
// measured with CUDA events.
//
// Events alone would also count the host's enqueue time: the start event fires as soon as the
// stream reaches it, and the GPU then idles until the host has issued the first kernel (a few us,
// as much as an element-wise op takes). So start() first queues a kernel that holds the stream
// until stop() has recorded the closing event and released it; the op's work is then already
// queued when the start event fires.

#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"

namespace theo::cuda {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host writes *release. Gives up after timeout_ns (and says so in *timed_out), so
// an op that waits on the stream itself (a download, a synchronize) delays the run but cannot
// hang it.
__global__ void hold_stream(const volatile u32* release, volatile u32* timed_out,
                            unsigned long long timeout_ns) {
  const unsigned long long t0 = global_ns();
  while (*release == 0) {
    if (global_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(500);
  }
}

constexpr unsigned long long kHoldTimeoutNs = 200'000'000;  // 0.2 s

}  // namespace

void launch_hold_stream(const u32* release, u32* timed_out, cudaStream_t s) {
  hold_stream<<<1, 1, 0, s>>>(release, timed_out, kHoldTimeoutNs);
  THEO_CUDA_CHECK_LAUNCH();
}

}  // namespace theo::cuda
