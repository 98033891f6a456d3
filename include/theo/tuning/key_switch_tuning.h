#pragma once
// Measuring the key-switch tuning table (theo/plan/tuning_table.h): every dataflow candidate's
// lone key switch timed at each level of a Context, on its backend. theo_tune runs it from the
// command line; create_tuned_context measures a missing table before it makes the Context that
// uses it.

#include <functional>
#include <string>
#include <vector>

#include "theo/ckks/context.h"
#include "theo/plan/tuning_table.h"

namespace theo {

struct TuneOptions {
  std::vector<u32> levels;                 // empty: every level
  std::vector<DataflowChoice> candidates;  // empty: dataflow_candidates()
  u32 warmup = 2;                          // untimed rounds per candidate and level
  u32 reps = 7;                            // timed rounds; the table keeps their median
  // Key switches per timed sample, issued back to back (one synchronize per sample): a sample is
  // the time per key switch with the device's queue kept full, as in a workload, rather than one
  // key switch plus a launch and synchronize round trip, which would rank dataflows partly by
  // their launch count.
  u32 batch = 4;
  // When the fastest candidate is not the default: rounds of the two alone, interleaved, whose
  // samples join theirs before the choice (TunedLevel::choice). A switch away from the default
  // then rests on 1 + confirm_factor times the samples. 0: no confirmation.
  u32 confirm_factor = 2;
  // Called after each (level, candidate) with how many are done of how many.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Times a lone key switch of one random input with a random switching key (the work does not
// depend on the words) under each candidate at each level: wall clock around `batch` runs with
// the backend synchronized before and after, in rounds over the candidates. ParameterError when
// reps or batch is 0 or a chunked candidate's tables were not built at a level (make the Context
// with KeySwitchOptions::prepare_all for those levels); LevelError for a level that does not
// exist.
TuningTable tune_key_switching(const ContextPtr& ctx, const TuneOptions& options = {});

// A Context whose key-switch dataflows come from a tuning table of this device and parameter set.
struct TunedContext {
  ContextPtr ctx;
  bool measured = false;   // the table was measured now (there was no valid one)
  std::string save_error;  // why the measured table could not be written, else empty
};
// Context::create(params, options) when it finds a valid table (or is not asked for one: a fixed
// dataflow, or TuningOptions::use_table off). Otherwise the table is measured on a Context made
// for it (every candidate's conversion tables; seconds of work on a GPU for a bootstrappable set),
// written to its file (a failure is warned about, never thrown) and handed to the Context returned.
TunedContext create_tuned_context(const ParameterSet& params, const ContextOptions& options = {},
                                  const TuneOptions& tune = {});

}  // namespace theo
