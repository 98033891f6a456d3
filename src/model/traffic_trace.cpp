// trace_json: the "theo-trace" v1 document (docs/trace-format.md) of recorded backend calls.

#include "theo/model/traffic_trace.h"

#include <bit>
#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "theo/errors.h"

namespace theo {

namespace {

// Byte and MAC counts are whole numbers below 2^53: written as integers.
nlohmann::json count(double x) {
  if (x >= 0 && x < 9.0e15 && std::floor(x) == x) return static_cast<std::int64_t>(x);
  return x;
}

}  // namespace

std::string trace_json(std::span<const TrafficRecord> records, const TraceInfo& info) {
  if (info.n == 0) throw ParameterError("trace_json: TraceInfo::n (the ring degree) is 0");
  nlohmann::json meta = {{"n", info.n},
                         {"log_n", std::countr_zero(info.n)},
                         {"word_bytes", 4},
                         {"synthetic", info.synthetic}};
  auto text = [&](const char* key, const std::string& v) {
    if (!v.empty()) meta[key] = v;
  };
  auto number = [&](const char* key, u32 v) {
    if (v != 0) meta[key] = v;
  };
  text("workload", info.workload);
  text("preset", info.preset);
  text("backend", info.backend);
  text("device", info.device);
  text("git_commit", info.git_commit);
  text("command", info.command);
  number("dnum", info.dnum);
  number("alpha", info.alpha);
  number("max_level", info.max_level);
  meta["level"] = info.level;
  number("limbs", info.limbs);
  for (const auto& [k, v] : info.extra)
    meta[k] = v;

  // One op per line: the file stays readable and diffable at thousands of ops.
  std::string out =
      "{\"format\": \"theo-trace\", \"version\": 1,\n\"meta\": " + meta.dump() + ",\n\"ops\": [";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TrafficRecord& r = records[i];
    const nlohmann::json op = {{"scope", r.scope},
                               {"op", r.op},
                               {"polys", r.cost.polys},
                               {"limbs", r.cost.limbs},
                               {"n", r.cost.n},
                               {"bytes_read", count(r.cost.bytes_read)},
                               {"bytes_written", count(r.cost.bytes_written)},
                               {"table_bytes", count(r.cost.table_bytes)},
                               {"macs", count(r.cost.macs)}};
    out += i == 0 ? "\n" : ",\n";
    out += op.dump();
  }
  out += "\n]}\n";
  return out;
}

}  // namespace theo
