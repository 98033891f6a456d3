#pragma once
// Bootstrapper's private state, shared by its source files (bootstrapper.cpp, the diagnostics).

#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "theo/circuits/bootstrapper.h"

namespace theo {

struct Bootstrapper::Impl {
  Impl(std::shared_ptr<const Context> c) : ev(c), encoder(c) {}
  Evaluator ev;
  Encoder encoder;
  BootstrapConfig config;
  u32 top = 0;
  u32 cts_levels = 0, stc_levels = 0;
  long double q0 = 0;
  long double raised_scale = 0;
  std::shared_ptr<const BConvPlan> raise_plan;  // level-0 primes -> the top level's others
  Basis raise_rest;
  // The top level's limbs as runs [start, start + count): copied from level 0 or from raise_rest.
  std::vector<std::tuple<u32, u32, bool>> raise_runs;
  std::vector<LinearTransform> cts, stc;
  std::optional<EvalMod> mod;
  std::vector<int> subsum_rotations;
  long double gain = 1;       // EvalMod output gain
  bool stc_first = false;     // Optimizations::Circuits::slot_to_coeff_first
  long double shrink = 1;     // SlotToCoeff-first: the level-0 message divided by this
  i64 scale_up = 1;           // 2^k: Delta' = 2^k Delta_0 at ModRaise
  long double cts_scale = 0;  // folded into the first CoeffToSlot matrix
  long double stc_scale = 0;  // folded into the last SlotToCoeff matrix
};

}  // namespace theo
