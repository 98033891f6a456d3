// tune_key_switching and create_tuned_context (theo/tuning/key_switch_tuning.h).

#include "theo/tuning/key_switch_tuning.h"

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

// The median of the samples (positive: a clock too coarse for a tiny key switch could give 0, and
// the table needs positive times).
double median_us(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return std::max(v[v.size() / 2], 1e-3);
}

}  // namespace

TuningTable tune_key_switching(const ContextPtr& ctx, const TuneOptions& options) {
  if (!ctx) throw ContextError("tune_key_switching: the Context is null");
  if (options.reps == 0) throw ParameterError("tune_key_switching: reps must be at least 1");
  if (options.batch == 0) throw ParameterError("tune_key_switching: batch must be at least 1");
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
    // One sample: the time per key switch of `batch` of them back to back under choice c.
    const auto sample_us = [&](const DataflowChoice& c) {
      be.synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      for (u32 b = 0; b < options.batch; ++b)
        switcher.run(
            {.level = l, .inputs = in, .keys = keys, .out0 = out0, .out1 = out1, .dataflow = c});
      be.synchronize();
      const auto t1 = std::chrono::steady_clock::now();
      return std::chrono::duration<double, std::micro>(t1 - t0).count() / options.batch;
    };
    // Rounds over the candidates (warm-up rounds first), so that a drift of the device's clocks
    // spreads over all of them instead of favouring whichever runs last.
    std::vector<std::vector<double>> us(candidates.size());
    for (u32 round = 0; round < options.warmup + options.reps; ++round) {
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        const double t = sample_us(candidates[c]);
        if (round >= options.warmup) us[c].push_back(t);
      }
    }
    const auto record = [&] {
      tuned.measured.clear();
      for (std::size_t c = 0; c < candidates.size(); ++c)
        tuned.measured.push_back({candidates[c], median_us(us[c])});
    };
    record();
    // A winner other than the default is measured again against it alone: a level leaves the
    // default only on a difference that holds over both sets of rounds.
    const DataflowChoice winner = tuned.choice();
    const auto index_of = [&](const DataflowChoice& x) {
      for (std::size_t c = 0; c < candidates.size(); ++c)
        if (candidates[c] == x) return c;
      return candidates.size();
    };
    const std::size_t wi = index_of(winner), di = index_of(kDefaultChoice);
    if (options.confirm_factor > 0 && wi != di && wi < candidates.size() &&
        di < candidates.size()) {
      for (u32 round = 0; round < options.confirm_factor * options.reps; ++round) {
        // Alternating which goes first, so neither always follows the other.
        const std::size_t first = round % 2 == 0 ? wi : di, second = first == wi ? di : wi;
        us[first].push_back(sample_us(candidates[first]));
        us[second].push_back(sample_us(candidates[second]));
      }
      record();
    }
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      ++done;
      if (options.progress) options.progress(done, total);
    }
    table.set_level(std::move(tuned));
  }
  return table;
}

TunedContext create_tuned_context(const ParameterSet& params, const ContextOptions& options,
                                  const TuneOptions& tune) {
  TunedContext out;
  out.ctx = Context::create(params, options);
  const TuningReport& report = out.ctx->tuning_report();
  if (report.status == TuningLoadStatus::kLoaded || report.status == TuningLoadStatus::kNotUsed)
    return out;
  // No valid table: measure every candidate at every level on a Context that has the tables of
  // all of them and reads no table, write the table, and make the Context with it.
  ContextOptions measuring = options;
  measuring.key_switching.prepare_all = true;
  measuring.key_switching.prepare_levels.clear();
  measuring.key_switching.tuning.use_table = false;
  const TuningTable table = tune_key_switching(Context::create(params, measuring), tune);
  out.measured = true;
  if (!report.file.empty()) {
    out.save_error = save_tuning_table(table, report.file);
    if (!out.save_error.empty())
      emit_warning(options.key_switching.tuning,
                   "the key-switch tuning table cannot be written: " + out.save_error +
                       "; this Context uses it, later ones will measure again");
  }
  out.ctx = Context::create(params, options, &table);
  return out;
}

}  // namespace theo
