// Parameter files: the anchor files load, round-trip, mean what we think level_config means, and
// every corruption of every field is reported naming that field.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "theo/errors.h"
#include "theo/math/params.h"
#include "theo/math/primes.h"

namespace {

using namespace theo;
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kAnchors = {"bootparam_30", "bootparam_35", "bootparam_40",
                                           "bootparam_40_64bit"};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path preset_path(const std::string& name) {
  return fs::path(THEO_SOURCE_DIR) / "presets" / (name + ".json");
}

TEST(Params, AnchorFilesLoad) {
  for (const auto& name : kAnchors) {
    SCOPED_TRACE(name);
    const ParameterSet p = load_parameter_file(preset_path(name));
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(p.log_degree, 16u);
    EXPECT_TRUE(p.boot);
    EXPECT_EQ(p.dense_hamming_weight, 32768u);
    EXPECT_EQ(p.sparse_hamming_weight, 32u);
    EXPECT_EQ(p.num_cts_levels, 4u);
    EXPECT_EQ(p.num_stc_levels, 3u);
    EXPECT_EQ(p.dnum(), 4u);
    // The top level holds every prime (Q_top = Q_max).
    EXPECT_EQ(p.limbs_at(p.max_level()), p.max_limbs());
    EXPECT_EQ(p.max_limbs(), p.main_primes.size() + p.terminal_primes.size());
    const ParameterSet q = load_preset(name);
    EXPECT_EQ(p, q);
  }
  const ParameterSet p40 = load_preset("bootparam_40");
  EXPECT_EQ(p40.word_bits(), 32u);
  EXPECT_EQ(p40.max_limbs(), 47u);
  EXPECT_EQ(p40.alpha(), 12u);
  EXPECT_EQ(p40.max_level(), 28u);
  EXPECT_EQ(p40.default_encryption_level, 16u);
  EXPECT_EQ(load_preset("bootparam_30").max_limbs(), 48u);
  EXPECT_EQ(load_preset("bootparam_35").max_limbs(), 48u);
  const ParameterSet p64 = load_preset("bootparam_40_64bit");
  EXPECT_EQ(p64.word_bits(), 64u);
  EXPECT_EQ(p64.alpha(), 7u);
}

TEST(Params, PresetsAreTheAnchorFilesUnchanged) {
  const fs::path anchors = fs::path(THEO_ANCHOR_DIR) / "cheddar-params";
  if (!fs::exists(anchors)) GTEST_SKIP() << "anchor folder not present: " << anchors;
  for (const auto& name : kAnchors)
    EXPECT_EQ(read(anchors / (name + ".json")), read(preset_path(name))) << name;
}

// level_config[l] = [m, t]: the first m main and first t terminal primes. log2 Q then rises by
// the scale per level up to default_encryption_level (bootparam_40: 50, 90, 130, 170, 210, ...),
// and by the bootstrapping scales above it.
TEST(Params, LevelConfigMeaning) {
  for (const auto& name : kAnchors) {
    const ParameterSet p = load_preset(name);
    std::printf("%s (scale 2^%u, default_encryption_level %u):\n", name.c_str(),
                p.log_default_scale, p.default_encryption_level);
    const double s = p.log_default_scale;
    const double base = p.log2_q(0);
    for (u32 l = 0; l <= p.max_level(); ++l) {
      const double lq = p.log2_q(l);
      const double step = l ? lq - p.log2_q(l - 1) : 0;
      char cfg[32];
      std::snprintf(cfg, sizeof cfg, "[%u,%u]", p.level_config[l][0], p.level_config[l][1]);
      std::printf("  level %2u %-9s log2 Q = %8.2f  step %6.2f\n", l, cfg, lq, step);
      // Non-bootstrapping levels of the 32-bit files: exactly one scale per level (within 0.25
      // bit).
      if (p.word_bits() == 32 && l >= 1 && l <= p.default_encryption_level) {
        EXPECT_NEAR(lq, base + s * l, 0.25 * l) << name << " level " << l;
      }
      if (l >= 1) {
        EXPECT_GT(step, 0) << name << " level " << l;
        if (l > p.default_encryption_level) {
          EXPECT_GT(step, s - 1) << "bootstrapping levels use larger scales";
        }
      }
    }
  }
  const ParameterSet p = load_preset("bootparam_40");
  const double expect[] = {50, 90, 130, 170, 210, 250, 290, 330};
  for (u32 l = 0; l < 8; ++l)
    EXPECT_NEAR(p.log2_q(l), expect[l], 0.5) << l;
  EXPECT_NEAR(p.log2_q(17) - p.log2_q(16), 58, 0.5);  // double rescaling with two ~2^29 primes
  EXPECT_NEAR(p.log2_q(28) - p.log2_q(27), 50, 0.5);  // two terminal primes at the top
  // bootparam_30: level 0 is two ~2^20 primes (39.75 bits), then +30 per level.
  const ParameterSet p30 = load_preset("bootparam_30");
  EXPECT_NEAR(p30.log2_q(0), 39.75, 0.05);
  EXPECT_NEAR(p30.log2_q(22) - p30.log2_q(0), 22 * 30, 0.5);
}

TEST(Params, RoundTrip) {
  for (const auto& name : kAnchors) {
    ParameterSet p = load_preset(name);
    p.comment = "round trip of " + name;
    const std::string text = to_json(p);
    const ParameterSet q = parse_parameters(text);
    EXPECT_EQ(p, q) << name << "\n" << text;
    EXPECT_EQ(to_json(q), text);
    // The serialized form is plain JSON with the anchor fields.
    const json j = json::parse(text);
    EXPECT_EQ(j["level_config"].size(), p.level_config.size());
    EXPECT_EQ(j["main_primes"].get<std::vector<u64>>(), p.main_primes);
  }
}

TEST(Params, NameCommentAndUnknownFields) {
  json j = json::parse(read(preset_path("bootparam_40")));
  j["name"] = "my_set";
  j["comment"] = "anything";
  ParameterSet p = parse_parameters(j.dump());
  EXPECT_EQ(p.name, "my_set");
  EXPECT_EQ(p.comment, "anything");
  EXPECT_EQ(parse_parameters(j.dump(), "override").name, "override");
  j["name"] = 5;
  EXPECT_THROW(parse_parameters(j.dump()), ParameterError);
  j.erase("name");
  j["log_degre"] = 16;  // typo
  try {
    parse_parameters(j.dump());
    FAIL() << "unknown field accepted";
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("log_degre\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_parameters("{ not json"), ParameterError);
  EXPECT_THROW(parse_parameters("[1, 2]"), ParameterError);
  // A number too large for a double is out_of_range inside the JSON parser, not a parse_error.
  EXPECT_THROW(parse_parameters("{\"log_degree\": 1e999}"), ParameterError);
  EXPECT_THROW(parse_parameters("[-1e400]"), ParameterError);
  EXPECT_THROW(load_parameter_file("/nonexistent/x.json"), ParameterError);
}

// A prime q = 1 mod 2^17 (N = 2^16) that is in none of the lists, near `near`.
u64 fresh_ntt_prime(const ParameterSet& p, u64 near) {
  const u64 step = u64{2} << p.log_degree;
  for (u64 c = (near / step) * step + 1;; c += step) {
    bool used = false;
    for (const auto* l : {&p.terminal_primes, &p.main_primes, &p.auxiliary_primes})
      for (u64 q : *l)
        used |= q == c;
    if (!used && is_prime(c)) return c;
  }
}

struct Corruption {
  std::string what;
  std::function<void(json&)> apply;
};

// All corruptions of one field.
std::vector<Corruption> corruptions(const std::string& field, const json& orig,
                                    const ParameterSet& p) {
  std::vector<Corruption> c;
  c.push_back({"missing", [field](json& j) { j.erase(field); }});
  c.push_back({"null", [field](json& j) { j[field] = nullptr; }});
  c.push_back({"object", [field](json& j) { j[field] = json::object(); }});
  const u64 n = u64{1} << p.log_degree;
  const u32 levels = static_cast<u32>(p.level_config.size());
  auto set = [field](json v) { return [field, v](json& j) { j[field] = v; }; };
  if (field == "boot") {
    c.push_back({"string", set("true")});
    c.push_back({"number", set(1)});
    return c;
  }
  if (orig.is_number()) {
    c.push_back({"string", set(std::to_string(orig.get<u64>()))});
    c.push_back({"negative", set(-1)});
    c.push_back({"fraction", set(orig.get<double>() + 0.5)});
    c.push_back({"array", set(json::array({orig}))});
    if (field == "log_degree") {
      c.push_back({"9", set(9)});
      c.push_back({"18", set(18)});
      c.push_back({"17 (primes not 1 mod 2^18)", set(17)});
      c.push_back({"huge", set(u64{1} << 40)});
    } else if (field == "log_default_scale") {
      c.push_back({"0", set(0)});
      c.push_back({"above log2 Q_0", set(static_cast<u32>(p.log2_q(0)) + 1)});
    } else if (field == "dense_hamming_weight") {
      c.push_back({"0", set(0)});
      c.push_back({"N+1", set(n + 1)});
    } else if (field == "sparse_hamming_weight") {
      c.push_back({"above dense", set(p.dense_hamming_weight + 1)});
    } else if (field == "num_cts_levels" || field == "num_stc_levels") {
      c.push_back({"= levels", set(levels)});
      c.push_back({"levels - 1", set(levels - 1)});
    } else if (field == "default_encryption_level") {
      c.push_back({"= levels", set(levels)});
      c.push_back({"huge", set(1000000)});
    }
    return c;
  }
  if (field == "terminal_primes" || field == "main_primes" || field == "auxiliary_primes") {
    const std::vector<u64>& list = field == "terminal_primes" ? p.terminal_primes
                                   : field == "main_primes"   ? p.main_primes
                                                              : p.auxiliary_primes;
    const u64 step = 2 * n;
    c.push_back({"string", set("[1,2]")});
    c.push_back({"element string", [field](json& j) { j[field].push_back("30539777"); }});
    c.push_back({"element negative", [field](json& j) { j[field].push_back(-7); }});
    c.push_back({"element fraction", [field](json& j) { j[field].push_back(30539777.5); }});
    c.push_back({"appended composite", [field](json& j) { j[field].push_back(81); }});
    if (field != "auxiliary_primes")
      c.push_back({"appended unused prime",
                   [field, v = fresh_ntt_prime(p, 1 << 28)](json& j) { j[field].push_back(v); }});
    for (std::size_t i : {std::size_t{0}, list.size() / 2, list.size() - 1}) {
      if (list.empty()) break;
      const u64 q = list[i];
      // Composite but 1 mod 2N.
      u64 comp = q + step;
      while (is_prime(comp))
        comp += step;
      c.push_back({"composite [" + std::to_string(i) + "]",
                   [field, i, comp](json& j) { j[field][i] = comp; }});
      // Prime but not 1 mod 2N.
      u64 bad = q + 2;
      while (!is_prime(bad) || (bad - 1) % step == 0)
        bad += 2;
      c.push_back({"not NTT-friendly [" + std::to_string(i) + "]",
                   [field, i, bad](json& j) { j[field][i] = bad; }});
      c.push_back({"one [" + std::to_string(i) + "]", [field, i](json& j) { j[field][i] = 1; }});
      // Duplicate of another prime of this or another list.
      const u64 other = (list.size() > 1) ? list[i == 0 ? 1 : 0] : p.auxiliary_primes[0];
      if (other != q)
        c.push_back({"duplicate [" + std::to_string(i) + "]",
                     [field, i, other](json& j) { j[field][i] = other; }});
      if (p.word_bits() == 64) {
        // 64-bit sets: primes must stay below 2^62.
        u64 big = ((u64{1} << 62) / step) * step + 1;
        while (!is_prime(big))
          big += step;
        c.push_back({">= 2^62 [" + std::to_string(i) + "]",
                     [field, i, big](json& j) { j[field][i] = big; }});
      }
    }
    if (field == "auxiliary_primes") c.push_back({"empty", set(json::array())});
    return c;
  }
  if (field == "level_config") {
    const u32 M = static_cast<u32>(p.main_primes.size()),
              T = static_cast<u32>(p.terminal_primes.size());
    c.push_back({"string", set("[[0,2]]")});
    c.push_back({"empty", set(json::array())});
    c.push_back({"main count too large", [M](json& j) { j["level_config"].back()[0] = M + 1; }});
    c.push_back(
        {"terminal count too large", [T](json& j) { j["level_config"].back()[1] = T + 1; }});
    c.push_back({"non-monotone (swap 3,4)",
                 [](json& j) { std::swap(j["level_config"][3], j["level_config"][4]); }});
    c.push_back(
        {"non-monotone (repeat)", [](json& j) { j["level_config"][5] = j["level_config"][4]; }});
    c.push_back({"no primes", [](json& j) { j["level_config"][0] = json::array({0, 0}); }});
    c.push_back({"triple", [](json& j) { j["level_config"][2] = json::array({1, 2, 3}); }});
    c.push_back({"entry string", [](json& j) { j["level_config"][2] = "x"; }});
    c.push_back({"element string", [](json& j) { j["level_config"][2][0] = "3"; }});
    c.push_back({"only 3 levels (primes unused)", [](json& j) {
                   j["level_config"] = json::array(
                       {j["level_config"][0], j["level_config"][1], j["level_config"][2]});
                 }});
    return c;
  }
  if (field == "additional_base") {
    c.push_back({"[1,0]", set(json::array({1, 0}))});
    c.push_back({"[0,3]", set(json::array({0, 3}))});
    c.push_back({"[0]", set(json::array({0}))});
    c.push_back({"string", set("0,0")});
    return c;
  }
  ADD_FAILURE() << "no corruptions for field " << field;
  return c;
}

TEST(Params, EveryCorruptionOfEveryFieldNamesTheField) {
  int checked = 0;
  for (const auto& name : kAnchors) {
    const std::string text = read(preset_path(name));
    const json orig = json::parse(text);
    const ParameterSet p = parse_parameters(text, name);
    for (auto it = orig.begin(); it != orig.end(); ++it) {
      const std::string field = it.key();
      for (const auto& c : corruptions(field, it.value(), p)) {
        json j = orig;
        c.apply(j);
        try {
          parse_parameters(j.dump(), name);
          ADD_FAILURE() << name << ": corruption of " << field << " (" << c.what
                        << ") was accepted";
        } catch (const ParameterError& e) {
          EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
              << name << ": corruption of " << field << " (" << c.what
              << "): message does not name the field: " << e.what();
        }
        ++checked;
      }
    }
  }
  std::printf("%d corruptions checked\n", checked);
  // Sample messages, as the lead asked for them.
  json j = json::parse(read(preset_path("bootparam_40")));
  j["main_primes"][3] = 1073479680;
  try {
    parse_parameters(j.dump());
  } catch (const ParameterError& e) {
    EXPECT_STREQ(e.what(), "main_primes[3] = 1073479680 is not prime");
  }
  j = json::parse(read(preset_path("bootparam_40")));
  j["level_config"][5] = json::array({44, 0});
  try {
    parse_parameters(j.dump());
  } catch (const ParameterError& e) {
    EXPECT_STREQ(e.what(), "level_config[5] = [44, 0] uses 44 main primes but main_primes has 43");
  }
  j = json::parse(read(preset_path("bootparam_40")));
  j["log_degree"] = 9;
  try {
    parse_parameters(j.dump());
  } catch (const ParameterError& e) {
    EXPECT_STREQ(e.what(), "log_degree = 9 outside 10..17");
  }
}

TEST(Params, WidePrimeMakesA64BitDescription) {
  // A prime >= 2^31 turns a set into a 64-bit description: it loads (the Context refuses it later).
  json j = json::parse(read(preset_path("bootparam_40")));
  const ParameterSet p = parse_parameters(j.dump());
  u64 big = ((u64{1} << 40) / (2 * p.n())) * 2 * p.n() + 1;
  while (!is_prime(big))
    big += 2 * p.n();
  j["auxiliary_primes"].push_back(big);
  const ParameterSet q = parse_parameters(j.dump());
  EXPECT_EQ(q.word_bits(), 64u);
  EXPECT_EQ(q.alpha(), 13u);
}

TEST(Params, Presets) {
  const auto names = preset_names();
  for (const auto& a : kAnchors)
    EXPECT_NE(std::find(names.begin(), names.end(), a), names.end()) << a;
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    const ParameterSet p = load_preset(n);
    EXPECT_EQ(p.name, n);
    EXPECT_EQ(parse_parameters(to_json(p)), p);
  }
  try {
    load_preset("no_such_preset");
    FAIL();
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("bootparam_40"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_preset("../presets/bootparam_40"), ParameterError);
  EXPECT_THROW(load_preset(""), ParameterError);
}

// A preset folder passed to the lookup is searched first; the lookup reads no environment
// variable (THEO_PRESET_DIR is read once by the program that honours it and passed here).
TEST(Params, PresetDirIsAnExplicitInput) {
  const fs::path dir = fs::temp_directory_path() / ("theo_presets_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ParameterSet p = load_preset("bootparam_40");
  p.comment = "from the preset folder";
  p.name.clear();
  std::ofstream(dir / "my_folder_preset.json") << to_json(p);
  const auto names = preset_names(dir);
  EXPECT_NE(std::find(names.begin(), names.end(), "my_folder_preset"), names.end());
  const ParameterSet q = load_preset("my_folder_preset", dir);
  EXPECT_EQ(q.comment, "from the preset folder");
  EXPECT_EQ(q.name, "my_folder_preset");
  // Embedded presets are still found.
  EXPECT_EQ(load_preset("bootparam_35", dir).log_default_scale, 35u);
  // Without the folder the preset is unknown, also with THEO_PRESET_DIR naming it.
  EXPECT_THROW(load_preset("my_folder_preset"), ParameterError);
  ::setenv("THEO_PRESET_DIR", dir.c_str(), 1);
  EXPECT_THROW(load_preset("my_folder_preset"), ParameterError);
  const auto without = preset_names();
  EXPECT_EQ(std::find(without.begin(), without.end(), "my_folder_preset"), without.end());
  ::unsetenv("THEO_PRESET_DIR");
  fs::remove_all(dir);
}

}  // namespace

namespace theo {
namespace {

// with_log_degree: bootparam_40's primes and levels on N = 2^12, insecure and refused upward.
TEST(Params, WithLogDegreeKeepsTheStructure) {
  const ParameterSet p = load_preset("bootparam_40");
  const ParameterSet s = with_log_degree(p, 12);
  EXPECT_EQ(s.log_degree, 12u);
  EXPECT_EQ(s.main_primes, p.main_primes);
  EXPECT_EQ(s.terminal_primes, p.terminal_primes);
  EXPECT_EQ(s.auxiliary_primes, p.auxiliary_primes);
  EXPECT_NE(s.comment.find("INSECURE"), std::string::npos);
  EXPECT_LE(s.dense_hamming_weight, 1u << 12);
  EXPECT_THROW(with_log_degree(p, p.log_degree + 1), ParameterError);
}

}  // namespace
}  // namespace theo
