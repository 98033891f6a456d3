#pragma once
// The level planner: where bootstrapping goes in a circuit, decided from each step's depth
// instead of by hand-placed bootstrap calls. Every workload (HELR training, CNN inference, ...)
// uses this one planner.
//
// A circuit is a sequence of steps applied to a carried ciphertext (the weights of a training
// loop, the activations of a network). Each step declares the levels it consumes (its depth; see
// `depth` below). The planner keeps the carried ciphertext's level and bootstraps it just before a
// step whose depth no longer fits above the floor level, so that bootstrapping happens as late,
// and therefore as rarely, as the parameters allow.
//
//   LevelBudget   pure arithmetic on level numbers, no ciphertexts: static planning. plan(steps,
//                 start_level) says before which steps a bootstrapping happens and how many there
//                 are, before any encryption work; a step deeper than one bootstrapping can
//                 provide is rejected there (LevelError naming the step). A workload checks its
//                 whole model this way before it encrypts anything.
//   LevelProgram  a circuit with several live ciphertexts (a network's residual branch, a ReLU's
//                 input kept beside its sign): plan(program, levels) places the fewest
//                 bootstrappings, between the components of a composite polynomial too.
//   LevelPlanner  the same rule at run time, on ciphertexts, through an existing Bootstrapper:
//                 ensure(ct, depth) bootstraps ct when (and only when) the step would not fit;
//                 bootstrap(ct) where a static plan says so. Both count the bootstrappings.
//
// Levels: a bootstrapped ciphertext comes out at Bootstrapper::output_level(). A workload that
// spends levels right after each bootstrapping to unpack the refreshed ciphertext (HELR splits its
// packed weight state into two ciphertexts: one plaintext product) declares them as
// `unpack_depth`; the budget then starts each refreshed span at output_level() - unpack_depth.
// The floor is the lowest level a step may end on (0: Bootstrapper takes level-0 input).
//
// Example (static, then at run time):
//   LevelBudget budget = LevelBudget::of(boot);
//   std::vector<LevelStep> steps(32, {"iteration", 6});
//   LevelPlan plan = budget.plan(steps, ctx->default_encryption_level());   // throws if too deep
//   LevelPlanner planner(boot, keys);
//   for (...) { planner.ensure(state, 6, "iteration"); state = step(state); }

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "theo/common.h"

namespace theo {

class Bootstrapper;
class Ciphertext;
struct BootstrappingKeys;

// Levels consumed by the usual steps (what a LevelStep declares).
namespace depth {
// ciphertext x plaintext or constant, rescaled.
inline constexpr u32 kPlainProduct = 1;
// ciphertext x ciphertext, relinearized and rescaled.
inline constexpr u32 kProduct = 1;
// Rotations, conjugations, additions: no level.
inline constexpr u32 kRotation = 0;
// A Chebyshev series of `degree` evaluated by PolynomialEvaluator: ceil(log2(degree + 1)), plus
// one for the affine map onto [-1, 1] when the interval is not [-1, 1] (`affine`).
u32 polynomial(u32 degree, bool affine = false);
}  // namespace depth

// One step of a circuit as the planner sees it.
struct LevelStep {
  std::string name;
  u32 depth = 0;  // levels the step consumes on the carried ciphertext
  // A composite step (a composite polynomial): the depths of its components, summing to `depth`,
  // between which a bootstrapping may go. Such a step may be deeper than one bootstrapping
  // provides as long as every component fits. Empty: the step is indivisible.
  std::vector<u32> components = {};
};

// The outcome of LevelBudget::plan: per step, whether a bootstrapping comes first, and the level
// the carried ciphertext has before and after it.
struct LevelPlan {
  struct Entry {
    std::string name;
    u32 depth = 0;
    bool bootstrap_before = false;
    u32 level_in = 0;   // level the step starts from (after the bootstrapping, if any)
    u32 level_out = 0;  // level_in - depth (plus the refresh inside a composite step)
    // Composite steps: the components before which a bootstrapping goes (indices >= 1).
    std::vector<u32> bootstrap_inside;
  };
  std::vector<Entry> steps;
  u32 bootstraps = 0;
  u32 start_level = 0;
  u32 refreshed_level = 0;  // level a refreshed span starts at
  // One line per step: "  3 iteration          depth 6  12 -> 6  [bootstrap before]".
  std::string describe() const;
};

// A circuit with several live ciphertexts: a straight-line program on values. Values
// 0 .. inputs - 1 are the program's inputs; op k reads some values and makes value inputs + k,
// at level min(levels of its inputs) - depth (an addition has depth 0, a product or a linear layer
// 1, a polynomial its degree's depth). A value read by a later op stays live until then, at the
// level it was made (or refreshed) at; a bootstrapping refreshes one value to the budget's
// refreshed level. A composite polynomial is a chain of ops (add_composite), so that a
// bootstrapping may go between its components, and its input may stay live beside the chain (the
// ReLU's x in x * gate(x)).
class LevelProgram {
 public:
  struct Op {
    std::string name;
    std::vector<u32> inputs;  // value ids
    u32 depth = 0;
  };
  explicit LevelProgram(u32 inputs = 1);
  // Appends an op; returns the id of the value it makes. ParameterError for an unknown input.
  u32 add(std::string name, std::vector<u32> inputs, u32 depth);
  // Components of a composite polynomial applied to x, one op each ("name.1", "name.2", ...);
  // with `product_with_input`, then "name.product" = x * chain (depth 1). Returns the last value.
  u32 add_composite(const std::string& name, u32 x, std::span<const u32> component_depths,
                    bool product_with_input);
  u32 inputs() const { return inputs_; }
  u32 values() const { return inputs_ + static_cast<u32>(ops_.size()); }
  const std::vector<Op>& ops() const { return ops_; }
  // "input 0", or the name of the op that makes the value.
  std::string value_name(u32 value) const;

