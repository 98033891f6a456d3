#include "theo/ckks/context.h"

#include <atomic>
#include <string>

#include "theo/ckks/key_switch_tuning.h"
#include "theo/errors.h"
#include "theo/math/fingerprint.h"
#include "theo/math/security.h"

namespace theo {

namespace {

std::atomic<u64> g_next_context_id{1};

}  // namespace

std::shared_ptr<const Context> Context::create(const ParameterSet& params,
                                               const ContextOptions& options) {
  std::shared_ptr<Context> ctx(new Context(params, options));
  if (ctx->plan_key_switching()) {
    // No valid table and tune_if_missing: measure every candidate at every level now (the
    // tables of all of them are built), write the table, and plan with it.
    const TuningOptions& t = ctx->policy_.key_switching().tuning;
    const TuningTable table = tune_key_switching(ctx, {});
    TuningReport& report = ctx->tuning_report_;
    report.tuned = true;
    if (!report.file.empty()) {
      report.save_error = save_tuning_table(table, report.file);
      if (!report.save_error.empty())
        emit_warning(t, "the key-switch tuning table cannot be written: " + report.save_error +
                            "; this Context uses it, later ones will measure again");
    }
    ctx->set_planner(&table);
  }
  return ctx;
}

Context::Context(const ParameterSet& params, const ContextOptions& options)
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
}

TuningKey Context::tuning_key() const {
  TuningKey key;
  key.device = describe_device(*backend_);
  key.parameters = fingerprint_hex(parameter_fingerprint(params_));
  key.log_n = ring_.log_n;
  key.alpha = alpha_;
  for (u32 l = 0; l < levels_.size(); ++l)
    key.levels.push_back(planner_->key_switch_shape(l));
  key.cache_bytes = planner_->cache_bytes();
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

void Context::set_planner(const TuningTable* table) {
  std::vector<LevelShape> shapes;
  for (const LevelData& lv : levels_)
    shapes.push_back({lv.limbs, static_cast<u32>(lv.digits.size())});
  planner_ = std::make_unique<const KeySwitchPlanner>(policy_, backend_->l2_bytes(), ring_.n(),
                                                      alpha_, std::move(shapes), table);
}

bool Context::plan_key_switching() {
  const KeySwitchOptions& ks = policy_.key_switching();
  set_planner(nullptr);  // the shapes tuning_key() reads
  std::optional<TuningTable> table;
  bool tune = false;
  tuning_report_.status = TuningLoadStatus::kNotUsed;
  if (ks.dataflow == Dataflow::kAuto && ks.tuning.use_table) {
    const TuningKey key = tuning_key();
    TuningReport& r = tuning_report_;
    if (ks.tuning.directory.empty()) {
      r.status = TuningLoadStatus::kMissing;
    } else {
      r.file = tuning_file(ks.tuning.directory, key);
      TuningLoad load = load_tuning_table(r.file, key);
      r.status = load.status;
      r.message = load.message;
      if (load.status == TuningLoadStatus::kLoaded) {
        table = std::move(load.table);
      } else if (load.status != TuningLoadStatus::kMissing) {
        emit_warning(ks.tuning, r.message);
      }
    }
    tune = !table && ks.tuning.tune_if_missing;
  }
  set_planner(table ? &*table : nullptr);
  build_output_chunk_plans(tune);
  return tune;
}

Context::~Context() = default;

const LevelData& Context::level(u32 l) const {
  if (l >= levels_.size()) {
    throw LevelError("level " + std::to_string(l) + " does not exist (max level is " +
                     std::to_string(levels_.size() - 1) + ")");
  }
  return levels_[l];
}

}  // namespace theo
