// LevelProgram and its exact plan: a dynamic program over the levels of the live values.
//
// Why exact: with one carried ciphertext, bootstrapping as late as possible is optimal, but with
// several live values (a ReLU's input beside its sign chain, a residual branch beside a block) a
// late refresh of one can force an extra refresh of another. The live set is small (a network
// keeps 2-3 ciphertexts), so the states - one level per live value - are few and the minimum is
// found exactly. A value is bootstrapped only just before an op that reads it: it keeps its level
// while it waits, so an earlier refresh is never better.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "theo/circuits/level_planner.h"
#include "theo/errors.h"

namespace theo {

LevelProgram::LevelProgram(u32 inputs) : inputs_(inputs) {
  if (inputs == 0) throw ParameterError("LevelProgram: a program needs at least one input");
}

u32 LevelProgram::add(std::string name, std::vector<u32> inputs, u32 depth) {
  if (inputs.empty()) throw ParameterError("LevelProgram: op '" + name + "' reads no value");
  for (const u32 v : inputs)
    if (v >= values()) {
      throw ParameterError("LevelProgram: op '" + name + "' reads value " + std::to_string(v) +
                           ", which does not exist yet");
    }
  ops_.push_back({std::move(name), std::move(inputs), depth});
  return values() - 1;
}

u32 LevelProgram::add_composite(const std::string& name, u32 x,
                                std::span<const u32> component_depths, bool product_with_input) {
  if (component_depths.empty()) {
    throw ParameterError("LevelProgram: composite '" + name + "' has no components");
  }
  u32 chain = x;
  for (std::size_t i = 0; i < component_depths.size(); ++i)
    chain = add(name + "." + std::to_string(i + 1), {chain}, component_depths[i]);
  if (product_with_input) chain = add(name + ".product", {x, chain}, 1);
  return chain;
}

std::string LevelProgram::value_name(u32 value) const {
  if (value < inputs_) return "input " + std::to_string(value);
  if (value >= values()) throw ParameterError("LevelProgram: no value " + std::to_string(value));
  return ops_[value - inputs_].name;
}

namespace {

// Per op boundary: the live values (sorted ids) and, per state (their levels), the best way in.
struct Node {
  u32 cost = 0;
  std::vector<u32> parent;  // state at the previous boundary
  u32 boot_mask = 0;        // which of the op's inputs were bootstrapped (bit i: inputs[i])
};
using Layer = std::map<std::vector<u32>, Node>;
constexpr std::size_t kMaxStates = 1u << 20;

}  // namespace

ProgramPlan LevelBudget::plan(const LevelProgram& prog, std::span<const u32> input_levels) const {
  const auto& ops = prog.ops();
  const u32 n_in = prog.inputs();
  if (input_levels.size() != n_in) {
    throw ParameterError("LevelBudget::plan: " + std::to_string(input_levels.size()) +
                         " input levels for a program of " + std::to_string(n_in) + " inputs");
  }
  for (const u32 l : input_levels)
    if (l > 255) throw ParameterError("LevelBudget::plan: input level above 255");
  const std::size_t m = ops.size();
  // last_use[v]: the last op reading v (or none); live[k]: values live just before op k.
  std::vector<long> last_use(prog.values(), -1);
  for (std::size_t k = 0; k < m; ++k)
    for (const u32 v : ops[k].inputs)
      last_use[v] = static_cast<long>(k);
  std::vector<std::vector<u32>> live(m + 1);
  for (std::size_t k = 0; k <= m; ++k) {
    const u32 defined = n_in + static_cast<u32>(k);
    for (u32 v = 0; v < defined; ++v)
      if (last_use[v] >= static_cast<long>(k) || (k == m && v + 1 == defined && m > 0)) {
        live[k].push_back(v);
      }
  }
  auto index_in = [](const std::vector<u32>& set, u32 v) {
    return static_cast<std::size_t>(std::lower_bound(set.begin(), set.end(), v) - set.begin());
  };

  std::vector<Layer> layers(m + 1);
  {
    std::vector<u32> s0;
    for (const u32 v : live[0])
      s0.push_back(input_levels[v]);
    layers[0][s0] = Node{};
  }
  for (std::size_t k = 0; k < m; ++k) {
    const LevelProgram::Op& op = ops[k];
    const u32 out = n_in + static_cast<u32>(k);
    // Distinct inputs (an op may read one value twice, a square).
    std::vector<u32> ins = op.inputs;
    std::sort(ins.begin(), ins.end());
    ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
    const u32 choices = can_bootstrap_ ? (1u << ins.size()) : 1u;
    for (const auto& [state, node] : layers[k]) {
      for (u32 mask = 0; mask < choices; ++mask) {
        std::vector<u32> lv = state;
        bool useless = false;
        for (std::size_t i = 0; i < ins.size(); ++i) {
          if (!(mask >> i & 1)) continue;
          u32& l = lv[index_in(live[k], ins[i])];
          if (l >= refreshed_) useless = true;
          l = refreshed_;
        }
        if (useless) continue;
        u32 lo = std::numeric_limits<u32>::max();
        for (const u32 v : ins)
          lo = std::min<u32>(lo, lv[index_in(live[k], v)]);
        if (lo < floor_ + op.depth) continue;
        const u32 level_out = lo - op.depth;
        std::vector<u32> next;
        for (const u32 v : live[k + 1])
          next.push_back(v == out ? level_out : lv[index_in(live[k], v)]);
        const u32 cost = node.cost + static_cast<u32>(__builtin_popcount(mask));
        auto [it, fresh] = layers[k + 1].try_emplace(std::move(next), Node{cost, state, mask});
        if (!fresh && cost < it->second.cost) it->second = Node{cost, state, mask};
      }
    }
    if (layers[k + 1].empty()) {
      std::string why =
          !can_bootstrap_ ? " and the circuit has no bootstrapping"
          : op.depth > max_step_depth()
              ? ", but a bootstrapped ciphertext provides only " + std::to_string(max_step_depth())
              : "";
      throw LevelError("level planner: op " + std::to_string(k) + " '" + op.name + "' needs " +
                       std::to_string(op.depth) + " level(s)" + why);
    }
    if (layers[k + 1].size() > kMaxStates) {
      throw LevelError("level planner: too many live values at op '" + op.name +
                       "' to plan exactly (" + std::to_string(live[k + 1].size()) + ")");
    }
  }

  // The cheapest end state; ties: the highest level of the last value made.
  const Layer& last = layers[m];
  auto best = last.begin();
  for (auto it = last.begin(); it != last.end(); ++it) {
    const u32 l_it = it->first.empty() ? 0 : it->first.back();
    const u32 l_best = best->first.empty() ? 0 : best->first.back();
    if (it->second.cost < best->second.cost ||
        (it->second.cost == best->second.cost && l_it > l_best)) {
      best = it;
    }
  }
  // Walk back along the parents: the bootstrapping choice before every op.
  std::vector<u32> masks(m);
  {
    std::vector<u32> state = best->first;
    for (std::size_t k = m; k-- > 0;) {
      const Node& node = layers[k + 1].at(state);
      masks[k] = node.boot_mask;
      state = node.parent;
    }
  }
  // Replay forward with those choices: the levels of every op.
  ProgramPlan plan;
  plan.refreshed_level = refreshed_;
  plan.input_levels.assign(input_levels.begin(), input_levels.end());
  std::vector<u32> level(prog.values(), 0);
  for (u32 v = 0; v < n_in; ++v)
    level[v] = input_levels[v];
  for (std::size_t k = 0; k < m; ++k) {
    const LevelProgram::Op& op = ops[k];
    std::vector<u32> ins = op.inputs;
    std::sort(ins.begin(), ins.end());
    ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
    ProgramPlan::Entry e;
    e.name = op.name;
    e.depth = op.depth;
    for (std::size_t i = 0; i < ins.size(); ++i)
      if (masks[k] >> i & 1) {
        e.bootstrap_before.push_back(ins[i]);
        level[ins[i]] = refreshed_;
        ++plan.bootstraps;
        if (k == 0 || ins[i] != n_in + k - 1) ++plan.side_bootstraps;
      }
    u32 lo = std::numeric_limits<u32>::max();
    for (const u32 v : op.inputs) {
      e.input_levels.push_back(level[v]);
      lo = std::min(lo, level[v]);
    }
    e.level_out = lo - op.depth;
    level[n_in + k] = e.level_out;
    plan.ops.push_back(std::move(e));
  }
  return plan;
}

std::string ProgramPlan::describe(const LevelProgram& program) const {
  std::string out;
  char line[200];
  std::snprintf(line, sizeof line,
                "%zu ops, refreshed level %u, %u bootstrapping(s) (%u of a side value)\n",
                ops.size(), refreshed_level, bootstraps, side_bootstraps);
  out += line;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const Entry& e = ops[k];
    std::string in;
    for (const u32 l : e.input_levels) {
      if (!in.empty()) in += ',';
      in += std::to_string(l);
    }
    std::snprintf(line, sizeof line, "  %3zu %-22s depth %2u  %6s -> %2u", k, e.name.c_str(),
                  e.depth, in.c_str(), e.level_out);
    out += line;
    for (const u32 v : e.bootstrap_before) {
      out += "  [bootstrap ";
      out += program.value_name(v);
      out += " before]";
    }
    out += "\n";
  }
  return out;
}

}  // namespace theo