 private:
  u32 inputs_ = 1;
  std::vector<Op> ops_;
};

// The outcome of LevelBudget::plan for a program: before each op, the values bootstrapped first;
// the levels every op reads and makes. The plan has the fewest bootstrappings possible (a dynamic
// program over the levels of the live values); among those, the highest level at the end.
struct ProgramPlan {
  struct Entry {
    std::string name;
    u32 depth = 0;
    std::vector<u32> bootstrap_before;  // value ids refreshed just before this op
    std::vector<u32> input_levels;      // the levels the op reads its inputs at
    u32 level_out = 0;
  };
  std::vector<Entry> ops;
  std::vector<u32> input_levels;  // of the program's inputs at the start
  u32 refreshed_level = 0;
  u32 bootstraps = 0;
  // Bootstrappings that refresh a value other than the one the previous op made (a side input
  // kept live, e.g. a ReLU's input or a residual branch).
  u32 side_bootstraps = 0;
  // One line per op with its levels; bootstrapped values named.
  std::string describe(const LevelProgram& program) const;
};

class LevelBudget {
 public:
  // refreshed_level: the level each span starts at after a bootstrapping (output level minus any
  // unpacking); floor_level: the lowest level a step may end on.
  LevelBudget(u32 refreshed_level, u32 floor_level = 0);
  // The budget a Bootstrapper provides: output_level() - unpack_depth, floor input_level() (the
  // level it takes its input at). LevelError when unpack_depth leaves no level.
  static LevelBudget of(const Bootstrapper& boot, u32 unpack_depth = 0);
  // A circuit without bootstrapping: every step must fit in the starting level.
  static LevelBudget without_bootstrapping(u32 floor_level = 0);

  bool can_bootstrap() const { return can_bootstrap_; }
  u32 refreshed_level() const { return refreshed_; }
  u32 floor_level() const { return floor_; }
  // The deepest step a refreshed span can hold.
  u32 max_step_depth() const { return refreshed_ > floor_ ? refreshed_ - floor_ : 0; }
  // Whether a step of `depth` levels fits on a ciphertext at `level`.
  bool fits(u32 level, u32 depth) const { return level >= floor_ + depth; }
  // LevelError naming the step when no bootstrapping can provide its depth.
  void check(const LevelStep& step) const;

  // Static plan of `steps` applied in order to a ciphertext starting at `start_level`. Checks
  // every step first (LevelError naming the first one too deep: before any encryption work).
  LevelPlan plan(std::span<const LevelStep> steps, u32 start_level) const;
  // Bootstrappings `steps` will need (plan(...).bootstraps).
  u32 count_bootstraps(std::span<const LevelStep> steps, u32 start_level) const;
  // Plan of a program whose inputs start at `input_levels` (one per input). LevelError naming the
  // first op that no placement of bootstrappings can run (too deep, or no bootstrapping), or when
  // the program keeps too many values live at once to plan exactly.
  ProgramPlan plan(const LevelProgram& program, std::span<const u32> input_levels) const;

 private:
  u32 refreshed_ = 0;
  u32 floor_ = 0;
  bool can_bootstrap_ = true;
};

// The run-time side: bootstraps a carried ciphertext just before a step that would not fit.
// Keeps references to the bootstrapper and keys (they must outlive it). Not
// thread-safe (it counts).
class LevelPlanner {
 public:
  LevelPlanner(const Bootstrapper& boot, const BootstrappingKeys& keys);

  // LevelBudget::of(boot): no unpacking. A workload that unpacks after each bootstrapping plans
  // with LevelBudget::of(boot, unpack_depth) and calls bootstrap() where that plan says.
  const LevelBudget& budget() const { return budget_; }
  // Makes sure `ct` has `depth` levels above the floor for the step `step`: bootstraps it first
  // when it has not (the result at Bootstrapper::output_level()). Returns whether it did.
  // LevelError naming the step when its depth exceeds what bootstrapping provides (ct unchanged).
  bool ensure(Ciphertext& ct, u32 depth, std::string_view step = "step");
  // The bootstrapping itself, counted (any input level; output at output_level()).
  Ciphertext bootstrap(const Ciphertext& ct);
  u32 bootstraps() const { return bootstraps_; }
  const Bootstrapper& bootstrapper() const { return boot_; }

 private:
  const Bootstrapper& boot_;
  const BootstrappingKeys& keys_;
  LevelBudget budget_;
  u32 bootstraps_ = 0;
};

}  // namespace theo
