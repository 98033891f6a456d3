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
  // 1 (default, sm_90+): kernels are launched with programmatic dependent launch
  // (backend/cuda/launch.cuh), so each one's launch and ramp-up overlap the tail of the kernel
  // before it. Process-wide: the last backend made or retuned sets it. 0 (or
  // KernelTuningOverrides::programmatic_launch false, THEO_PDL=0 at Context creation): plain
  // stream order.
  u32 programmatic_launch = 1;
};

// The CUDA backend on the current device (theo::make_cuda_backend checks that there is one).
std::unique_ptr<Backend> make_backend(const RingParams& ring, const Tuning& tuning = {});
// True when a usable GPU is present.
bool device_available();
// The stream all of `be`'s work is issued on; throws ParameterError if `be` is not a CUDA backend.
cudaStream_t stream_of(Backend& be);
// Replace the tunables of a CUDA backend (benchmark sweeps).
void set_tuning(Backend& be, const Tuning& tuning);

// GPU time of the work issued on `be`'s stream between start() and stop_us(), by CUDA events,
// without the host's launch and synchronize time (event_timer.cu says how). stop_us() waits for
// the work. One timing at a time.
class EventTimer {
 public:
  explicit EventTimer(Backend& be);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  double stop_us();
  // The last timing's stream hold gave up waiting (the op synchronized inside): it then includes
  // host time.
  bool timed_out() const { return timed_out_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  u32* flags_ = nullptr;      // pinned, mapped: [0] release, [1] timed out
  u32* dev_flags_ = nullptr;  // the same words as the device sees them
  bool timed_out_ = false;
};

}  // namespace theo::cuda
