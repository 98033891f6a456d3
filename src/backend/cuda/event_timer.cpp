// EventTimer (cuda_backend.h): GPU time of the work issued on a backend's stream between start()
// and stop_us(), by CUDA events around a stream hold (event_timer.cu says why the hold).

#include <atomic>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"

namespace theo::cuda {

EventTimer::EventTimer(Backend& be) : stream_(stream_of(be)) {
  THEO_CUDA_CHECK(cudaEventCreate(&start_));
  THEO_CUDA_CHECK(cudaEventCreate(&stop_));
  void* host = nullptr;
  THEO_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(u32), cudaHostAllocMapped));
  flags_ = static_cast<u32*>(host);
  flags_[0] = 1;
  flags_[1] = 0;
  void* dev = nullptr;
  THEO_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  dev_flags_ = static_cast<u32*>(dev);
}

EventTimer::~EventTimer() {
  // Release a stream still held (an op threw between start and stop) before freeing the flag.
  static_cast<volatile u32*>(flags_)[0] = 1;
  cudaStreamSynchronize(stream_);
  cudaFreeHost(flags_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void EventTimer::start() {
  volatile u32* f = flags_;
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  launch_hold_stream(dev_flags_, dev_flags_ + 1, stream_);
  THEO_CUDA_CHECK(cudaEventRecord(start_, stream_));
}

double EventTimer::stop_us() {
  THEO_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  volatile u32* f = flags_;
  f[0] = 1;
  THEO_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  THEO_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  timed_out_ = f[1] != 0;
  return static_cast<double>(ms) * 1e3;
}

}  // namespace theo::cuda
