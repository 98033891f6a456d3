// GPU descriptors (theo/model/gpu.h): the measured GPUs, and reading a probe's output.

#include "theo/model/gpu.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "theo/errors.h"

namespace theo {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The number right before `unit` on `line` (e.g. "3019.1 GB/s"); false when absent.
bool number_before(const std::string& line, std::string_view unit, double& out) {
  const std::size_t at = line.find(unit);
  if (at == std::string::npos) return false;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  std::size_t begin = end;
  while (begin > 0 &&
         (std::isdigit(static_cast<unsigned char>(line[begin - 1])) != 0 || line[begin - 1] == '.'))
    --begin;
  if (begin == end) return false;
  out = std::stod(line.substr(begin, end - begin));
  return true;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

const std::vector<GpuDescriptor>& known_gpus() {
  // bench/results/h100-probe-2026-11-25.txt and bench/results/h200-probe-2026-11-21.txt, as
  // gpu_from_probe reads them (tests/model/test_gpu.cpp checks that they still agree).
  static const std::vector<GpuDescriptor> gpus = {
      {.key = "h100",
       .name = "NVIDIA H100 80GB HBM3",
       .source = "bench/results/h100-probe-2026-11-25.txt",
       .sms = 132,
       .memory_gib = 79.2,
       .l2_bytes = std::size_t{50} << 20,
       .sm_clock_mhz = 1980,
       .dram_copy_gbps = 3019.1,
       .dram_read_gbps = 3070.7,
       .l2_read_gbps = 7132.8,
       .l2_read_write_gbps = 6244.0,
       .int32_mad_gops = 16658.2,
       .int32_mulhi_gops = 8171.2,
       .montgomery_gmodmul = 2182.4,
       .launch_stream_us = 3.729,
       .launch_graph_us = 0.791,
       .round_trip_us = 9.592},
      {.key = "h200",
       .name = "NVIDIA H200",
       .source = "bench/results/h200-probe-2026-11-21.txt",
       .sms = 132,
       .memory_gib = 139.8,
       .l2_bytes = std::size_t{60} << 20,
       .sm_clock_mhz = 1980,
       .dram_copy_gbps = 4267.5,
       .dram_read_gbps = 4620.2,
       .l2_read_gbps = 8474.4,
       .l2_read_write_gbps = 7265.7,
       .int32_mad_gops = 16683.7,
       .int32_mulhi_gops = 8186.5,
       .montgomery_gmodmul = 2187.5,
       .launch_stream_us = 4.548,
       .launch_graph_us = 0.505,
       .round_trip_us = 9.865},
  };
  return gpus;
}

const GpuDescriptor* find_gpu(std::string_view key_or_name) {
  const std::string want = lower(key_or_name);
  if (want.empty()) return nullptr;
  for (const GpuDescriptor& g : known_gpus())
    if (lower(g.key) == want) return &g;
  // The longest driver name contained in `want` (a backend name such as "cuda (NVIDIA H200)"),
  // else the first whose name contains `want`.
  const GpuDescriptor* best = nullptr;
  for (const GpuDescriptor& g : known_gpus()) {
    if (want.find(lower(g.name)) != std::string::npos &&
        (best == nullptr || g.name.size() > best->name.size()))
      best = &g;
  }
  if (best != nullptr) return best;
  for (const GpuDescriptor& g : known_gpus())
    if (lower(g.name).find(want) != std::string::npos) return &g;
  return nullptr;
}

GpuDescriptor gpu_from_probe(std::string_view probe_text, std::string key, std::string source) {
  GpuDescriptor g;
  g.key = std::move(key);
  g.source = std::move(source);
  std::istringstream in{std::string(probe_text)};
  std::string line;
  double l2_mib = 0;
  while (std::getline(in, line)) {
    double v = 0;
    if (starts_with(line, "h200_probe: ")) {
      const std::string rest = line.substr(12);
      g.name = rest.substr(0, rest.find(", CC"));
      if (number_before(rest, " SMs", v)) g.sms = static_cast<unsigned>(v);
      if (number_before(rest, " GiB", v)) g.memory_gib = v;
      if (number_before(rest, " MiB", v)) l2_mib = v;
    } else if (line.find("max SM clock") != std::string::npos) {
      if (number_before(line.substr(line.find("max SM clock")), " MHz", v)) g.sm_clock_mhz = v;
    } else if (starts_with(line, "D2D copy, cudaMemcpyAsync") && number_before(line, " GB/s", v)) {
      g.dram_copy_gbps = v;
    } else if (starts_with(line, "read-only sweep") && number_before(line, " GB/s", v)) {
      g.dram_read_gbps = v;
    } else if (starts_with(line, "L2 read")) {
      double size = 0;
      if (!number_before(line, " MiB", size) || size >= l2_mib || !number_before(line, " GB/s", v))
        continue;
      double& best = starts_with(line, "L2 read-only") ? g.l2_read_gbps : g.l2_read_write_gbps;
      best = std::max(best, v);
    } else if (starts_with(line, "mad.lo.u32") && number_before(line, " Gop/s", v)) {
      g.int32_mad_gops = v;
    } else if (starts_with(line, "mul.hi.u32") && number_before(line, " Gop/s", v)) {
      g.int32_mulhi_gops = v;
    } else if (starts_with(line, "Montgomery modmul") && number_before(line, " Gmodmul/s", v)) {
      g.montgomery_gmodmul = v;
    } else if (starts_with(line, "stream: 1000 launches") && number_before(line, " us/kernel", v)) {
      g.launch_stream_us = v;
    } else if (starts_with(line, "graph of 1000 nodes") && number_before(line, " us/kernel", v)) {
      g.launch_graph_us = v;
    } else if (line.find("round trip") != std::string::npos && number_before(line, " us/trip", v)) {
      g.round_trip_us = v;
    }
  }
  g.l2_bytes = static_cast<std::size_t>(l2_mib * 1024 * 1024);
  if (g.name.empty() || g.l2_bytes == 0 || !(g.dram_copy_gbps > 0) || !(g.l2_read_write_gbps > 0)) {
    throw ParameterError("gpu_from_probe: " + g.source +
                         " is not a probe output with the device line, the DRAM copy and the L2 "
                         "read + write rows");
  }
  return g;
}

nlohmann::json to_json(const GpuDescriptor& g) {
  return {{"key", g.key},
          {"name", g.name},
          {"source", g.source},
          {"sms", g.sms},
          {"memory_gib", g.memory_gib},
          {"l2_bytes", g.l2_bytes},
          {"sm_clock_mhz", g.sm_clock_mhz},
          {"dram_copy_gbps", g.dram_copy_gbps},
          {"dram_read_gbps", g.dram_read_gbps},
          {"l2_read_gbps", g.l2_read_gbps},
          {"l2_read_write_gbps", g.l2_read_write_gbps},
          {"int32_mad_gops", g.int32_mad_gops},
          {"int32_mulhi_gops", g.int32_mulhi_gops},
          {"montgomery_gmodmul", g.montgomery_gmodmul},
          {"launch_stream_us", g.launch_stream_us},
          {"launch_graph_us", g.launch_graph_us},
          {"round_trip_us", g.round_trip_us}};
}

GpuDescriptor gpu_from_json(const nlohmann::json& j) {
  try {
    GpuDescriptor g;
    g.key = j.at("key").get<std::string>();
    g.name = j.at("name").get<std::string>();
    g.source = j.value("source", std::string());
    g.sms = j.value("sms", 0u);
    g.memory_gib = j.value("memory_gib", 0.0);
    g.l2_bytes = j.at("l2_bytes").get<std::size_t>();
    g.sm_clock_mhz = j.value("sm_clock_mhz", 0.0);
    g.dram_copy_gbps = j.at("dram_copy_gbps").get<double>();
    g.dram_read_gbps = j.value("dram_read_gbps", 0.0);
    g.l2_read_gbps = j.value("l2_read_gbps", 0.0);
    g.l2_read_write_gbps = j.at("l2_read_write_gbps").get<double>();
    g.int32_mad_gops = j.value("int32_mad_gops", 0.0);
    g.int32_mulhi_gops = j.value("int32_mulhi_gops", 0.0);
    g.montgomery_gmodmul = j.value("montgomery_gmodmul", 0.0);
    g.launch_stream_us = j.value("launch_stream_us", 0.0);
    g.launch_graph_us = j.value("launch_graph_us", 0.0);
    g.round_trip_us = j.value("round_trip_us", 0.0);
    if (!(g.dram_copy_gbps > 0) || !(g.l2_read_write_gbps > 0))
      throw ParameterError("GPU descriptor '" + g.key + "': the ceilings must be > 0");
    return g;
  } catch (const nlohmann::json::exception& e) {
    throw ParameterError(std::string("GPU descriptor JSON: ") + e.what());
  }
}

GpuDescriptor load_gpu(const std::string& key_or_path) {
  if (const GpuDescriptor* g = find_gpu(key_or_path);
      g != nullptr && key_or_path.find('/') == std::string::npos)
    return *g;
  std::ifstream f(key_or_path);
  if (!f) {
    std::string keys;
    for (const GpuDescriptor& g : known_gpus())
      keys += (keys.empty() ? "" : ", ") + g.key;
    throw ParameterError("GPU '" + key_or_path + "': neither a known GPU (" + keys +
                         ") nor a readable descriptor or probe file");
  }
  std::stringstream text;
  text << f.rdbuf();
  const std::string s = text.str();
  const std::size_t first = s.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && s[first] == '{') {
    try {
      return gpu_from_json(nlohmann::json::parse(s));
    } catch (const nlohmann::json::exception& e) {
      throw ParameterError("GPU descriptor " + key_or_path + ": " + e.what());
    }
  }
  std::string key = key_or_path.substr(key_or_path.find_last_of('/') + 1);
  key = key.substr(0, key.find('.'));
  return gpu_from_probe(s, key, key_or_path);
}

}  // namespace theo
