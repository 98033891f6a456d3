// TrafficRecorder and TrafficTotals.

#include "theo/model/traffic.h"

namespace theo {

namespace {

// True when `scope` is `prefix` or nested inside it.
bool within(std::string_view scope, std::string_view prefix) {
  if (prefix.empty()) return true;
  if (scope.size() < prefix.size() || scope.substr(0, prefix.size()) != prefix) return false;
  return scope.size() == prefix.size() || scope[prefix.size()] == '/';
}

}  // namespace

// ---- TrafficTotals ------------------------------------------------------------------------------

void TrafficTotals::add(const TrafficCost& c, double op_time_us) {
  calls += 1;
  bytes_read += c.bytes_read;
  bytes_written += c.bytes_written;
  table_bytes += c.table_bytes;
  macs += c.macs;
  time_us += op_time_us;
}

TrafficTotals& TrafficTotals::operator+=(const TrafficTotals& o) {
  calls += o.calls;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  table_bytes += o.table_bytes;
  macs += o.macs;
  time_us += o.time_us;
  return *this;
}

TrafficTotals TrafficTotals::per_pass(double passes) const {
  TrafficTotals t = *this;
  if (passes > 0) {
    t.calls = static_cast<u64>(static_cast<double>(calls) / passes + 0.5);
    t.bytes_read /= passes;
    t.bytes_written /= passes;
    t.table_bytes /= passes;
    t.macs /= passes;
    t.time_us /= passes;
  }
  return t;
}

// ---- TrafficRecorder ----------------------------------------------------------------------------

TrafficRecorder::TrafficRecorder(TrafficRecorderOptions options)
    : options_(options), profile_(options.profile) {
  register_op_scope_observer();
}

TrafficRecorder::~TrafficRecorder() {
  if (enabled()) unregister_op_scope_observer();
}

void TrafficRecorder::set_enabled(bool on) {
  std::lock_guard lock(mu_);
  if (enabled() == on) return;
  enabled_.store(on, std::memory_order_relaxed);
  if (on)
    register_op_scope_observer();
  else
    unregister_op_scope_observer();
}

void TrafficRecorder::record(std::string_view op, const TrafficCost& cost, double time_us,
                             std::string_view scope_suffix) {
  std::string scope = current_op_scope();
  if (!scope_suffix.empty()) {
    if (!scope.empty()) scope += '/';
    scope += scope_suffix;
  }
  std::lock_guard lock(mu_);
  auto key = std::make_pair(std::move(scope), std::string(op));
  if (options_.keep_records)
    records_.push_back(TrafficRecord{key.first, key.second, cost, time_us});
  cells_[std::move(key)].add(cost, time_us);
}

void TrafficRecorder::mark(std::string_view what, std::string_view scope_suffix) {
  if (!options_.keep_records) return;
  std::string scope = current_op_scope();
  if (!scope_suffix.empty()) {
    if (!scope.empty()) scope += '/';
    scope += scope_suffix;
  }
  std::lock_guard lock(mu_);
  records_.push_back(TrafficRecord{std::move(scope), std::string(what), TrafficCost{}, 0});
}

void TrafficRecorder::clear() {
  std::lock_guard lock(mu_);
  cells_.clear();
  records_.clear();
}

TrafficTotals TrafficRecorder::total() const {
  return total_in({});
}

TrafficTotals TrafficRecorder::total_in(std::string_view scope) const {
  std::lock_guard lock(mu_);
  TrafficTotals t;
  for (const auto& [key, cell] : cells_)
    if (within(key.first, scope)) t += cell;
  return t;
}

std::map<std::string, TrafficTotals> TrafficRecorder::by_op(std::string_view scope) const {
  std::lock_guard lock(mu_);
  std::map<std::string, TrafficTotals> out;
  for (const auto& [key, cell] : cells_)
    if (within(key.first, scope)) out[key.second] += cell;
  return out;
}

std::map<std::string, TrafficTotals> TrafficRecorder::by_scope() const {
  std::lock_guard lock(mu_);
  std::map<std::string, TrafficTotals> out;
  for (const auto& [key, cell] : cells_) {
    const std::string& s = key.first;
    if (s.empty()) {
      out[""] += cell;
      continue;
    }
    // Every prefix ending at a '/' and the full path.
    for (std::size_t pos = s.find('/'); pos != std::string::npos; pos = s.find('/', pos + 1))
      out[s.substr(0, pos)] += cell;
    out[s] += cell;
  }
  return out;
}

std::map<std::pair<std::string, std::string>, TrafficTotals> TrafficRecorder::cells() const {
  std::lock_guard lock(mu_);
  return cells_;
}

std::vector<TrafficRecord> TrafficRecorder::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

}  // namespace theo
