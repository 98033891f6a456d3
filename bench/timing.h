#pragma once
// Timing of one op: the host clock (steady_clock around the op and the backend's synchronize())
// always, and the backend's device clock where it has one (CUDA events on the CUDA backend).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "theo/ring/backend.h"

namespace theo::bench {

// GPU time of the work issued between start() and stop_us(), without the host's launch and
// synchronize overhead.
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;
  virtual double stop_us() = 0;  // waits for the work
  virtual bool timed_out() const = 0;
};
// nullptr when the backend has no device clock (the CPU backend). device_timer.cpp.
std::unique_ptr<DeviceTimer> make_device_timer(Backend& backend);
// Programmatic dependent launch on or off (CUDA: cuda::Tuning::programmatic_launch, process-wide;
// other backends: nothing). The ablation switches it with the CUDA Graphs step: both remove
// launch overhead (Theodosian §IV-C).
void set_launch_overlap(Backend& backend, bool on);

struct Timing {
  // The device clock where there is one, else the host clock.
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  // Host clock: op + synchronize, so it includes one launch + sync round trip on a GPU.
  double wall_us = 0;
  double wall_p10_us = 0;
  double wall_p90_us = 0;
  unsigned reps = 0;
  std::string clock;      // "cuda_events" or "steady_clock": what median_us is
  unsigned timeouts = 0;  // device timings whose stream hold gave up (see DeviceTimer)
};

// With THEO_PROFILE_RANGE=1 in the environment: runs `op` once more between cudaProfilerStart
// and cudaProfilerStop (CUDA backend only), so `ncu --profile-from-start off` profiles exactly the
// kernels of one op (time_op calls it after its timed runs). Otherwise nothing.
void profile_once(Backend& backend, const std::function<void()>& op);

// Runs `op` warmup times untimed, then reps times timed by the host clock and, if the backend has
// a device clock, reps times more timed by it.
Timing time_op(Backend& backend, const std::function<void()>& op, unsigned warmup, unsigned reps);

// Linear-interpolated percentile (0..100) of unsorted samples.
double percentile(std::vector<double> samples, double pct);

}  // namespace theo::bench
