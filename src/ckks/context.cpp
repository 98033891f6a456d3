#include "theo/ckks/context.h"

#include <atomic>
#include <string>

#include "theo/errors.h"
#include "theo/math/fingerprint.h"
#include "theo/math/security.h"

namespace theo {

namespace {

std::atomic<u64> g_next_context_id{1};

}  // namespace

std::shared_ptr<const Context> Context::create(const ParameterSet& params,
                                               const ContextOptions& options,
                                               const TuningTable* table) {
  return std::shared_ptr<const Context>(new Context(params, options, table));
}

Context::Context(const ParameterSet& params, const ContextOptions& options,
                 const TuningTable* table)
    : id_(g_next_context_id.fetch_add(1)),
      params_(params),
      options_(options),
      policy_(ExecutionPolicy::make({.backend = options.backend,
                                     .threads = options.threads,
                                     .graphs = options.graphs,
                                     .optimizations = options.optimizations,
                                     .key_switching = options.key_switching},
                                    Environment::read())) {
  validate(params_);
  if (params_.word_bits() == 64) {
    throw ParameterError("parameter set '" + params_.name +
                         "' uses 64-bit words (a prime >= 2^31); this library's RNS words are "
                         "32-bit: every prime must be < 2^31");
  }
  check_security(params_, options_.allow_insecure);
  if (!(options_.scale_tolerance >= 0)) {
    throw ParameterError("ContextOptions.scale_tolerance must be >= 0");
  }

  terminal_count_ = static_cast<u32>(params_.terminal_primes.size());
  main_count_ = static_cast<u32>(params_.main_primes.size());
  alpha_ = params_.alpha();
  if (alpha_ == 0) throw ParameterError("auxiliary_primes: key switching needs at least one");
  if (terminal_count_ + main_count_ + alpha_ > kMaxLimbs) {
    throw ParameterError("parameter set has more than 255 primes in all");
  }
  dnum_ = (terminal_count_ + main_count_ + alpha_ - 1) / alpha_;

  ring_.log_n = params_.log_degree;
  for (u32 i = 0; i < terminal_count_; ++i) {
    ring_.primes.push_back(static_cast<u32>(params_.terminal_primes[terminal_count_ - 1 - i]));
  }
  for (const u64 q : params_.main_primes)
    ring_.primes.push_back(static_cast<u32>(q));
  for (const u64 p : params_.auxiliary_primes)
    ring_.primes.push_back(static_cast<u32>(p));

  backend_ =
      options_.make_backend ? options_.make_backend(ring_) : make_backend(ring_, policy_.backend());
  if (options_.wrap_backend) backend_ = options_.wrap_backend(std::move(backend_));
  if (!backend_)
    throw ParameterError("ContextOptions: make_backend / wrap_backend gave no backend");
  backend_->set_bconv_refined(policy_.bconv_refined());  // before the tables' plans
  build_levels();
  const std::optional<TuningTable> used = choose_tuning_table(table);
  std::vector<LevelShape> shapes;
  for (const LevelData& lv : levels_)
    shapes.push_back({lv.limbs, static_cast<u32>(lv.digits.size())});
  planner_ = std::make_unique<const KeySwitchPlanner>(
      policy_, backend_->l2_bytes(), ring_.n(), alpha_, std::move(shapes), used ? &*used : nullptr);
  build_output_chunk_plans();
}

TuningKey Context::tuning_key() const {
  TuningKey key;
  key.device = describe_device(*backend_);
  key.parameters = fingerprint_hex(parameter_fingerprint(params_));
  key.log_n = ring_.log_n;
  key.alpha = alpha_;
  for (const LevelData& lv : levels_)
    key.levels.push_back({lv.limbs, static_cast<u32>(lv.digits.size()), alpha_, ring_.n()});
  key.cache_bytes = planned_cache_bytes(policy_.optimizations(), backend_->l2_bytes());
  const Optimizations& o = policy_.optimizations();
  for (const auto& [on, name] : {std::pair{o.fusion, "fusion"},
                                 {o.bconv_refined, "bconv_refined"},
                                 {o.multi_poly_caching, "caching"},
                                 {o.pipelining, "pipelining"},
                                 {o.output_chunking, "output_chunking"}}) {
    if (!on) continue;
    if (!key.execution.empty()) key.execution += ' ';
    key.execution += name;
  }
  return key;
}

std::optional<TuningTable> Context::choose_tuning_table(const TuningTable* given) {
  const KeySwitchOptions& ks = policy_.key_switching();
  TuningReport& r = tuning_report_;
  r.status = TuningLoadStatus::kNotUsed;
  if (ks.dataflow != Dataflow::kAuto || (given == nullptr && !ks.tuning.use_table)) return {};
  const TuningKey key = tuning_key();
  if (!ks.tuning.directory.empty()) r.file = tuning_file(ks.tuning.directory, key);
  if (given != nullptr) {
    if (const std::string why = stale_reason(given->key(), key); !why.empty()) {
      r.status = TuningLoadStatus::kStale;
      r.message = "the tuning table given to Context::create is stale: " + why + "; ignored";
      emit_warning(ks.tuning, r.message);
      return {};
    }
    r.status = TuningLoadStatus::kGiven;
    return *given;
  }
  if (r.file.empty()) {
    r.status = TuningLoadStatus::kMissing;
    return {};
  }
  TuningLoad load = load_tuning_table(r.file, key);
  r.status = load.status;
  r.message = load.message;
  if (load.status != TuningLoadStatus::kLoaded && load.status != TuningLoadStatus::kMissing)
    emit_warning(ks.tuning, r.message);
  return std::move(load.table);
}

Context::~Context() = default;

const LevelDataflow& Context::key_switch_dataflow(u32 level) const {
  return planner_->dataflow(level);
}

const LevelData& Context::level(u32 l) const {
  if (l >= levels_.size()) {
    throw LevelError("level " + std::to_string(l) + " does not exist (max level is " +
                     std::to_string(levels_.size() - 1) + ")");
  }
  return levels_[l];
}

}  // namespace theo
