// The device clock of time_op, and the CUDA backend's programmatic launch switch. The only
// backend-specific file of the benchmark: it reaches the CUDA backend when the library was built
// with it.

#include "timing.h"

#include <cstdlib>

#if defined(THEO_HAVE_CUDA)
#include <cuda_profiler_api.h>

#include "backend/cuda/cuda_backend.h"
#endif

namespace theo::bench {

#if defined(THEO_HAVE_CUDA)
namespace {

class CudaEventTimer final : public DeviceTimer {
 public:
  explicit CudaEventTimer(Backend& be) : timer_(be) {}
  void start() override { timer_.start(); }
  double stop_us() override { return timer_.stop_us(); }
  bool timed_out() const override { return timer_.timed_out(); }

 private:
  cuda::EventTimer timer_;
};

}  // namespace
#endif

void set_launch_overlap(Backend& backend, bool on) {
#if defined(THEO_HAVE_CUDA)
  if (backend.kind() == BackendKind::kCuda) {
    cuda::Tuning t;
    t.programmatic_launch = on ? 1 : 0;
    cuda::set_tuning(backend, t);
  }
#endif
  (void)backend;
  (void)on;
}

void profile_once(Backend& backend, const std::function<void()>& op) {
  const char* env = std::getenv("THEO_PROFILE_RANGE");
  if (env == nullptr || env[0] == '\0' || env[0] == '0') return;
#if defined(THEO_HAVE_CUDA)
  if (backend.kind() == BackendKind::kCuda) {
    backend.synchronize();
    cudaProfilerStart();
    op();
    backend.synchronize();
    cudaProfilerStop();
  }
#endif
  (void)backend;
  (void)op;
}

std::unique_ptr<DeviceTimer> make_device_timer(Backend& backend) {
#if defined(THEO_HAVE_CUDA)
  if (backend.kind() == BackendKind::kCuda) return std::make_unique<CudaEventTimer>(backend);
#endif
  (void)backend;
  return nullptr;
}

}  // namespace theo::bench
