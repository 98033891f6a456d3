// Parameter sets: JSON parsing/serialization in the anchor format, validation, presets.
//
// What level_config means (checked against the anchor files in tests/math/test_params.cpp):
// level_config[l] = [m, t] says that a ciphertext at level l lives modulo
//   Q_l = q_0 * ... * q_{m-1} * tau_0 * ... * tau_{t-1},
// the first m main primes and the first t terminal primes, stored inverted-terminal
// [tau_{t-1} .. tau_0, q_0 .. q_{m-1}] (Cheddar §3.3). Level 0 is the lowest modulus; log2 Q_l
// rises by about the level's scale per level. bootparam_40 for example: [0,2] = 2 x 2^25 = 50 bits,
// [3,0] = 90, [1,4] = 130, [4,2] = 170, [7,0] = 210, ... (+40 per level: the 25-30 rescaling cycle
// "three 30-bit primes in, two 25-bit out; again; four 25-bit in, two 30-bit out"), up to
// default_encryption_level (16, [23,0]); above it the bootstrapping levels add two ~2^29 main
// primes per level (double rescaling, +58 bits) and, at the very top, the terminal primes two at a
// time (+50 bits) so that the top level holds every prime (Q_top = Q_max).
//
// additional_base is an anchor field that this library carries through unchanged but does not
// use; it must be [0, 0].

#include "theo/math/params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/enum_names.h"
#include "theo/errors.h"
#include "theo/math/primes.h"

