#pragma once
// theo_bench --ablation: the shape of Theodosian's Fig. 7a / 8a and 7b on our GPU. KeySwitch (at
// the bootparam_40 levels closest to L = 24 and 48 limbs) and Boot (bootparam_40, bootparam_35)
// with the optimizations added one at a time (baseline, +fusion, +BConv refinement, +CUDA
// Graphs, +multi-polynomial caching, +pipelining; a step whose mechanism is not in this build is
// "n/a", Optimizations::available()), then Boot alone with the bootstrapping levers kept by issue
// 31 (+constants in place, +lazy polynomial, +merged EvalMod tail, +SlotToCoeff first), and
// batched key switches at L = 12 for B = 1..16 with the footprint model's bytes. The memory steps
// and the constants in place compute the same words (the output hashes must agree); the other
// levers evaluate the same function with fewer roundings and key switches (other words).
// docs/optimizations.md says how to read it; bench/plot_ablation.py draws the JSON.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theo/model/gpu.h"
#include "theo/model/traffic.h"
#include "theo/theodosian.h"

namespace theo::bench {

struct AblationOptions {
  std::string backend = "cuda";
  std::vector<std::string> boot_presets = {"bootparam_40", "bootparam_35"};
  std::string keyswitch_preset = "bootparam_40";
  std::vector<u32> keyswitch_limbs = {24, 48};  // the level with the closest limb count
  u32 batch_limbs = 12;                         // the batching sweep's level (closest)
  u32 max_batch = 16;
  unsigned reps = 30;  // KeySwitch and batching samples
  unsigned warmup = 5;
  unsigned boot_reps = 10;  // Boot samples
  unsigned threads = 0;     // CPU backend threads
  // The GPU whose L2 read + write ceiling bounds the traffic (ModelOptions::gpu).
  std::string gpu;
  bool skip_boot = false;
  std::string out;  // JSON file, rewritten after every section
};

// One cumulative step: the switches on after it, and whether its own mechanism exists.
struct AblationStep {
  std::string name;  // "baseline", "+fusion", ...
  Optimizations opt;
  bool available = true;
  bool boot_only = false;  // a bootstrapping lever: KeySwitch and batching do not change
  bool same_words = true;  // computes the baseline's words (checked by hash)
};
// baseline (all off, the bootstrapping levers too), then each switch turned on in the paper's
// order, then the kept bootstrapping levers (boot_only).
std::vector<AblationStep> ablation_steps();

// The highest level of ctx whose limb count is closest to `limbs`.
u32 level_closest_to(const Context& ctx, u32 limbs);

// A Context of `preset` on the run's backend with the step's switches (insecure sets allowed:
// bootparam_35 is below 128 bits), wrapped with `rec` when given.
ContextPtr ablation_context(const AblationOptions& o, const std::string& preset,
                            const Optimizations& opt,
                            std::shared_ptr<TrafficRecorder> rec = nullptr);

// Fixed seeds: every step's Context gets the same keys and inputs, so its outputs must be the
// same words (the JSON's `bit_exact_across_steps`).
Prng::Seed ablation_seed(std::uint8_t tag);

// FNV-1a over the words of polys (downloaded): equal hashes across steps show bit-exactness.
u64 hash_words(const Context& ctx, const std::vector<ConstPolyRef>& polys);

// Median, p10 and p90 of samples, in a JSON object {median_us, p10_us, p90_us}.
nlohmann::json summarize_us(std::vector<double> samples);

// ablation_keyswitch.cpp: one step's KeySwitch records (whole op and stages, traffic model bytes
// and the L2 bound) at every requested level, on a Context made with the step's switches.
nlohmann::json keyswitch_step(const AblationOptions& o, const AblationStep& step);
// ablation_keyswitch.cpp: the batching sweep (all switches on, B = 1..max_batch).
nlohmann::json batching_sweep(const AblationOptions& o);
// ablation_boot.cpp: one step's Boot record on `preset`.
nlohmann::json boot_step(const AblationOptions& o, const std::string& preset,
                         const AblationStep& step);

// ablation_run.cpp: all of it, the tables on stdout and the JSON file.
int run_ablation(const AblationOptions& o);

}  // namespace theo::bench
