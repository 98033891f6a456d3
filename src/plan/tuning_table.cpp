// The key-switch tuning table and its cache file (theo/plan/tuning_table.h).

#include "theo/plan/tuning_table.h"

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "common/enum_names.h"
#include "theo/errors.h"

namespace theo {

namespace {

using json = nlohmann::json;

constexpr const char* kFormat = "theodosian-key-switch-tuning";
constexpr int kVersion = 1;

[[noreturn]] void fail(const std::string& m) {
  throw ParameterError("tuning table: " + m);
}

json device_json(const DeviceFacts& d) {
  return {{"kind", d.kind},         {"name", d.name},
          {"sm_count", d.sm_count}, {"l2_bytes", d.l2_bytes},
          {"driver", d.driver},     {"compute_capability", d.compute_capability}};
}

// Field access that names what is missing or ill-typed.
const json& field(const json& obj, const char* name, const std::string& where) {
  if (!obj.is_object()) fail(where + " is not an object");
  const auto it = obj.find(name);
  if (it == obj.end()) fail(where + " has no field \"" + name + "\"");
  return *it;
}
std::string get_string(const json& obj, const char* name, const std::string& where) {
  const json& v = field(obj, name, where);
  if (!v.is_string()) fail(where + "." + name + " is not a string");
  return v.get<std::string>();
}
u64 get_uint(const json& obj, const char* name, const std::string& where) {
  const json& v = field(obj, name, where);
  if (!v.is_number_unsigned()) fail(where + "." + name + " is not a non-negative integer");
  return v.get<u64>();
}

DeviceFacts parse_device(const json& j) {
  DeviceFacts d;
  d.kind = get_string(j, "kind", "device");
  d.name = get_string(j, "name", "device");
  const u64 sms = get_uint(j, "sm_count", "device");
  if (sms > (1u << 20)) fail("device.sm_count = " + std::to_string(sms) + " is implausible");
  d.sm_count = static_cast<int>(sms);
  d.l2_bytes = static_cast<std::size_t>(get_uint(j, "l2_bytes", "device"));
  d.driver = get_string(j, "driver", "device");
  d.compute_capability = get_string(j, "compute_capability", "device");
  return d;
}

DataflowChoice parse_choice(const json& m, const std::string& where) {
  const std::string name = get_string(m, "dataflow", where);
  const auto d = parse_dataflow(name);
  if (!d || *d == Dataflow::kAuto) fail(where + ".dataflow = \"" + name + "\" is not a dataflow");
  const u64 chunks = get_uint(m, "chunks", where);
  const DataflowChoice c{*d, static_cast<u32>(std::min<u64>(chunks, 1u << 30))};
  if (chunks > 1000 || !valid_choice(c))
    fail(where + ": " + name + " with " + std::to_string(chunks) + " chunks is not a valid choice");
  return c;
}

std::string device_text(const DeviceFacts& d) {
  return d.name + " (" + std::to_string(d.sm_count) + " SMs, L2 " + std::to_string(d.l2_bytes) +
         " bytes, " + (d.driver.empty() ? std::string("no driver") : d.driver) + ")";
}

}  // namespace

const TuningMeasurement* TunedLevel::find(const DataflowChoice& c) const {
  for (const TuningMeasurement& m : measured)
    if (m.choice == c) return &m;
  return nullptr;
}

DataflowChoice TunedLevel::choice() const {
  const TuningMeasurement* best = nullptr;
  for (const TuningMeasurement& m : measured)
    if (best == nullptr || m.median_us < best->median_us) best = &m;
  if (best == nullptr) return kDefaultChoice;
  if (const TuningMeasurement* def = find(kDefaultChoice)) {
    if (def->median_us <= best->median_us * (1 + kKeepDefaultMargin)) return kDefaultChoice;
  }
  return best->choice;
}

void TuningTable::set_level(TunedLevel level) {
  if (level.level >= key_.levels.size())
    fail("level " + std::to_string(level.level) + " is outside the parameter set's " +
         std::to_string(key_.levels.size()) + " levels");
  if (level.measured.empty()) fail("level " + std::to_string(level.level) + " has no measurement");
  for (const TuningMeasurement& m : level.measured) {
    if (!valid_choice(m.choice))
      fail("level " + std::to_string(level.level) + ": " + choice_name(m.choice) +
           " is not a valid choice");
    if (!std::isfinite(m.median_us) || !(m.median_us > 0))
      fail("level " + std::to_string(level.level) + ": " + choice_name(m.choice) + " time " +
           std::to_string(m.median_us) + " us is not finite and positive");
  }
  const auto it = std::lower_bound(levels_.begin(), levels_.end(), level.level,
                                   [](const TunedLevel& a, u32 l) { return a.level < l; });
  if (it != levels_.end() && it->level == level.level)
    *it = std::move(level);
  else
    levels_.insert(it, std::move(level));
}

const TunedLevel* TuningTable::level(u32 level) const {
  for (const TunedLevel& t : levels_)
    if (t.level == level) return &t;
  return nullptr;
}

std::optional<DataflowChoice> TuningTable::choice(u32 level) const {
  const TunedLevel* t = this->level(level);
  if (t == nullptr) return std::nullopt;
  return t->choice();
}

std::string TuningTable::to_json() const {
  json shapes = json::array();
  for (const KeySwitchShape& s : key_.levels)
    shapes.push_back({s.limbs, s.digits});
  json tuned = json::array();
  for (const TunedLevel& t : levels_) {
    json measured = json::array();
    for (const TuningMeasurement& m : t.measured)
      measured.push_back({{"dataflow", std::string(dataflow_name(m.choice.dataflow))},
                          {"chunks", m.choice.chunks},
                          {"median_us", m.median_us}});
    tuned.push_back({{"level", t.level},
                     {"limbs", key_.levels[t.level].limbs},
                     {"choice", choice_name(t.choice())},
                     {"measured", std::move(measured)}});
  }
  char date[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (gmtime_r(&now, &tm) != nullptr) std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const json doc = {
      {"format", kFormat},
      {"version", kVersion},
      {"created", date},
      {"device", device_json(key_.device)},
      {"parameters",
       {{"fingerprint", key_.parameters},
        {"log_n", key_.log_n},
        {"alpha", key_.alpha},
        {"levels", std::move(shapes)}}},
      {"execution", {{"cache_bytes", key_.cache_bytes}, {"switches", key_.execution}}},
      {"tuned", std::move(tuned)}};
  return doc.dump(1) + "\n";
}

TuningTable TuningTable::from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    fail(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!doc.is_object()) fail("the document is not a JSON object");
  if (get_string(doc, "format", "document") != kFormat)
    fail("format is not \"" + std::string(kFormat) + "\"");
  const u64 version = get_uint(doc, "version", "document");
  if (version != kVersion)
    fail("version " + std::to_string(version) + " is not " + std::to_string(kVersion));
  TuningKey key;
  key.device = parse_device(field(doc, "device", "document"));
  const json& params = field(doc, "parameters", "document");
  key.parameters = get_string(params, "fingerprint", "parameters");
  const u64 log_n = get_uint(params, "log_n", "parameters");
  const u64 alpha = get_uint(params, "alpha", "parameters");
  if (log_n < 10 || log_n > 17) fail("parameters.log_n = " + std::to_string(log_n));
  if (alpha == 0 || alpha > 255) fail("parameters.alpha = " + std::to_string(alpha));
  key.log_n = static_cast<u32>(log_n);
  key.alpha = static_cast<u32>(alpha);
  const json& shapes = field(params, "levels", "parameters");
  if (!shapes.is_array() || shapes.empty() || shapes.size() > 1000)
    fail("parameters.levels is not a non-empty array of [limbs, digits]");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const json& s = shapes[i];
    if (!s.is_array() || s.size() != 2 || !s[0].is_number_unsigned() ||
        !s[1].is_number_unsigned() || s[0].get<u64>() == 0 || s[0].get<u64>() > 255 ||
        s[1].get<u64>() == 0 || s[1].get<u64>() > 255)
      fail("parameters.levels[" + std::to_string(i) + "] is not [limbs, digits]");
    key.levels.push_back({static_cast<u32>(s[0].get<u64>()), static_cast<u32>(s[1].get<u64>()),
                          key.alpha, u32{1} << key.log_n});
  }
  const json& exec = field(doc, "execution", "document");
  key.cache_bytes = static_cast<std::size_t>(get_uint(exec, "cache_bytes", "execution"));
  key.execution = get_string(exec, "switches", "execution");
  TuningTable table(std::move(key));
  const json& tuned = field(doc, "tuned", "document");
  if (!tuned.is_array()) fail("tuned is not an array");
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    const std::string where = "tuned[" + std::to_string(i) + "]";
    TunedLevel t;
    const u64 level = get_uint(tuned[i], "level", where);
    if (level >= table.key().levels.size())
      fail(where + ".level = " + std::to_string(level) + " is not a level of the set");
    t.level = static_cast<u32>(level);
    if (table.level(t.level) != nullptr)
      fail(where + ": level " + std::to_string(level) + " twice");
    const json& measured = field(tuned[i], "measured", where);
    if (!measured.is_array() || measured.empty())
      fail(where + ".measured is not a non-empty array");
    for (std::size_t k = 0; k < measured.size(); ++k) {
      const std::string at = where + ".measured[" + std::to_string(k) + "]";
      TuningMeasurement m;
      m.choice = parse_choice(measured[k], at);
      if (t.find(m.choice) != nullptr) fail(at + ": " + choice_name(m.choice) + " twice");
      const json& us = field(measured[k], "median_us", at);
      if (!us.is_number()) fail(at + ".median_us is not a number");
      m.median_us = us.get<double>();
      t.measured.push_back(m);
    }
    table.set_level(std::move(t));  // checks the times
  }
  return table;
}

