// Environment::read: the only getenv calls of the library (theo/common/environment.h).

#include "theo/common/environment.h"

#include <cstdlib>
#include <string_view>

namespace theo {

namespace {

const char* variable(const char* name) {
  return std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only, at Context creation
}

// Set to "0": the mechanism is off.
bool not_zero(const char* name) {
  const char* e = variable(name);
  return e == nullptr || std::string_view(e) != "0";
}

// A value of decimal digits, if set.
std::optional<u32> decimal(const char* name) {
  const char* e = variable(name);
  if (e == nullptr || *e < '0' || *e > '9') return std::nullopt;
  return static_cast<u32>(std::atoi(e));
}

std::string text(const char* name) {
  const char* e = variable(name);
  return e != nullptr ? std::string(e) : std::string();
}

}  // namespace

Environment Environment::read() {
  Environment env;
  env.backend = text("THEO_BACKEND");
  env.preset_dir = text("THEO_PRESET_DIR");
  env.fusion = not_zero("THEO_FUSION");
  env.output_chunking = not_zero("THEO_OUTPUT_CHUNKING");
  env.graphs = not_zero("THEO_GRAPHS");
  env.programmatic_launch = not_zero("THEO_PDL");
  env.ntt_row_otf = decimal("THEO_NTT_ROW_OTF");
  env.ntt_rows_resident = decimal("THEO_NTT_ROWS_RESIDENT");
  env.ntt_rows_persistent_tiles = decimal("THEO_NTT_ROWS_PERSISTENT_TILES");
  env.ntt_cols_wide = decimal("THEO_NTT_COLS_WIDE");
  env.xdg_cache_home = text("XDG_CACHE_HOME");
  env.home = text("HOME");
  return env;
}

}  // namespace theo
