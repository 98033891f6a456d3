// theo_bench --ablation: the cumulative steps and the helpers the KeySwitch, batching and Boot
// parts share.

#include <algorithm>
#include <cstdlib>

#include "ablation_bench.h"
#include "timing.h"

namespace theo::bench {

std::vector<AblationStep> ablation_steps() {
  const Optimizations avail = Optimizations::available();
  std::vector<AblationStep> steps;
  Optimizations o = Optimizations::none();
  o.circuits.lazy_polynomial = false;
  o.circuits.merged_evalmod_tail = false;
  o.circuits.slot_to_coeff_first = false;
  steps.push_back({"baseline", o, true});
  o.fusion = true;
  steps.push_back({"+fusion", o, avail.fusion});
  o.bconv_refined = true;
  steps.push_back({"+BConv refinement", o, avail.bconv_refined});
  o.graphs = true;
  steps.push_back({"+CUDA Graphs", o, avail.graphs});
  o.multi_poly_caching = true;
  steps.push_back({"+multi-poly caching", o, avail.multi_poly_caching});
  o.pipelining = true;
  steps.push_back({"+pipelining", o, avail.pipelining});
  // The bootstrapping levers kept by issue 31 (docs/optimizations.md), Boot only.
  o.inplace_constants = true;
  steps.push_back({"+constants in place", o, true, true, true});
  o.circuits.lazy_polynomial = true;
  steps.push_back({"+lazy polynomial", o, true, true, false});
  o.circuits.merged_evalmod_tail = true;
  steps.push_back({"+merged EvalMod tail", o, true, true, false});
  o.circuits.slot_to_coeff_first = true;
  steps.push_back({"+SlotToCoeff first", o, true, true, false});
  return steps;
}

u32 level_closest_to(const Context& ctx, u32 limbs) {
  u32 best = 0;
  for (u32 l = 0; l <= ctx.max_level(); ++l) {
    const auto dist = [&](u32 x) {
      return std::abs(static_cast<int>(ctx.level(x).limbs) - static_cast<int>(limbs));
    };
    if (dist(l) <= dist(best)) best = l;
  }
  return best;
}

nlohmann::json summarize_us(std::vector<double> samples) {
  return {{"median_us", percentile(samples, 50)},
          {"p10_us", percentile(samples, 10)},
          {"p90_us", percentile(samples, 90)},
          {"samples", samples.size()}};
}

ContextPtr ablation_context(const AblationOptions& o, const std::string& preset,
                            const Optimizations& opt, std::shared_ptr<TrafficRecorder> rec) {
  ContextOptions co;
  co.backend = o.backend == "cuda" ? BackendChoice::kCuda : BackendChoice::kCpu;
  co.allow_insecure = true;
  co.threads = o.threads;
  co.optimizations = opt;
  if (rec) co.wrap_backend = record_traffic(std::move(rec));
  ContextPtr ctx = Context::create(load_preset(preset), co);
  set_launch_overlap(unwrap_recording_backend(ctx->backend()), opt.graphs);
  return ctx;
}

Prng::Seed ablation_seed(std::uint8_t tag) {
  Prng::Seed s{};
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<std::uint8_t>(tag + 31 * i);
  return s;
}

u64 hash_words(const Context& ctx, const std::vector<ConstPolyRef>& polys) {
  u64 h = 1469598103934665603ull;
  for (const ConstPolyRef& p : polys) {
    std::vector<u32> words(p.words());
    ctx.backend().download(p, words.data());
    for (const u32 w : words) {
      for (int i = 0; i < 4; ++i) {
        h ^= (w >> (8 * i)) & 0xffu;
        h *= 1099511628211ull;
      }
    }
  }
  return h;
}

}  // namespace theo::bench
