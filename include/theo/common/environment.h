#pragma once
// The THEO_* environment variables the library honours (and XDG_CACHE_HOME / HOME for the default
// tuning-table directory), read by Environment::read(), the one place in the library that calls
// getenv (docs/configuration.md has the table).
//
// Nothing deep in the library reads them. Context::create reads them once into its
// ExecutionPolicy (theo/plan/execution_policy.h), which is immutable afterwards: changing a
// variable after a Context exists has no effect on it. make_default_backend, which runs without a
// Context, reads THEO_BACKEND at each call. The preset lookup (load_preset) reads none: a program
// that honours THEO_PRESET_DIR reads it once and passes the folder (the Python module at import,
// the apps at start).

#include <optional>
#include <string>

#include "theo/common.h"

namespace theo {

struct Environment {
  // THEO_BACKEND: "cpu" or "cuda" picks the backend of BackendChoice::kAuto; unset or empty:
  // CUDA when available, else CPU. Any other value is kept and rejected where it is used.
  std::string backend;
  // THEO_PRESET_DIR: a folder searched for <name>.json before the embedded presets; empty: none.
  std::string preset_dir;
  // THEO_FUSION, THEO_OUTPUT_CHUNKING, THEO_GRAPHS, THEO_PDL = "0" turn the mechanism off for a
  // whole process (ablation runs of unmodified programs); unset or any other value: no effect.
  bool fusion = true;
  bool output_chunking = true;
  bool graphs = true;
  bool programmatic_launch = true;
  // THEO_NTT_ROW_OTF, THEO_NTT_ROWS_RESIDENT, THEO_NTT_ROWS_PERSISTENT_TILES, THEO_NTT_COLS_WIDE:
  // a decimal value replaces the CUDA backend's NttConfig field of that name (before / after
  // runs); unset or not starting with a digit: the tuned default.
  std::optional<u32> ntt_row_otf;
  std::optional<u32> ntt_rows_resident;
  std::optional<u32> ntt_rows_persistent_tiles;
  std::optional<u32> ntt_cols_wide;
  // XDG_CACHE_HOME, HOME: where key-switch tuning tables live by default
  // ($XDG_CACHE_HOME/theodosian/tuning, else $HOME/.cache/theodosian/tuning; default_tuning_dir).
  std::string xdg_cache_home;
  std::string home;

  // The variables as the process environment has them now.
  static Environment read();
  // No variable set: what every field defaults to.
  static Environment none() { return {}; }
};

}  // namespace theo
