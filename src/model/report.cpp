// Reports of the traffic model (theo/model/report.h).

#include "theo/model/report.h"

#include <cstdio>

namespace theo {

namespace {

// The time the bandwidth and the ratios use: the measured one when there is one.
double used_us(const TrafficTotals& t, double measured_us) {
  return measured_us > 0 ? measured_us : t.time_us;
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

// True when `s` is `root` or nested inside it; `rel` gets the path below `root` ("" when equal).
bool relative(const std::string& s, const std::string& root, std::string& rel) {
  if (root.empty()) {
    rel = s;
    return true;
  }
  if (s == root) {
    rel.clear();
    return true;
  }
  if (s.size() > root.size() && s.compare(0, root.size(), root) == 0 && s[root.size()] == '/') {
    rel = s.substr(root.size() + 1);
    return true;
  }
  return false;
}

// A ratio in 6 characters: two decimals below 100 (the GPU's range), none above (the CPU's).
std::string short_ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 100 ? "%.2f" : "%.0f", x);
  return buf;
}

}  // namespace

nlohmann::json totals_json(const TrafficTotals& t, const GpuDescriptor& gpu, double measured_us) {
  const double us = used_us(t, measured_us);
  nlohmann::json j = {{"calls", t.calls},
                      {"bytes_read", t.bytes_read},
                      {"bytes_written", t.bytes_written},
                      {"traffic_GB", t.bytes() / 1e9},
                      {"table_bytes", t.table_bytes},
                      {"macs", t.macs},
                      {"profiled_us", t.time_us},
                      {"bound_l2_us", gpu.l2_us(t.bytes())},
                      {"bound_dram_us", gpu.dram_us(t.bytes())},
                      {"achieved_TBps", ratio(t.bytes(), us * 1e6)},
                      {"x_l2_bound", ratio(us, gpu.l2_us(t.bytes()))},
                      {"x_dram_bound", ratio(us, gpu.dram_us(t.bytes()))}};
  if (measured_us > 0) j["measured_us"] = measured_us;
  return j;
}

nlohmann::json scopes_json(const TrafficRecorder& rec, const std::string& root, double passes,
                           const GpuDescriptor& gpu) {
  nlohmann::json j = nlohmann::json::object();
  std::string rel;
  for (const auto& [scope, t] : rec.by_scope())
    if (relative(scope, root, rel) && !rel.empty())
      j[rel] = totals_json(t.per_pass(passes), gpu, 0);
  return j;
}

nlohmann::json ops_json(const TrafficRecorder& rec, const std::string& root, double passes,
                        const GpuDescriptor& gpu) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [op, t] : rec.by_op(root))
    j[op] = totals_json(t.per_pass(passes), gpu, 0);
  return j;
}

std::map<std::string, TrafficTotals> key_switch_steps(const TrafficRecorder& rec) {
  std::map<std::string, TrafficTotals> steps;
  for (const auto& [key, cell] : rec.cells()) {
    const std::string& s = key.first;
    const std::size_t slash = s.rfind('/');
    const std::string last = slash == std::string::npos ? s : s.substr(slash + 1);
    if (last == "ModUp" || last == "KeyMult" || last == "ModDown") steps[last] += cell;
  }
  return steps;
}

void print_table_header(const std::string& first_column) {
  std::printf("%-34s %7s %9s %8s %9s %10s %10s %7s %9s %9s %6s %6s\n", first_column.c_str(),
              "calls", "GB", "table MB", "GMAC", "prof us", "time us", "TB/s", "L2 lb us",
              "DRAM lb", "x L2", "x DRAM");
}

void print_table_row(const std::string& label, const TrafficTotals& t, const GpuDescriptor& gpu,
                     double measured_us) {
  const double us = used_us(t, measured_us);
  const double l2 = gpu.l2_us(t.bytes()), dram = gpu.dram_us(t.bytes());
  std::printf("%-34s %7llu %9.4f %8.2f %9.4f %10.1f %10.1f %7.3f %9.1f %9.1f %6s %6s\n",
              label.c_str(), static_cast<unsigned long long>(t.calls), t.bytes() / 1e9,
              t.table_bytes / 1e6, t.macs / 1e9, t.time_us, us, ratio(t.bytes(), us * 1e6), l2,
              dram, short_ratio(ratio(us, l2)).c_str(), short_ratio(ratio(us, dram)).c_str());
}

void print_stages(const TrafficRecorder& rec, const std::string& scope, double passes,
                  const GpuDescriptor& gpu) {
  TrafficTotals rest;
  for (const auto& [key, t] : rec.cells())
    if (key.first == scope) rest += t;
  for (const auto& [s, t] : rec.by_scope()) {
    if (s.size() <= scope.size() + 1 || s.compare(0, scope.size() + 1, scope + "/") != 0) continue;
    const std::string rel = s.substr(scope.size() + 1);
    if (rel.find('/') != std::string::npos) continue;
    print_table_row("  " + rel, t.per_pass(passes), gpu, 0);
  }
  if (rest.calls > 0) print_table_row("  (rest)", rest.per_pass(passes), gpu, 0);
}

}  // namespace theo
