#pragma once
// ExecutionPolicy: every execution setting of one Context in one immutable value, made once by
// Context::create from ContextOptions (backend, threads, graphs, Optimizations) and the THEO_*
// environment variables (theo/common/environment.h, read there and nowhere deeper). Code below
// the Context asks the policy, never the environment or the options, so a setting cannot change
// while a Context lives: changing a variable afterwards has no effect on it.
//
// docs/configuration.md lists every setting, where it comes from and what reads it.

#include "theo/backend/factory.h"
#include "theo/common/environment.h"
#include "theo/plan/dataflow_selection.h"
#include "theo/plan/optimizations.h"

namespace theo {

// What the caller asked for (the ContextOptions fields that concern execution).
struct ExecutionRequest {
  BackendChoice backend = BackendChoice::kAuto;
  unsigned threads = 0;
  bool graphs = true;
  Optimizations optimizations;
  KeySwitchOptions key_switching;
};

class ExecutionPolicy {
 public:
  // The request with the environment applied: THEO_BACKEND resolves kAuto, THEO_FUSION /
  // THEO_OUTPUT_CHUNKING / THEO_GRAPHS = 0 turn their mechanism off, THEO_PDL / THEO_NTT_* become
  // kernel tuning overrides. Output chunking is in effect only with fusion and multi-poly caching
  // (its chunk stages are built from both). The key-switching options are checked
  // (ParameterError) and an empty tuning directory becomes default_tuning_dir() of the
  // environment's XDG_CACHE_HOME / HOME.
  static ExecutionPolicy make(const ExecutionRequest& request, const Environment& env);

  // The backend to make (implementation, threads, kernel tuning).
  const BackendRequest& backend() const { return backend_; }
  // The memory-hierarchy switches in effect (Optimizations documents each).
  const Optimizations& optimizations() const { return opt_; }
  bool fusion() const { return opt_.fusion; }
  bool bconv_refined() const { return opt_.bconv_refined; }
  bool multi_poly_caching() const { return opt_.multi_poly_caching; }
  bool pipelining() const { return opt_.pipelining; }
  bool output_chunking() const { return opt_.output_chunking; }
  // Context::capture records a graph (ContextOptions::graphs, Optimizations::graphs and
  // THEO_GRAPHS all on); otherwise a Graph runs its function again at each replay.
  bool graphs() const { return opt_.graphs; }
  // The key-switching dataflow request and where tuning tables live
  // (theo/plan/dataflow_selection.h).
  const KeySwitchOptions& key_switching() const { return key_switching_; }
  // The environment as it was read at creation.
  const Environment& environment() const { return env_; }

 private:
  ExecutionPolicy() = default;
  BackendRequest backend_;
  Optimizations opt_;
  KeySwitchOptions key_switching_;
  Environment env_;
};

}  // namespace theo
