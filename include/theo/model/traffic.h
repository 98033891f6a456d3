#pragma once
// The traffic model: what every backend op must move through global memory and how many core
// modular multiply-adds it must do, recorded per call and summed per scope and per op.
//
//   auto rec = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.profile = true});
//   ContextOptions o;  o.wrap_backend = record_traffic(rec);  // the Context wraps its backend
//   { OpScope s("CoeffToSlot"); ... }    // scopes nest: "Boot/CoeffToSlot/ModUp"
//   rec->by_scope(), rec->by_op("Boot"), rec->total()
//
// Model (docs/traffic-model.md has the table per op): every input word is read once and every
// output word written once, 4 bytes per word (bytes_read, bytes_written); tables (NTT twiddles,
// BConv matrices) separately, each word once per call (table_bytes); core work as modular
// multiply-adds (NTT N/2 log2 N per limb, BConv |S| |D| N, element-wise products one per word).
// It is the least traffic an op can cause when nothing stays on chip between ops: a lower bound
// for one op, and for a sequence the traffic of running it op by op without fusion.
//
// Scopes are OpScopes (theo/ring/op_scope.h): an enabled recorder registers as their observer.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "theo/ring/backend.h"
#include "theo/ring/op_scope.h"

namespace theo {

// What one backend call costs under the model.
struct TrafficCost {
  u32 polys = 0;  // polys the call writes (in-place ops: the polys transformed)
  u32 limbs = 0;  // limbs of those polys, summed
  u32 n = 0;
  double bytes_read = 0;     // every input word once, 4 bytes per word
  double bytes_written = 0;  // every output word once
  double table_bytes = 0;    // twiddles, BConv tables: each word once per call
  double macs = 0;           // core modular multiply(-add)s
};

// One recorded call (kept only with TrafficRecorderOptions::keep_records).
struct TrafficRecord {
  std::string scope;  // e.g. "Boot/CoeffToSlot/ModUp"; empty outside every scope
  std::string op;     // the Backend member, e.g. "ntt", "bconv_matmul"
  TrafficCost cost;
  double time_us = 0;  // profiling mode only, else 0
};

// Sums over calls.
struct TrafficTotals {
  u64 calls = 0;  // backend calls, roughly kernel launches on the GPU
  double bytes_read = 0;
  double bytes_written = 0;
  double table_bytes = 0;
  double macs = 0;
  double time_us = 0;  // sum of the profiled op times (0 unless profiling)

  double bytes() const { return bytes_read + bytes_written; }
  // bytes() / time_us in GB/s; 0 when no time was measured.
  double achieved_gbps() const { return time_us > 0 ? bytes() / (time_us * 1e3) : 0; }
  void add(const TrafficCost& c, double op_time_us);
  TrafficTotals& operator+=(const TrafficTotals& o);
  // Every field divided by `passes` (averages over repeated identical runs).
  TrafficTotals per_pass(double passes) const;
};

struct TrafficRecorderOptions {
  // Synchronize the backend before and after every op and time it by the wall clock. Adds one
  // host round trip per op, so per-op times include the launch and synchronization latency.
  bool profile = false;
  bool keep_records = false;  // keep every call (records()), not only the totals
};

// Collects the calls of every backend wrapped with it (thread-safe).
class TrafficRecorder {
 public:
  explicit TrafficRecorder(TrafficRecorderOptions options = {});
  ~TrafficRecorder();
  TrafficRecorder(const TrafficRecorder&) = delete;
  TrafficRecorder& operator=(const TrafficRecorder&) = delete;

  // Enabled after construction. Disabled, wrapped backends only forward (one branch per op).
  void set_enabled(bool on);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void set_profiling(bool on) { profile_.store(on, std::memory_order_relaxed); }
  bool profiling() const { return profile_.load(std::memory_order_relaxed); }

  // Adds one call of `op` in the calling thread's current scope, extended by `scope_suffix`
  // (a relative path, e.g. the scope an op had inside a captured graph) when not empty.
  void record(std::string_view op, const TrafficCost& cost, double time_us,
              std::string_view scope_suffix = {});
  // Adds a zero-cost marker record (the backend's "fork", "end_fork", "join": where the op stream
  // splits into two concurrent streams and meets again) to records() in keep_records mode; the
  // totals and tables do not count it. Scopes as in record().
  void mark(std::string_view what, std::string_view scope_suffix = {});
  void clear();

  TrafficTotals total() const;
  // Calls in `scope` or nested inside it ("A" covers "A" and "A/B", not "AB"); "" = all.
  TrafficTotals total_in(std::string_view scope) const;
  // Per op name, over the calls total_in(scope) covers.
  std::map<std::string, TrafficTotals> by_op(std::string_view scope = {}) const;
  // Per scope path, inclusive: "A" sums "A", "A/B", "A/C/D"; every prefix path of a recorded
  // scope appears. Calls outside every scope are under "".
  std::map<std::string, TrafficTotals> by_scope() const;
  // Per (exact scope, op): the raw table everything else is summed from.
  std::map<std::pair<std::string, std::string>, TrafficTotals> cells() const;
  std::vector<TrafficRecord> records() const;

 private:
  TrafficRecorderOptions options_;
  std::atomic<bool> enabled_{true};
  std::atomic<bool> profile_{false};
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, TrafficTotals> cells_;
  std::vector<TrafficRecord> records_;
};

// A Backend that forwards every call to `inner` and records its modelled cost in `recorder`.
// Throws ParameterError when either is null.
// fork(), end_fork() and join() are recorded as markers (TrafficRecorder::mark).
// Captured work (begin_capture / end_capture): the ops issued while capturing are not recorded
// then (nothing runs); every replay() of the CapturedWork records them, each under the replay's
// scope followed by the op's scope relative to the one begin_capture() was called in, with zero
// time. In profiling mode the replay itself is timed and recorded as op "graph_replay" (one
// call, no bytes), so scope times stay complete.
std::unique_ptr<Backend> make_recording_backend(std::unique_ptr<Backend> inner,
                                                std::shared_ptr<TrafficRecorder> recorder);
// The backend a recording backend wraps (through any number of layers); `be` itself otherwise.
// For code that needs the concrete backend (e.g. the CUDA event timer).
Backend& unwrap_recording_backend(Backend& be);
// make_recording_backend with `recorder`, as a ContextOptions::wrap_backend hook.
std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> record_traffic(
    std::shared_ptr<TrafficRecorder> recorder);

}  // namespace theo
