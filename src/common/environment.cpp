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

// Which variable fills which field, one table per kind of value.
template <typename T>
struct Variable {
  T Environment::*field;
  const char* name;
};

constexpr Variable<std::string> kTextVariables[] = {
    {&Environment::backend, "THEO_BACKEND"},
    {&Environment::preset_dir, "THEO_PRESET_DIR"},
    {&Environment::xdg_cache_home, "XDG_CACHE_HOME"},
    {&Environment::home, "HOME"},
};
constexpr Variable<bool> kSwitchVariables[] = {
    {&Environment::fusion, "THEO_FUSION"},
    {&Environment::output_chunking, "THEO_OUTPUT_CHUNKING"},
    {&Environment::graphs, "THEO_GRAPHS"},
    {&Environment::programmatic_launch, "THEO_PDL"},
};
constexpr Variable<std::optional<u32>> kDecimalVariables[] = {
    {&Environment::ntt_row_otf, "THEO_NTT_ROW_OTF"},
    {&Environment::ntt_rows_resident, "THEO_NTT_ROWS_RESIDENT"},
    {&Environment::ntt_rows_persistent_tiles, "THEO_NTT_ROWS_PERSISTENT_TILES"},
    {&Environment::ntt_cols_wide, "THEO_NTT_COLS_WIDE"},
};

}  // namespace

Environment Environment::read() {
  Environment env;
  for (const auto& [field, name] : kTextVariables)
    env.*field = text(name);
  for (const auto& [field, name] : kSwitchVariables)
    env.*field = not_zero(name);
  for (const auto& [field, name] : kDecimalVariables)
    env.*field = decimal(name);
  return env;
}

}  // namespace theo