std::filesystem::path default_tuning_dir(const char* xdg_cache_home, const char* home) {
  if (xdg_cache_home != nullptr && *xdg_cache_home != '\0')
    return std::filesystem::path(xdg_cache_home) / "theodosian" / "tuning";
  if (home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "theodosian" / "tuning";
  return {};
}

std::filesystem::path tuning_file(const std::filesystem::path& directory, const TuningKey& key) {
  std::string slug;
  for (char ch : key.device.kind + "-" + key.device.name) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (std::isalnum(u))
      slug += static_cast<char>(std::tolower(u));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  slug += "-sm" + std::to_string(key.device.sm_count);
  return directory / (slug + "-" + key.parameters.substr(0, 16) + ".json");
}

namespace {

constexpr EnumName<TuningLoadStatus> kTuningLoadStatusNames[] = {
    {TuningLoadStatus::kLoaded, "loaded"},         {TuningLoadStatus::kMissing, "missing"},
    {TuningLoadStatus::kUnreadable, "unreadable"}, {TuningLoadStatus::kCorrupted, "corrupted"},
    {TuningLoadStatus::kStale, "stale"},           {TuningLoadStatus::kNotUsed, "not used"},
    {TuningLoadStatus::kGiven, "given"},
};

}  // namespace

const char* tuning_load_status_name(TuningLoadStatus s) {
  return enum_name(kTuningLoadStatusNames, s, "?");
}

TuningLoad load_tuning_table(const std::filesystem::path& path, const TuningKey& expected) {
  TuningLoad r;
  const std::string file = path.string();
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    r.status = TuningLoadStatus::kMissing;
    return r;
  }
  if (!std::filesystem::is_regular_file(st)) {
    r.status = TuningLoadStatus::kUnreadable;
    r.message = "tuning table " + file + " is not a regular file; ignored";
    return r;
  }
  // A table is a few kB per level; anything far larger is not one.
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > (std::uintmax_t{64} << 20)) {
    r.status = ec ? TuningLoadStatus::kUnreadable : TuningLoadStatus::kCorrupted;
    r.message =
        "tuning table " + file + (ec ? " cannot be sized" : " is implausibly large") + "; ignored";
    return r;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  if (!in || !(ss << in.rdbuf())) {
    // An empty file also lands here (nothing to copy); it is corrupted rather than unreadable.
    if (in && size == 0) {
      r.status = TuningLoadStatus::kCorrupted;
      r.message = "tuning table " + file + " is empty; ignored";
    } else {
      r.status = TuningLoadStatus::kUnreadable;
      r.message = "tuning table " + file + " cannot be read; ignored";
    }
    return r;
  }
  // A table of another format version is stale (made by another version of the library), not
  // corrupted; the version is read before the rest is checked.
  try {
    const json doc = json::parse(ss.str());
    if (doc.is_object() && doc.value("format", std::string()) == kFormat &&
        doc.contains("version") && doc["version"] != json(kVersion)) {
      r.status = TuningLoadStatus::kStale;
      r.message = "tuning table " + file + " is stale: format version " + doc["version"].dump() +
                  ", this library reads version " + std::to_string(kVersion) + "; ignored";
      return r;
    }
  } catch (const json::exception&) {
    // Reported as corrupted below.
  }
  std::optional<TuningTable> table;
  try {
    table.emplace(TuningTable::from_json(ss.str()));
  } catch (const Error& e) {
    r.status = TuningLoadStatus::kCorrupted;
    r.message = "tuning table " + file + " is corrupted (" + e.what() + "); ignored";
    return r;
  }
  const std::string why = stale_reason(table->key(), expected);
  if (!why.empty()) {
    r.status = TuningLoadStatus::kStale;
    r.message = "tuning table " + file + " is stale: " + why + "; ignored";
    return r;
  }
  r.status = TuningLoadStatus::kLoaded;
  r.table = std::move(table);
  return r;
}

