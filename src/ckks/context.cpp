#include "theo/ckks/context.h"

#include <atomic>
#include <string>

#include "theo/errors.h"
#include "theo/math/security.h"
#include "theo/ring/traffic.h"

namespace theo {

namespace {

std::atomic<u64> g_next_context_id{1};

}  // namespace

std::shared_ptr<const Context> Context::create(const ParameterSet& params,
                                               const ContextOptions& options) {
  return std::shared_ptr<const Context>(new Context(params, options));
}

Context::Context(const ParameterSet& params, const ContextOptions& options)
    : id_(g_next_context_id.fetch_add(1)),
      params_(params),
      options_(options),
      policy_(ExecutionPolicy::make({.backend = options.backend,
                                     .threads = options.threads,
                                     .graphs = options.graphs,
                                     .optimizations = options.optimizations},
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

  backend_ = make_backend(ring_, policy_.backend());
  if (options_.traffic) backend_ = make_recording_backend(std::move(backend_), options_.traffic);
  backend_->set_bconv_refined(policy_.bconv_refined());  // before the tables' plans
  build_levels();
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
