// The device clock of time_op. The only backend-specific file of the benchmark: it reaches the
// CUDA backend's EventTimer when the library was built with it.

#include "timing.h"

#if defined(THEO_HAVE_CUDA)
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

std::unique_ptr<DeviceTimer> make_device_timer(Backend& backend) {
#if defined(THEO_HAVE_CUDA)
  if (backend.kind() == BackendKind::kCuda) return std::make_unique<CudaEventTimer>(backend);
#endif
  (void)backend;
  return nullptr;
}

}  // namespace theo::bench
