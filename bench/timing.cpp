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
  return Timing{percentile(us, 50), percentile(us, 10), percentile(us, 90), reps};
}

}  // namespace theo::bench