namespace theo {

namespace detail {
// Defined in the generated presets_embedded.cpp (src/math/presets_embedded.cpp.in): the texts of
// presets/*.json at build time, terminated by {nullptr, nullptr}.
struct EmbeddedPreset {
  const char* name;
  const char* json;
};
extern const EmbeddedPreset kEmbeddedPresets[];
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Derived quantities

u32 ParameterSet::max_limbs() const {
  u32 m = 0, t = 0;
  for (const auto& c : level_config) {
    m = std::max(m, c[0]);
    t = std::max(t, c[1]);
  }
  return m + t;
}

u32 ParameterSet::dnum() const {
  const u32 a = alpha();
  return a == 0 ? 0 : (max_limbs() + a - 1) / a;
}

u32 ParameterSet::word_bits() const {
  for (const auto* list : {&terminal_primes, &main_primes, &auxiliary_primes})
    for (u64 q : *list)
      if (q >= (u64{1} << 31)) return 64;
  return 32;
}

double ParameterSet::log2_q(u32 level) const {
  const auto& c = level_config.at(level);
  double s = 0;
  for (u32 i = 0; i < c[0] && i < main_primes.size(); ++i)
    s += std::log2(static_cast<double>(main_primes[i]));
  for (u32 i = 0; i < c[1] && i < terminal_primes.size(); ++i)
    s += std::log2(static_cast<double>(terminal_primes[i]));
  return s;
}

double ParameterSet::log2_pq() const {
  double s = 0;
  for (const auto* list : {&terminal_primes, &main_primes, &auxiliary_primes})
    for (u64 q : *list)
      s += std::log2(static_cast<double>(q));
  return s;
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& msg) {
  throw ParameterError(msg);
}

std::string fmt(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pair_str(const std::array<u32, 2>& a) {
  std::string r = "[";
  r += std::to_string(a[0]);
  r += ", ";
  r += std::to_string(a[1]);
  r += "]";
  return r;
}

// Short rendering of a JSON value for messages.
std::string show(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// Integers (signed, unsigned) are "a number"; so is anything else the table lacks.
constexpr EnumName<json::value_t> kTypeWords[] = {
    {json::value_t::string, "a string"}, {json::value_t::boolean, "a boolean"},
    {json::value_t::array, "an array"},  {json::value_t::object, "an object"},
    {json::value_t::null, "null"},       {json::value_t::number_float, "a non-integer number"},
};

const char* type_word(const json& v) {
  return enum_name(kTypeWords, v.type(), "a number");
}

u64 get_uint(const json& v, const std::string& field, u64 max = UINT64_MAX) {
  if (v.is_number_unsigned()) {
    const u64 x = v.get<u64>();
    if (x > max)
      fail(field + " = " + std::to_string(x) + " is too large (max " + std::to_string(max) + ")");
    return x;
  }
  if (v.is_number_integer())
    fail(field + " = " + show(v) + " is negative; expected a non-negative integer");
  if (v.is_number_float()) fail(field + " = " + show(v) + " is not an integer");
  fail(field + ": expected a non-negative integer, got " + type_word(v) + " " + show(v));
}

u32 get_u32(const json& v, const std::string& field) {
  return static_cast<u32>(get_uint(v, field, UINT32_MAX));
}

std::vector<u64> get_prime_list(const json& v, const std::string& field) {
  if (!v.is_array())
    fail(field + ": expected an array of integers, got " + type_word(v) + " " + show(v));
  std::vector<u64> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(get_uint(v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

std::array<u32, 2> get_pair(const json& v, const std::string& field) {
  if (!v.is_array() || v.size() != 2)
    fail(field + " = " + show(v) + ": expected a pair [main count, terminal count]");
  return {get_u32(v[0], field + "[0]"), get_u32(v[1], field + "[1]")};
}

const std::vector<std::string>& known_fields() {
  static const std::vector<std::string> f = {
      "log_degree",           "log_default_scale",        "boot",
      "dense_hamming_weight", "sparse_hamming_weight",    "num_cts_levels",
      "num_stc_levels",       "terminal_primes",          "main_primes",
      "auxiliary_primes",     "default_encryption_level", "level_config",
      "additional_base"};
  return f;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return s;
}

}  // namespace

ParameterSet parse_parameters(const std::string& json_text, const std::string& name) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    // parse_error for malformed text, out_of_range for a number no double can hold (1e999).
    fail(std::string("parameter file is not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    fail("parameter file: expected a JSON object at top level, got " + std::string(type_word(j)));

  const auto& known = known_fields();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name" || k == "comment") {
      if (!it.value().is_string())
        fail(k + ": expected a string, got " + type_word(it.value()) + " " + show(it.value()));
      continue;
    }
    if (std::find(known.begin(), known.end(), k) == known.end())
      fail("unknown field \"" + k + "\" (expected " + join(known) +
           ", and optionally name, comment)");
  }
  for (const auto& k : known)
    if (!j.contains(k)) fail("missing required field \"" + k + "\"");

  ParameterSet p;
  p.name =
      !name.empty() ? name : (j.contains("name") ? j["name"].get<std::string>() : std::string());
  if (j.contains("comment")) p.comment = j["comment"].get<std::string>();
  p.log_degree = get_u32(j["log_degree"], "log_degree");
  p.log_default_scale = get_u32(j["log_default_scale"], "log_default_scale");
  if (!j["boot"].is_boolean())
    fail("boot: expected true or false, got " + std::string(type_word(j["boot"])) + " " +
         show(j["boot"]));
  p.boot = j["boot"].get<bool>();
  p.dense_hamming_weight = get_u32(j["dense_hamming_weight"], "dense_hamming_weight");
  p.sparse_hamming_weight = get_u32(j["sparse_hamming_weight"], "sparse_hamming_weight");
  p.num_cts_levels = get_u32(j["num_cts_levels"], "num_cts_levels");
  p.num_stc_levels = get_u32(j["num_stc_levels"], "num_stc_levels");
  p.terminal_primes = get_prime_list(j["terminal_primes"], "terminal_primes");
  p.main_primes = get_prime_list(j["main_primes"], "main_primes");
  p.auxiliary_primes = get_prime_list(j["auxiliary_primes"], "auxiliary_primes");
  p.default_encryption_level = get_u32(j["default_encryption_level"], "default_encryption_level");
  const json& lc = j["level_config"];
  if (!lc.is_array())
    fail("level_config: expected an array of [main, terminal] pairs, got " +
         std::string(type_word(lc)) + " " + show(lc));
  for (std::size_t i = 0; i < lc.size(); ++i)
    p.level_config.push_back(get_pair(lc[i], "level_config[" + std::to_string(i) + "]"));
  p.additional_base = get_pair(j["additional_base"], "additional_base");

  validate(p);
  return p;
}

ParameterSet load_parameter_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open parameter file " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse_parameters(ss.str(), path.stem().string());
  } catch (const ParameterError& e) {
    throw ParameterError(path.string() + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Validation

void validate(const ParameterSet& p) {
  if (p.log_degree < 10 || p.log_degree > 17)
    fail("log_degree = " + std::to_string(p.log_degree) + " outside 10..17");
  const u64 n = u64{1} << p.log_degree;
  const u64 two_n = 2 * n;
  if (p.log_default_scale < 1 || p.log_default_scale > 120)
    fail("log_default_scale = " + std::to_string(p.log_default_scale) + " outside 1..120");
  if (p.dense_hamming_weight < 1 || p.dense_hamming_weight > n)
    fail("dense_hamming_weight = " + std::to_string(p.dense_hamming_weight) + " outside 1..N = " +
         std::to_string(n) + " (log_degree = " + std::to_string(p.log_degree) + ")");
  if (p.sparse_hamming_weight > p.dense_hamming_weight)
    fail("sparse_hamming_weight = " + std::to_string(p.sparse_hamming_weight) +
         " exceeds dense_hamming_weight = " + std::to_string(p.dense_hamming_weight) +
         " (0 means no sparse secret)");

  // Primes: prime, within the word size, NTT-friendly, distinct across all lists.
  const bool wide = p.word_bits() == 64;
  const u64 limit = wide ? (u64{1} << 62) : (u64{1} << 31);
  const std::string limit_s = wide ? "2^62 (64-bit set)" : "2^31";
  std::map<u64, std::string> seen;
  const std::pair<const char*, const std::vector<u64>*> lists[] = {
      {"terminal_primes", &p.terminal_primes},
      {"main_primes", &p.main_primes},
      {"auxiliary_primes", &p.auxiliary_primes}};
  for (const auto& [field, list] : lists) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const u64 q = (*list)[i];
      const std::string at =
          std::string(field) + "[" + std::to_string(i) + "] = " + std::to_string(q);
      if (!is_prime(q)) fail(at + " is not prime");
      if (q >= limit) fail(at + " is not below " + limit_s);
      if ((q - 1) % two_n != 0)
        fail(at + " is not 1 mod 2N = " + std::to_string(two_n) + " (log_degree = " +
             std::to_string(p.log_degree) + "), so it has no 2N-th root of unity for the NTT");
      auto [it, fresh] = seen.emplace(q, std::string(field) + "[" + std::to_string(i) + "]");
      if (!fresh) fail(at + " duplicates " + it->second);
    }
  }
  if (p.main_primes.empty() && p.terminal_primes.empty())
    fail("main_primes and terminal_primes are both empty");
  if (p.auxiliary_primes.empty())
    fail("auxiliary_primes is empty (key switching needs at least one auxiliary prime)");

  // Levels.
  if (p.level_config.empty()) fail("level_config is empty (need at least level 0)");
  const u32 M = static_cast<u32>(p.main_primes.size());
  const u32 T = static_cast<u32>(p.terminal_primes.size());
  u32 max_m = 0, max_t = 0;
  double prev = 0;
  for (std::size_t l = 0; l < p.level_config.size(); ++l) {
    const auto& c = p.level_config[l];
    const std::string at = "level_config[" + std::to_string(l) + "] = " + pair_str(c);
    if (c[0] > M)
      fail(at + " uses " + std::to_string(c[0]) + " main primes but main_primes has " +
           std::to_string(M));
    if (c[1] > T)
      fail(at + " uses " + std::to_string(c[1]) + " terminal primes but terminal_primes has " +
           std::to_string(T));
    if (c[0] + c[1] == 0) fail(at + " has no primes");
    max_m = std::max(max_m, c[0]);
    max_t = std::max(max_t, c[1]);
    const double lq = p.log2_q(static_cast<u32>(l));
    if (l > 0 && !(lq > prev))
      fail(at + " has log2 Q = " + fmt(lq) + ", not above level " + std::to_string(l - 1) + " (" +
           fmt(prev) + "); the modulus must grow strictly with the level");
    prev = lq;
  }
  if (max_m < M)
    fail("main_primes has " + std::to_string(M) + " entries but level_config uses at most " +
         std::to_string(max_m) + " (every prime must belong to some level)");
  if (max_t < T)
    fail("terminal_primes has " + std::to_string(T) + " entries but level_config uses at most " +
         std::to_string(max_t) + " (every prime must belong to some level)");
  const double lq0 = p.log2_q(0);
  if (!(static_cast<double>(p.log_default_scale) < lq0))
    fail("log_default_scale = " + std::to_string(p.log_default_scale) +
         " is not below log2 Q of level 0 (level_config[0] = " + pair_str(p.level_config[0]) +
         ", " + fmt(lq0) + " bits)");
  const u32 levels = static_cast<u32>(p.level_config.size());
  if (p.default_encryption_level >= levels)
    fail("default_encryption_level = " + std::to_string(p.default_encryption_level) +
         " above the top level " + std::to_string(levels - 1) + " (level_config has " +
         std::to_string(levels) + " entries)");
  if (p.boot) {
    if (p.num_cts_levels >= levels)
      fail("num_cts_levels = " + std::to_string(p.num_cts_levels) +
           " not below the number of levels (" + std::to_string(levels) + ")");
    if (p.num_stc_levels >= levels)
      fail("num_stc_levels = " + std::to_string(p.num_stc_levels) +
           " not below the number of levels (" + std::to_string(levels) + ")");
    if (p.num_cts_levels + p.num_stc_levels >= levels)
      fail("num_cts_levels + num_stc_levels = " + std::to_string(p.num_cts_levels) + " + " +
           std::to_string(p.num_stc_levels) + " not below the number of levels (" +
           std::to_string(levels) + ")");
  }
  if (p.additional_base[0] != 0 || p.additional_base[1] != 0)
    fail("additional_base = " + pair_str(p.additional_base) +
         " must be [0, 0] (anchor field, carried through but not used by theodosian)");
}

// ---------------------------------------------------------------------------------------------
// Serialization (the anchor files' layout: one field per line, prime lists wrapped)

namespace {

std::string list_block(const std::vector<u64>& v) {
  if (v.empty()) return "[]";
  std::string s = "[\n";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i % 6 == 0) s += "    ";
    s += std::to_string(v[i]);
    if (i + 1 < v.size()) s += (i % 6 == 5) ? ",\n" : ", ";
  }
  return s + "\n  ]";
}

}  // namespace

std::string to_json(const ParameterSet& p) {
  std::string s = "{\n";
  if (!p.name.empty()) s += "  \"name\": " + json(p.name).dump() + ",\n";
  if (!p.comment.empty()) s += "  \"comment\": " + json(p.comment).dump() + ",\n";
  s += "  \"log_degree\": " + std::to_string(p.log_degree) + ",\n";
  s += "  \"log_default_scale\": " + std::to_string(p.log_default_scale) + ",\n\n";
  s += std::string("  \"boot\": ") + (p.boot ? "true" : "false") + ",\n";
  s += "  \"dense_hamming_weight\": " + std::to_string(p.dense_hamming_weight) + ",\n";
  s += "  \"sparse_hamming_weight\": " + std::to_string(p.sparse_hamming_weight) + ",\n";
  s += "  \"num_cts_levels\": " + std::to_string(p.num_cts_levels) + ",\n";
  s += "  \"num_stc_levels\": " + std::to_string(p.num_stc_levels) + ",\n\n";
  s += "  \"terminal_primes\": " + list_block(p.terminal_primes) + ",\n";
  s += "  \"main_primes\": " + list_block(p.main_primes) + ",\n";
  s += "  \"auxiliary_primes\": " + list_block(p.auxiliary_primes) + ",\n\n";
  s += "  \"default_encryption_level\": " + std::to_string(p.default_encryption_level) + ",\n";
  s += "  \"level_config\": [";
  for (std::size_t i = 0; i < p.level_config.size(); ++i) {
    if (i % 8 == 0) s += "\n    ";
    s += pair_str(p.level_config[i]);
    if (i + 1 < p.level_config.size()) s += (i % 8 == 7) ? "," : ", ";
  }
  s += p.level_config.empty() ? "],\n" : "\n  ],\n";
  s += "  \"additional_base\": " + pair_str(p.additional_base) + "\n}\n";
  return s;
}

// ---------------------------------------------------------------------------------------------
// Presets: the caller's preset_dir first, then the texts embedded at build time, then the source
// tree's presets/ folder (compile-time THEO_PRESET_DIR) for files added since the build.

namespace {

std::vector<std::filesystem::path> preset_dirs(const std::filesystem::path& preset_dir,
                                               bool callers_only) {
  std::vector<std::filesystem::path> dirs;
  if (!preset_dir.empty()) dirs.push_back(preset_dir);
  if (callers_only) return dirs;
#ifdef THEO_PRESET_DIR
  dirs.emplace_back(THEO_PRESET_DIR);
#endif
  return dirs;
}

const char* embedded(const std::string& name) {
  for (const detail::EmbeddedPreset* e = detail::kEmbeddedPresets; e->name; ++e)
    if (name == e->name) return e->json;
  return nullptr;
}

}  // namespace

std::vector<std::string> preset_names(const std::filesystem::path& preset_dir) {
  std::set<std::string> names;
  for (const detail::EmbeddedPreset* e = detail::kEmbeddedPresets; e->name; ++e)
    names.insert(e->name);
  for (const auto& dir : preset_dirs(preset_dir, false)) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".json") names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

ParameterSet load_preset(const std::string& name, const std::filesystem::path& preset_dir) {
  if (name.empty() || name.find_first_of("/\\.") != std::string::npos)
    fail("preset name \"" + name + "\" is not a plain name (expected e.g. bootparam_40)");
  auto from_file = [&](const std::filesystem::path& dir, ParameterSet& out) {
    const auto f = dir / (name + ".json");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec)) return false;
    out = load_parameter_file(f);
    out.name = name;
    return true;
  };
  ParameterSet p;
  for (const auto& dir : preset_dirs(preset_dir, true))
    if (from_file(dir, p)) return p;
  if (const char* text = embedded(name)) {
    try {
      return parse_parameters(text, name);
    } catch (const ParameterError& e) {
      throw ParameterError("preset " + name + ": " + e.what());
    }
  }
#ifdef THEO_PRESET_DIR
  if (from_file(THEO_PRESET_DIR, p)) return p;
#endif
  fail("unknown preset \"" + name + "\" (available: " + join(preset_names(preset_dir)) + ")");
}

ParameterSet with_log_degree(const ParameterSet& p, u32 log_degree) {
  if (log_degree > p.log_degree) {
    fail("with_log_degree: log_degree = " + std::to_string(log_degree) + " above the set's " +
         std::to_string(p.log_degree) + " (its primes are NTT-friendly only up to 2N)");
  }
  ParameterSet r = p;
  r.log_degree = log_degree;
  // A dense secret keeps its density (h = N/2 stays N/2); a sparse one keeps its weight.
  const u32 shift = p.log_degree - log_degree;
  r.dense_hamming_weight = std::max<u32>(1, p.dense_hamming_weight >> shift);
  r.sparse_hamming_weight = std::min(p.sparse_hamming_weight, r.dense_hamming_weight);
  r.name = p.name.empty() ? "" : p.name + "@log_n" + std::to_string(log_degree);
  r.comment = "INSECURE: " + (p.name.empty() ? std::string("a parameter set") : p.name) +
              "'s primes and level structure on N = 2^" + std::to_string(log_degree);
  validate(r);
  return r;
}

}  // namespace theo
