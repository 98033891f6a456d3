#pragma once
// GPU descriptors: the measured ceilings of a GPU as data, for the traffic model's lower bounds
// and for simulators. Each known GPU's numbers are those of a run of the probe
// (shared/tools/h200_probe.cu) on that card; a new GPU is added from its probe output
// (gpu_from_probe), at run time (load_gpu) or to the built-in list.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace theo {

struct GpuDescriptor {
  std::string key;     // short name: "h100", "h200"
  std::string name;    // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string source;  // where the numbers were measured (a probe output file)
  unsigned sms = 0;
  double memory_gib = 0;
  std::size_t l2_bytes = 0;
  double sm_clock_mhz = 0;
  // Bandwidths in GB/s (1e9 bytes per second). Copies and read + write sweeps count the bytes
  // read and the bytes written.
  double dram_copy_gbps = 0;      // device-to-device copy of 4 GiB
  double dram_read_gbps = 0;      // read-only sweep of 4 GiB
  double l2_read_gbps = 0;        // best read-only rate over buffers that fit the L2
  double l2_read_write_gbps = 0;  // best read + write rate over buffers that fit the L2
  // Integer throughput over the whole GPU.
  double int32_mad_gops = 0;      // mad.lo.u32, G ops/s
  double int32_mulhi_gops = 0;    // mul.hi.u32, G ops/s
  double montgomery_gmodmul = 0;  // 32-bit Montgomery products, G/s
  // Launch costs in microseconds.
  double launch_stream_us = 0;  // one empty kernel per stream launch
  double launch_graph_us = 0;   // one empty kernel node of a replayed graph
  double round_trip_us = 0;     // launch + stream synchronize

  // bytes at the DRAM copy / L2 read + write ceiling, in microseconds.
  double dram_us(double bytes) const { return bytes / (dram_copy_gbps * 1e3); }
  double l2_us(double bytes) const { return bytes / (l2_read_write_gbps * 1e3); }
};

// The GPUs measured so far (H100, H200), in that order.
const std::vector<GpuDescriptor>& known_gpus();
// The known GPU whose key is `key_or_name` or whose driver name contains it (case-insensitive,
// e.g. "h200", "H100 80GB", a backend's "cuda (NVIDIA H200)"); nullptr when none matches.
const GpuDescriptor* find_gpu(std::string_view key_or_name);

// The descriptor a probe run printed (the text of shared/tools/h200_probe.cu's output). `key`
// names it; `source` says where the text came from. ParameterError when a ceiling is missing.
GpuDescriptor gpu_from_probe(std::string_view probe_text, std::string key, std::string source);
// A known GPU's key, a descriptor JSON file (to_json's form) or a probe output file.
GpuDescriptor load_gpu(const std::string& key_or_path);

nlohmann::json to_json(const GpuDescriptor& g);
GpuDescriptor gpu_from_json(const nlohmann::json& j);

}  // namespace theo
