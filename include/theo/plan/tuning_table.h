#pragma once
// The key-switch tuning table: for one device and one parameter set, the measured time of every
// dataflow candidate (theo/plan/dataflow.h) at each tuned level, and the choice Dataflow::kAuto
// makes there. Made by timing the candidates (theo_tune, or create_tuned_context) and
// cached on disk as JSON, one file per (device, parameter set):
//
//   <directory>/<device slug>-<parameter fingerprint>.json
//
// <directory> is KeySwitchOptions::tuning.directory when set, else default_tuning_dir():
// $XDG_CACHE_HOME/theodosian/tuning, else $HOME/.cache/theodosian/tuning (docs/dataflows.md).
//
// The file carries its key (device name, SM count, L2 size, driver, compute capability; the
// parameter set's fingerprint (the one serialized objects carry); N, alpha and every level's limbs
// and digits; the planner's cache size and the optimization switches the key switches ran with). A
// file that does not parse, breaks the format, or belongs to another device or parameter set is
// reported (status and message) and not used; writing is atomic (a temporary file renamed over the
// old one) and a failure is reported, never thrown.

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "theo/backend/device_facts.h"
#include "theo/math/params.h"
#include "theo/plan/dataflow.h"

namespace theo {

// What a table is valid for.
struct TuningKey {
  DeviceFacts device;
  std::string parameters;  // fingerprint_hex(parameter_fingerprint(set)), theo/math/fingerprint.h
  u32 log_n = 0;
  u32 alpha = 0;
  std::vector<KeySwitchShape> levels;  // [level]
  // How the key switches were run: the cache the planner fills (it sets DPOB's ModUp digit
  // groups) and the optimization switches in effect, e.g. "fusion bconv_refined caching
  // pipelining".
  std::size_t cache_bytes = 0;
  std::string execution;
  bool operator==(const TuningKey&) const = default;
};

struct TuningMeasurement {
  DataflowChoice choice;
  double median_us = 0;
};

// The candidates measured at one level.
struct TunedLevel {
  u32 level = 0;
  std::vector<TuningMeasurement> measured;
  // The fastest candidate; kDefaultChoice (today's DPOB) stays unless another is faster by more
  // than kKeepDefaultMargin (measurement noise must not move a level off the default for nothing).
  DataflowChoice choice() const;
  const TuningMeasurement* find(const DataflowChoice& c) const;
};
inline constexpr double kKeepDefaultMargin = 0.02;

class TuningTable {
 public:
  explicit TuningTable(TuningKey key) : key_(std::move(key)) {}

  const TuningKey& key() const { return key_; }
  // Adds a level's measurements, replacing earlier ones of that level. ParameterError when the
  // level is outside the key's levels, a choice is invalid or a time is not finite and positive.
  void set_level(TunedLevel level);
  const TunedLevel* level(u32 level) const;
  const std::vector<TunedLevel>& levels() const { return levels_; }
  // The choice at a tuned level, nullopt at a level not tuned.
  std::optional<DataflowChoice> choice(u32 level) const;

  std::string to_json() const;
  // ParameterError naming what is wrong when the text is not a table of this format.
  static TuningTable from_json(const std::string& text);

 private:
  TuningKey key_;
  std::vector<TunedLevel> levels_;  // ordered by level
};

// $XDG_CACHE_HOME/theodosian/tuning, else $HOME/.cache/theodosian/tuning, from the values of
// those variables (null or empty: unset); empty when neither is set.
std::filesystem::path default_tuning_dir(const char* xdg_cache_home, const char* home);
// <directory>/<device slug>-<fingerprint>.json
std::filesystem::path tuning_file(const std::filesystem::path& directory, const TuningKey& key);

enum class TuningLoadStatus {
  kLoaded,
  kMissing,     // no file (not a warning: the table is simply not made yet)
  kUnreadable,  // the file exists but cannot be read
  kCorrupted,   // not a table of this format (bad JSON, missing or ill-typed field, bad value)
  kStale,       // a table of another device or parameter set
  kNotUsed,     // not looked for: a fixed dataflow, or the table switched off
  kGiven,       // handed to Context::create (e.g. measured for it by create_tuned_context)
};
const char* tuning_load_status_name(TuningLoadStatus s);

struct TuningLoad {
  TuningLoadStatus status = TuningLoadStatus::kMissing;
  std::optional<TuningTable> table;  // set only when kLoaded
  std::string message;               // what was wrong, naming the file (empty when kLoaded)
};

// Why a table of key `got` does not serve a Context of key `expected` (another device, parameter
// set, level shapes, cache size or optimizations), or empty when it does.
std::string stale_reason(const TuningKey& got, const TuningKey& expected);

// Reads the table at `path` and checks it against `expected`. Never throws for a bad file.
TuningLoad load_tuning_table(const std::filesystem::path& path, const TuningKey& expected);
// Writes the table to `path` (creating its directory) atomically. Returns an empty string on
// success, else what failed; never throws for an I/O failure.
std::string save_tuning_table(const TuningTable& table, const std::filesystem::path& path);

}  // namespace theo
