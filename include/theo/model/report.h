#pragma once
// Reports of the traffic model: a recorder's totals per scope, per op and per key-switching step,
// against a GPU's ceilings (theo/model/gpu.h), as JSON records and as printed tables. The raw op
// trace of a recorder, for simulators, is theo/model/traffic_trace.h's.
// docs/traffic-model.md explains the columns.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "theo/model/gpu.h"
#include "theo/model/traffic.h"

namespace theo {

struct BootstrappingKeys;  // theo/circuits/bootstrapper.h

// One total against the ceilings. `measured_us` is the time the achieved bandwidth and the ratios
// to the bounds use (0: the profiled time).
nlohmann::json totals_json(const TrafficTotals& t, const GpuDescriptor& gpu, double measured_us);
// Per scope below `root` (relative paths) and per op within it, averaged over `passes`.
nlohmann::json scopes_json(const TrafficRecorder& rec, const std::string& root, double passes,
                           const GpuDescriptor& gpu);
nlohmann::json ops_json(const TrafficRecorder& rec, const std::string& root, double passes,
                        const GpuDescriptor& gpu);
// The key-switching steps (ModUp, KeyMult, ModDown) summed over every scope they appear in.
std::map<std::string, TrafficTotals> key_switch_steps(const TrafficRecorder& rec);

// A table: the header line, then one row per total (printf to stdout).
void print_table_header(const std::string& first_column);
void print_table_row(const std::string& label, const TrafficTotals& t, const GpuDescriptor& gpu,
                     double measured_us);
// One row per scope directly below `scope`, and "(rest)" for the calls made in `scope` itself.
void print_stages(const TrafficRecorder& rec, const std::string& scope, double passes,
                  const GpuDescriptor& gpu);

// The switching-key halves and linear-transform plaintexts a bootstrapping streams, per phase,
// from the recorder's per-call records of the "Boot" scope (keep_records), against the GPU's DRAM
// ceiling; and the key set's size expanded and with the a halves as seeds. Both print a table.
nlohmann::json key_stream_json(const TrafficRecorder& rec, double passes, const GpuDescriptor& gpu);
nlohmann::json key_set_json(const BootstrappingKeys& keys);

}  // namespace theo
