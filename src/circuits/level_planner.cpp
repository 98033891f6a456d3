#include "theo/circuits/level_planner.h"

#include <bit>
#include <cstdio>
#include <string>

#include "theo/circuits/bootstrapper.h"
#include "theo/ckks/ciphertext.h"
#include "theo/errors.h"

namespace theo {

u32 depth::polynomial(u32 degree, bool affine) {
  const u32 d = degree <= 1 ? (degree == 1 ? 1u : 0u)
                            : static_cast<u32>(std::bit_width(degree));  // ceil(log2(d + 1))
  return d + (affine ? 1u : 0u);
}

std::string LevelPlan::describe() const {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof line,
                "start level %u, refreshed spans start at %u, %u bootstrapping(s)\n", start_level,
                refreshed_level, bootstraps);
  out += line;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Entry& e = steps[i];
    std::snprintf(line, sizeof line, "  %3zu %-20s depth %2u  %2u -> %2u%s", i, e.name.c_str(),
                  e.depth, e.level_in, e.level_out,
                  e.bootstrap_before ? "  [bootstrap before]" : "");
    out += line;
    for (const u32 k : e.bootstrap_inside)
      out += "  [bootstrap before component " + std::to_string(k + 1) + "]";
    out += "\n";
  }
  return out;
}

LevelBudget::LevelBudget(u32 refreshed_level, u32 floor_level)
    : refreshed_(refreshed_level), floor_(floor_level) {
  if (refreshed_level < floor_level) {
    throw LevelError("LevelBudget: the refreshed level " + std::to_string(refreshed_level) +
                     " is below the floor level " + std::to_string(floor_level));
  }
}

// The floor is the bootstrapper's input level: with SlotToCoeff first it takes its input above
// level 0, and a span that ended lower could not be bootstrapped.
LevelBudget LevelBudget::of(const Bootstrapper& boot, u32 unpack_depth) {
  const u32 provided = boot.output_level() - boot.input_level();
  if (unpack_depth >= provided) {
    throw LevelError("LevelBudget: unpacking " + std::to_string(unpack_depth) +
                     " level(s) after each bootstrapping leaves none of the " +
                     std::to_string(provided) + " it provides");
  }
  return LevelBudget(boot.output_level() - unpack_depth, boot.input_level());
}

LevelBudget LevelBudget::without_bootstrapping(u32 floor_level) {
  LevelBudget b(floor_level, floor_level);
  b.can_bootstrap_ = false;
  return b;
}

void LevelBudget::check(const LevelStep& step) const {
  if (!step.components.empty()) {
    u32 sum = 0;
    for (const u32 d : step.components) {
      sum += d;
      if (can_bootstrap_ && d > max_step_depth()) {
        throw LevelError("level planner: a component of step '" + step.name + "' needs " +
                         std::to_string(d) + " levels, but a bootstrapped ciphertext provides " +
                         "only " + std::to_string(max_step_depth()));
      }
    }
    if (sum != step.depth) {
      throw LevelError("level planner: the components of step '" + step.name + "' sum to " +
                       std::to_string(sum) + ", not its depth " + std::to_string(step.depth));
    }
    return;
  }
  if (can_bootstrap_ && step.depth > max_step_depth()) {
    throw LevelError("level planner: step '" + step.name + "' needs " + std::to_string(step.depth) +
                     " levels, but a bootstrapped ciphertext provides only " +
                     std::to_string(max_step_depth()) + " (levels " + std::to_string(floor_) +
                     ".." + std::to_string(refreshed_) +
                     "); split the step or use parameters with more levels");
  }
}

LevelPlan LevelBudget::plan(std::span<const LevelStep> steps, u32 start_level) const {
  for (const LevelStep& s : steps)
    check(s);
  LevelPlan p;
  p.start_level = start_level;
  p.refreshed_level = refreshed_;
  u32 level = start_level;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const LevelStep& s = steps[i];
    LevelPlan::Entry e{s.name, s.depth, false, level, 0, {}};
    if (!s.components.empty() && !fits(level, s.depth) && can_bootstrap_) {
      // A composite step: each component bootstraps just before it when it does not fit.
      for (u32 k = 0; k < s.components.size(); ++k) {
        if (!fits(level, s.components[k])) {
          ++p.bootstraps;
          level = refreshed_;
          if (k == 0) {
            e.bootstrap_before = true;
            e.level_in = level;
          } else {
            e.bootstrap_inside.push_back(k);
          }
        }
        level -= s.components[k];
      }
      e.level_out = level;
      p.steps.push_back(std::move(e));
      continue;
    }
    if (!fits(level, s.depth)) {
      if (!can_bootstrap_) {
        throw LevelError("level planner: step " + std::to_string(i) + " '" + s.name + "' needs " +
                         std::to_string(s.depth) + " levels at level " + std::to_string(level) +
                         " and the circuit has no bootstrapping");
      }
      e.bootstrap_before = true;
      ++p.bootstraps;
      level = refreshed_;
      e.level_in = level;
    }
    level -= s.depth;
    e.level_out = level;
    p.steps.push_back(std::move(e));
  }
  return p;
}

u32 LevelBudget::count_bootstraps(std::span<const LevelStep> steps, u32 start_level) const {
  return plan(steps, start_level).bootstraps;
}

LevelPlanner::LevelPlanner(const Bootstrapper& boot, const BootstrappingKeys& keys)
    : boot_(boot), keys_(keys), budget_(LevelBudget::of(boot)) {}

bool LevelPlanner::ensure(Ciphertext& ct, u32 depth, std::string_view step) {
  const LevelStep s{std::string(step), depth};
  budget_.check(s);
  if (budget_.fits(ct.level(), depth)) return false;
  ct = bootstrap(ct);
  return true;
}

Ciphertext LevelPlanner::bootstrap(const Ciphertext& ct) {
  Ciphertext out = boot_.bootstrap(ct, keys_);
  ++bootstraps_;
  return out;
}

}  // namespace theo
