#pragma once
// Measuring the key-switch tuning table (theo/plan/tuning_table.h): every dataflow candidate's
// lone key switch timed at each level of a Context, on its backend. theo_tune runs it from the
// command line; TuningOptions::tune_if_missing runs it while a Context is made.

#include <functional>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/plan/tuning_table.h"

namespace theo {

struct TuneOptions {
  std::vector<u32> levels;                 // empty: every level
  std::vector<DataflowChoice> candidates;  // empty: dataflow_candidates()
  u32 warmup = 2;                          // untimed runs per candidate and level
  u32 reps = 7;                            // timed runs; the table keeps their median
  // Called after each (level, candidate) with how many are done of how many.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Times KeySwitcher::switch_keys of one random input with a random switching key (the work does
// not depend on the words) under each candidate at each level: wall clock around each run with
// the backend synchronized before and after, so launch costs count as they do in a workload.
// ParameterError when a level does not exist or a chunked candidate's tables were not built
// there (make the Context with KeySwitchOptions::prepare_all for those levels).
TuningTable tune_key_switching(const ContextPtr& ctx, const TuneOptions& options = {});

}  // namespace theo
