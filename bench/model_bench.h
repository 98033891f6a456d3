#pragma once
// theo_bench --model: the traffic model (theo/ring/traffic.h) of the basic mechanisms and of one
// bootstrapping on a parameter preset, next to measured times and the bandwidth ceilings.
// See docs/traffic-model.md for the model and how to read the output.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theo/circuits/bootstrapper.h"
#include "theo/ring/traffic.h"
#include "theo/theodosian.h"

namespace theo::bench {

struct ModelOptions {
  std::string backend = "cpu";
  std::string preset = "bootparam_40";
  bool insecure = false;    // parameter sets below 128-bit security
  std::vector<u32> limbs;   // anchor levels by limbs; empty = 14, 23, 35, 47
  unsigned reps = 10;       // timed runs per mechanism
  unsigned warmup = 2;      // untimed runs before
  unsigned boot_reps = 5;   // timed bootstraps
  unsigned passes = 3;      // profiled (per-op synchronized) runs, averaged
  unsigned threads = 0;     // CPU backend threads
  double dram_tbps = 4.27;  // DRAM copy bandwidth (read + write), TB/s
  double l2_tbps = 7.0;     // L2 read + write bandwidth, TB/s
  bool skip_bootstrap = false;
  std::string out;  // JSON file
};

// The bandwidth ceilings the lower bounds divide by.
struct Ceilings {
  double dram_tbps = 0;
  double l2_tbps = 0;
  // bytes / ceiling in microseconds.
  double dram_us(double bytes) const { return bytes / (dram_tbps * 1e6); }
  double l2_us(double bytes) const { return bytes / (l2_tbps * 1e6); }
};

// What the mechanisms and the bootstrapping share: one Context wrapped with the recorder, keys.
struct ModelEnv {
  ContextPtr ctx;
  std::shared_ptr<TrafficRecorder> rec;
  SecretKey sk;
  RelinKey relin;
  GaloisKeys rot_keys;  // the anchor's HRot rotation
  int rotation = 0;
  Ceilings ceil;
};

// Clears the recorder and runs `f` `passes` times under OpScope `scope` with recording and
// per-op profiling on; the recorder is off again afterwards. Divide its sums by `passes`.
void profile_passes(ModelEnv& env, const std::string& scope, unsigned passes,
                    const std::function<void()>& f);

// model_mechanisms.cpp: HMult + relin + rescale, HRot, KeySwitch (ModUp / KeyMult / ModDown),
// Rescale at each anchor level. Prints a table; returns one JSON record per (mechanism, level).
nlohmann::json run_mechanisms(ModelEnv& env, const ModelOptions& o);

// model_bootstrap.cpp: one bootstrapping split into ModRaise / CoeffToSlot / EvalMod /
// SlotToCoeff. Prints the per-phase and per-op tables; returns the JSON record.
nlohmann::json run_bootstrap(ModelEnv& env, const ModelOptions& o);

// model_report.cpp: JSON and table rows of a TrafficTotals. `measured_us` is the time the
// achieved bandwidth and the ratios to the bounds use (0: the profiled time).
nlohmann::json totals_json(const TrafficTotals& t, const Ceilings& c, double measured_us);
// Per-scope (relative to `root`) and per-op JSON of the recorder averaged over `passes`.
nlohmann::json scopes_json(const TrafficRecorder& rec, const std::string& root, double passes,
                           const Ceilings& c);
nlohmann::json ops_json(const TrafficRecorder& rec, const std::string& root, double passes,
                        const Ceilings& c);
// One table: header line, then rows made by table_row.
void print_table_header(const std::string& first_column);
void print_table_row(const std::string& label, const TrafficTotals& t, const Ceilings& c,
                     double measured_us);

// model_keys.cpp: the switching-key halves and linear-transform plaintexts a bootstrapping streams,
// per phase, from the recorder's per-call records of the "Boot" scope (the recorder keeps them);
// and the key set's size expanded and with the a halves as seeds. Both print a table.
nlohmann::json key_stream_json(const TrafficRecorder& rec, double passes, const Ceilings& c);
nlohmann::json key_set_json(const BootstrappingKeys& keys);

// model_run.cpp: the whole --model run.
int run_model(const ModelOptions& o);

}  // namespace theo::bench