std::string stale_reason(const TuningKey& got, const TuningKey& expected) {
  std::string why;
  if (!(got.device == expected.device))
    why = "it was measured on " + device_text(got.device) + ", this device is " +
          device_text(expected.device);
  else if (got.parameters != expected.parameters || got.log_n != expected.log_n ||
           got.alpha != expected.alpha)
    why = "it is for another parameter set (fingerprint " + got.parameters + ", expected " +
          expected.parameters + ")";
  else if (got.levels != expected.levels)
    why = "its level shapes differ from the parameter set's";
  else if (got.cache_bytes != expected.cache_bytes || got.execution != expected.execution)
    why = "it was measured with another cache size or other optimizations (" +
          std::to_string(got.cache_bytes) + " bytes, \"" + got.execution + "\"; now " +
          std::to_string(expected.cache_bytes) + " bytes, \"" + expected.execution + "\")";
  return why;
}

std::string save_tuning_table(const TuningTable& table, const std::filesystem::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      return "cannot create the directory " + path.parent_path().string() + " (" + ec.message() +
             ")";
  }
  const std::filesystem::path tmp =
      path.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp.string();
    out << table.to_json();
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return "cannot write " + tmp.string();
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return "cannot replace " + file + " (" + ec.message() + ")";
  }
  return {};
}

}  // namespace theo
