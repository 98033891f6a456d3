#pragma once
// Wall-clock timing of one op: steady_clock around the op and the backend's synchronize().

#include <functional>
#include <vector>

#include "theo/ring/backend.h"

namespace theo::bench {

struct Timing {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  unsigned reps = 0;
};

// Runs `op` warmup times untimed, then reps times timed.
Timing time_op(Backend& backend, const std::function<void()>& op, unsigned warmup, unsigned reps);

// Linear-interpolated percentile (0..100) of unsorted samples.
double percentile(std::vector<double> samples, double pct);

}  // namespace theo::bench
