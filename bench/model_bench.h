#pragma once
// theo_bench --model: the traffic model (theo/model/traffic.h) of the basic mechanisms and of one
// bootstrapping on a parameter preset, next to measured times and a GPU's measured ceilings
// (theo/model/gpu.h); the reports are theo/model/report.h's. See docs/traffic-model.md for the
// model and how to read the output.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theo/circuits/bootstrapper.h"
#include "theo/model/report.h"
#include "theo/theodosian.h"

namespace theo::bench {

struct ModelOptions {
  std::string backend = "cpu";
  std::string preset = "bootparam_40";
  bool insecure = false;   // parameter sets below 128-bit security
  std::vector<u32> limbs;  // anchor levels by limbs; empty = 14, 23, 35, 47
  unsigned reps = 10;      // timed runs per mechanism
  unsigned warmup = 2;     // untimed runs before
  unsigned boot_reps = 5;  // timed bootstraps
  unsigned passes = 3;     // profiled (per-op synchronized) runs, averaged
  unsigned threads = 0;    // CPU backend threads
  // The GPU whose ceilings the bounds use: a known GPU's key, a descriptor or a probe output file
  // (load_gpu); empty: the GPU the backend runs on when it is a known one, else the H200.
  std::string gpu;
  bool skip_bootstrap = false;
  std::string out;  // JSON file
};

// What the mechanisms and the bootstrapping share: one Context wrapped with the recorder, keys.
struct ModelEnv {
  ContextPtr ctx;
  std::shared_ptr<TrafficRecorder> rec;
  SecretKey sk;
  RelinKey relin;
  GaloisKeys rot_keys;  // the anchor's HRot rotation
  int rotation = 0;
  GpuDescriptor gpu;  // the ceilings of the bounds
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

// The GPU of ModelOptions::gpu for `backend` (the backend the run uses, unwrapped).
GpuDescriptor model_gpu(const std::string& choice, const Backend& backend);

// model_run.cpp: the whole --model run.
int run_model(const ModelOptions& o);

}  // namespace theo::bench
