#pragma once
// theo_bench --dataflows: the dataflow study of Nozaki et al. (papers/dataflow-classification-
// gpu-ckks.md, Fig. 4 and 7) on our GPU. For every cell of the parameter grid
// (theo/math/parameter_grid.h) that is realizable and 128-bit secure, HMult (tensor product,
// key switch, the two additions of relinearization) and KeySwitch alone at the top level, timed
// under every fixed dataflow (DSOB, DPOB, DSOC and DPOC with 2..10 chunks) and under Auto (the
// tuning table when one exists for the device and cell, else the footprint model). The candidates
// are timed in up to 3 interleaved rounds (reps split across them); a record's median is the
// median of its round medians (`round_medians_us`). One JSON record per (cell, op, dataflow,
// chunks); bench/plot_dataflows.py draws the heat maps and the acceptance summary from them.

#include <string>
#include <vector>

#include "theo/math/parameter_grid.h"

namespace theo::bench {

struct DataflowsOptions {
  std::string backend = "cuda";
  std::vector<GridCell> cells;  // empty: the whole grid (dataflow_grid())
  bool insecure = false;        // also run cells above the 128-bit bound (CPU smoke tests)
  unsigned reps = 10;
  unsigned warmup = 2;
  unsigned threads = 0;    // CPU backend threads
  std::string tuning_dir;  // where Auto looks for tables (empty: the default directory)
  bool check = false;      // also hash every dataflow's KeySwitch output against DPOB's
  std::string out;         // JSON file (rewritten after every cell)
};

int run_dataflows(const DataflowsOptions& o);

}  // namespace theo::bench
