#pragma once
// The op trace of a recorded run as a JSON document (format "theo-trace", version 1;
// docs/trace-format.md): every backend call in issue order with its scope and modelled cost
// (theo/model/traffic.h), plus a few facts about the run. The HMC simulator (python -m
// theodosian.sim) and anything else that wants to replay the op stream on a model read it.
//
//   auto rec = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.keep_records = true});
//   ... run under ContextOptions::traffic = rec ...
//   TraceInfo info{.workload = "boot", .preset = "bootparam_40", .n = 65536};
//   std::string doc = trace_json(rec->records(), info);

#include <map>
#include <span>
#include <string>

#include "theo/model/traffic.h"

namespace theo {

// What the document's "meta" object says about the run (empty strings and zeros are left out,
// except `n`, which is required).
struct TraceInfo {
  std::string workload;    // e.g. "boot", "hmult", "hrot"
  std::string preset;      // parameter set name
  std::string backend;     // "cpu" or "cuda"
  std::string device;      // Backend::name()
  std::string git_commit;  // of the library that ran it, when known
  std::string command;     // the command line or call that made it
  u32 n = 0;
  u32 dnum = 0;       // key-switching digits at the top level
  u32 alpha = 0;      // limbs per digit (= special primes)
  u32 max_level = 0;  // highest level of the parameter set
  u32 level = 0;      // the workload's input level
  u32 limbs = 0;      // limbs of the input level
  bool synthetic = false;
  std::map<std::string, std::string> extra;  // more string fields for "meta"
};

// The trace document of `records` (issue order, as TrafficRecorder::records() returns them).
// Throws ParameterError when info.n is 0.
std::string trace_json(std::span<const TrafficRecord> records, const TraceInfo& info);

}  // namespace theo
