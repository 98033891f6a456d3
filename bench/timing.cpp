#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace theo::bench {

double percentile(std::vector<double> samples, double pct) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double pos = pct / 100.0 * static_cast<double>(samples.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, samples.size() - 1);
  const double f = pos - static_cast<double>(lo);
  return samples[lo] * (1 - f) + samples[hi] * f;
}

Timing time_op(Backend& backend, const std::function<void()>& op, unsigned warmup, unsigned reps) {
  for (unsigned i = 0; i < warmup; ++i)
    op();
  backend.synchronize();
  std::vector<double> us;
  us.reserve(reps);
  for (unsigned i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    backend.synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  Timing t;
  t.reps = reps;
  t.wall_us = percentile(us, 50);
  t.wall_p10_us = percentile(us, 10);
  t.wall_p90_us = percentile(us, 90);
  t.median_us = t.wall_us;
  t.p10_us = t.wall_p10_us;
  t.p90_us = t.wall_p90_us;
  t.clock = "steady_clock";
  const std::unique_ptr<DeviceTimer> timer = make_device_timer(backend);
  if (!timer) return t;
  // One untimed round first: the hold kernel's first launch loads its module.
  timer->start();
  op();
  timer->stop_us();
  std::vector<double> dev;
  dev.reserve(reps);
  for (unsigned i = 0; i < reps; ++i) {
    timer->start();
    op();
    dev.push_back(timer->stop_us());
    if (timer->timed_out()) ++t.timeouts;
  }
  profile_once(backend, op);
  t.median_us = percentile(dev, 50);
  t.p10_us = percentile(dev, 10);
  t.p90_us = percentile(dev, 90);
  t.clock = "cuda_events";
  return t;
}

}  // namespace theo::bench
