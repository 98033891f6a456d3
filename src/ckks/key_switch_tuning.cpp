// tune_key_switching (theo/ckks/key_switch_tuning.h).

#include "theo/ckks/key_switch_tuning.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <random>
#include <string>

#include "theo/ckks/key_switcher.h"
#include "theo/errors.h"

namespace theo {

namespace {

// Uniform words from the backend's sampler (fresh seed per call; timing only, never a key).
RnsPoly random_poly(Backend& be, const Basis& basis, std::mt19937_64& rng, u64 stream) {
  std::array<std::uint8_t, 32> seed{};
  for (auto& b : seed)
    b = static_cast<std::uint8_t>(rng());
  RnsPoly p = be.make_poly(basis);
  be.sample_uniform(seed, stream, p.ref());
  return p;
}

}  // namespace

TuningTable tune_key_switching(const ContextPtr& ctx, const TuneOptions& options) {
  if (!ctx) throw ContextError("tune_key_switching: the Context is null");
  if (options.reps == 0) throw ParameterError("tune_key_switching: reps must be at least 1");
  std::vector<u32> levels = options.levels;
  if (levels.empty())
    for (u32 l = 0; l <= ctx->max_level(); ++l)
      levels.push_back(l);
  const std::vector<DataflowChoice> candidates =
      options.candidates.empty() ? dataflow_candidates() : options.candidates;
  for (const DataflowChoice& c : candidates)
    if (!valid_choice(c))
      throw ParameterError("tune_key_switching: " + choice_name(c) + " is not a valid choice");
  for (const u32 l : levels) {
    const LevelData& lv = ctx->level(l);  // LevelError for a level that does not exist
    for (const DataflowChoice& c : candidates)
      if (is_chunked(c.dataflow) && lv.chunk_plans(c.chunks) == nullptr)
        throw ParameterError("tune_key_switching: level " + std::to_string(l) +
                             " has no tables for " + choice_name(c) +
                             " (make the Context with KeySwitchOptions::prepare_all)");
  }

  Backend& be = ctx->backend();
  std::mt19937_64 rng(std::random_device{}());
  std::vector<RnsPoly> kb, ka;
  for (u32 k = 0; k < ctx->dnum(); ++k) {
    kb.push_back(random_poly(be, ctx->key_basis(), rng, 2 * k));
    ka.push_back(random_poly(be, ctx->key_basis(), rng, 2 * k + 1));
  }
  const SwitchingKey key(ctx->id(), std::move(kb), std::move(ka));
  const KeySwitcher switcher(ctx);
  TuningTable table(ctx->tuning_key());
  const std::size_t total = levels.size() * candidates.size();
  std::size_t done = 0;
  for (const u32 l : levels) {
    const LevelData& lv = ctx->level(l);
    const RnsPoly d = random_poly(be, lv.q_basis, rng, 1000 + l);
    RnsPoly o0 = be.make_poly(lv.q_basis), o1 = be.make_poly(lv.q_basis);
    const ConstPolyRef in[] = {d.cref()};
    const SwitchingKey* keys[] = {&key};
    const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};
    TunedLevel tuned;
    tuned.level = l;
    // Rounds over the candidates (warm-up rounds first), so that a drift of the device's clocks
    // spreads over all of them instead of favouring whichever runs last.
    KeySwitchPlan base = switcher.planner().plan(l, 1, 1);
    std::vector<std::vector<double>> us(candidates.size());
    for (u32 round = 0; round < options.warmup + options.reps; ++round) {
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        KeySwitchPlan plan = base;
        plan.dataflow = candidates[c].dataflow;
        plan.chunks = candidates[c].chunks;
        be.synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        switcher.switch_keys(in, keys, l, out0, out1, plan);
        be.synchronize();
        const auto t1 = std::chrono::steady_clock::now();
        if (round >= options.warmup)
          us[c].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    }
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      std::vector<double>& v = us[c];
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      // A clock too coarse for a tiny key switch could give 0: the table needs positive times.
      tuned.measured.push_back({candidates[c], std::max(v[v.size() / 2], 1e-3)});
      ++done;
      if (options.progress) options.progress(done, total);
    }
    table.set_level(std::move(tuned));
  }
  return table;
}

}  // namespace theo
