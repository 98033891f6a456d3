#pragma once
// The JSON records the benchmark programs print and write (docs/benchmarks.md).

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_info.h"

namespace theo::bench {

// A header record: what every program says about the run (commit, whether the tree is dirty,
// date, host, CPU), then `fields` (the mode, the device, the parameters...).
inline nlohmann::json header_record(const nlohmann::json& fields) {
  nlohmann::json h = {{"record", "header"},       {"git_commit", git_commit()},
                      {"git_dirty", git_dirty()}, {"date", utc_now()},
                      {"host", host_name()},      {"cpu", cpu_model()}};
  h.update(fields);
  return h;
}

// Writes records (each a JSON text) to `path` as one JSON array, a record a line.
inline void write_json_array(const std::string& path, const std::vector<std::string>& records) {
  std::ofstream f(path);
  f << "[\n";
  for (std::size_t i = 0; i < records.size(); ++i)
    f << "  " << records[i] << (i + 1 < records.size() ? ",\n" : "\n");
  f << "]\n";
}

}  // namespace theo::bench
