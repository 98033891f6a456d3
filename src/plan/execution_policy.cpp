#include "theo/plan/execution_policy.h"

namespace theo {

ExecutionPolicy ExecutionPolicy::make(const ExecutionRequest& request, const Environment& env) {
  ExecutionPolicy p;
  p.env_ = env;
  p.backend_.choice = request.backend;
  p.backend_.auto_choice = env.backend;
  p.backend_.threads = request.threads;
  p.backend_.tuning = KernelTuningOverrides::from(env);
  Optimizations& o = p.opt_;
  o = request.optimizations;
  o.fusion = o.fusion && env.fusion;
  o.graphs = o.graphs && request.graphs && env.graphs;
  o.output_chunking = o.output_chunking && env.output_chunking && o.multi_poly_caching && o.fusion;
  validate(request.key_switching);
  p.key_switching_ = request.key_switching;
  if (p.key_switching_.tuning.directory.empty())
    p.key_switching_.tuning.directory =
        default_tuning_dir(env.xdg_cache_home.c_str(), env.home.c_str());
  return p;
}

}  // namespace theo
