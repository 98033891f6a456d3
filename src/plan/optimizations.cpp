// The bootstrapping levers of Optimizations by name (theo/plan/optimizations.h).

#include "theo/plan/optimizations.h"

#include "theo/errors.h"

namespace theo {

namespace {

bool* lever(Optimizations& o, std::string_view name) {
  if (name == "inplace_constants") return &o.inplace_constants;
  if (name == "batched_evalmod") return &o.batched_evalmod;
  if (name == "lazy_polynomial") return &o.circuits.lazy_polynomial;
  if (name == "slot_to_coeff_first") return &o.circuits.slot_to_coeff_first;
  if (name == "merged_evalmod_tail") return &o.circuits.merged_evalmod_tail;
  return nullptr;
}

std::string known() {
  std::string s;
  for (const std::string& n : bootstrap_lever_names())
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::vector<std::string> bootstrap_lever_names() {
  return {"inplace_constants", "batched_evalmod", "lazy_polynomial", "slot_to_coeff_first",
          "merged_evalmod_tail"};
}

void set_bootstrap_lever(Optimizations& o, std::string_view name, bool on) {
  bool* b = lever(o, name);
  if (b == nullptr) {
    throw ParameterError("unknown bootstrapping lever '" + std::string(name) +
                         "' (known: " + known() + ")");
  }
  *b = on;
}

bool bootstrap_lever(const Optimizations& o, std::string_view name) {
  Optimizations copy = o;
  bool* b = lever(copy, name);
  if (b == nullptr) {
    throw ParameterError("unknown bootstrapping lever '" + std::string(name) +
                         "' (known: " + known() + ")");
  }
  return *b;
}

Optimizations with_bootstrap_levers(Optimizations base, std::string_view spec) {
  if (spec == "default") return base;
  const bool all = spec == "all";
  for (const std::string& n : bootstrap_lever_names())
    set_bootstrap_lever(base, n, all);
  if (all || spec == "baseline") return base;
  const std::string whole(spec);
  for (std::size_t start = 0;;) {
    const std::size_t plus = whole.find('+', start);
    const std::string name = whole.substr(start, plus == std::string::npos ? plus : plus - start);
    if (name.empty()) throw ParameterError("lever list '" + whole + "': an empty name");
    set_bootstrap_lever(base, name, true);
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return base;
}

}  // namespace theo
