// The tuning table and its cache file: round trip, the keep-default rule, and every way a file can
// be bad (corrupted, stale, unreadable, unwritable), each detected and reported, never thrown.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "theo/errors.h"
#include "theo/plan/tuning_table.h"

namespace {

using namespace theo;
namespace fs = std::filesystem;

DeviceFacts h100() {
  return {"cuda", "NVIDIA H100 80GB HBM3", 132, 52428800, "cuda driver 12040, runtime 12060",
          "9.0"};
}

TuningKey make_key(const std::string& fingerprint = "00112233445566778899aabbccddeeff") {
  TuningKey k;
  k.device = h100();
  k.parameters = fingerprint;
  k.log_n = 16;
  k.alpha = 12;
  k.levels = {{2, 1, 12, 1u << 16}, {14, 2, 12, 1u << 16}, {47, 4, 12, 1u << 16}};
  k.cache_bytes = 52428800;
  k.execution = "fusion bconv_refined caching pipelining";
  return k;
}

TuningTable make_table() {
  TuningTable t(make_key());
  t.set_level({2,
               {{{Dataflow::kDPOB, 1}, 500.0},
                {{Dataflow::kDSOB, 1}, 610.5},
                {{Dataflow::kDPOC, 4}, 450.25},
                {{Dataflow::kDSOC, 10}, 700.0}}});
  t.set_level({0, {{{Dataflow::kDPOB, 1}, 20.0}, {{Dataflow::kDSOC, 2}, 19.9}}});
  return t;
}

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("theo_tuning_test_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool running_as_root() {
  return ::geteuid() == 0;
}

TEST(TuningTable, ChoiceKeepsTheDefaultWithinTheMargin) {
  TunedLevel t{0, {{{Dataflow::kDPOB, 1}, 100.0}, {{Dataflow::kDPOC, 3}, 99.0}}};
  EXPECT_EQ(t.choice(), kDefaultChoice);  // 1% faster: noise
  t.measured[1].median_us = 97.0;         // 3% faster
  EXPECT_EQ(t.choice(), (DataflowChoice{Dataflow::kDPOC, 3}));
  // Without a DPOB measurement the fastest wins.
  TunedLevel u{0, {{{Dataflow::kDSOB, 1}, 100.0}, {{Dataflow::kDSOC, 2}, 99.9}}};
  EXPECT_EQ(u.choice(), (DataflowChoice{Dataflow::kDSOC, 2}));
  const TuningTable table = make_table();
  EXPECT_EQ(table.choice(2), (DataflowChoice{Dataflow::kDPOC, 4}));
  EXPECT_EQ(table.choice(0), kDefaultChoice);
  EXPECT_FALSE(table.choice(1).has_value());  // not tuned
}

TEST(TuningTable, SetLevelChecks) {
  TuningTable t(make_key());
  EXPECT_THROW(t.set_level({3, {{{Dataflow::kDPOB, 1}, 1.0}}}), ParameterError);  // no level 3
  EXPECT_THROW(t.set_level({0, {}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kDPOB, 2}, 1.0}}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kAuto, 1}, 1.0}}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kDPOB, 1}, 0.0}}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kDPOB, 1}, -3.0}}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kDPOB, 1}, std::nan("")}}}), ParameterError);
  EXPECT_THROW(t.set_level({0, {{{Dataflow::kDPOB, 1}, INFINITY}}}), ParameterError);
  EXPECT_TRUE(t.levels().empty());
  t.set_level({1, {{{Dataflow::kDPOB, 1}, 5.0}}});
  t.set_level({1, {{{Dataflow::kDSOB, 1}, 4.0}}});  // replaces
  ASSERT_EQ(t.levels().size(), 1u);
  EXPECT_EQ(t.choice(1), (DataflowChoice{Dataflow::kDSOB, 1}));
}

TEST(TuningTable, JsonRoundTrip) {
  const TuningTable t = make_table();
  const TuningTable u = TuningTable::from_json(t.to_json());
  EXPECT_EQ(u.key(), t.key());
  ASSERT_EQ(u.levels().size(), 2u);
  EXPECT_EQ(u.levels()[0].level, 0u);
  EXPECT_EQ(u.choice(2), t.choice(2));
  ASSERT_NE(u.level(2), nullptr);
  EXPECT_DOUBLE_EQ(u.level(2)->find({Dataflow::kDPOC, 4})->median_us, 450.25);
}

TEST(TuningTable, Paths) {
  EXPECT_EQ(default_tuning_dir("/x/cache", "/home/u"), fs::path("/x/cache/theodosian/tuning"));
  EXPECT_EQ(default_tuning_dir("", "/home/u"), fs::path("/home/u/.cache/theodosian/tuning"));
  EXPECT_EQ(default_tuning_dir(nullptr, "/home/u"), fs::path("/home/u/.cache/theodosian/tuning"));
  EXPECT_TRUE(default_tuning_dir(nullptr, nullptr).empty());
  EXPECT_EQ(tuning_file("/d", make_key()),
            fs::path("/d/cuda-nvidia-h100-80gb-hbm3-sm132-0011223344556677.json"));
}

TEST(TuningTable, SaveAndLoad) {
  TempDir dir;
  const TuningTable t = make_table();
  const fs::path path = tuning_file(dir.path() / "nested" / "deeper", t.key());
  EXPECT_EQ(save_tuning_table(t, path), "");  // creates the directories
  const TuningLoad r = load_tuning_table(path, t.key());
  ASSERT_EQ(r.status, TuningLoadStatus::kLoaded) << r.message;
  EXPECT_TRUE(r.message.empty());
  EXPECT_EQ(r.table->choice(2), t.choice(2));
  // Saving again replaces the file; no temporary is left behind.
  EXPECT_EQ(save_tuning_table(t, path), "");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(path.parent_path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);

  const TuningLoad missing = load_tuning_table(dir.path() / "none.json", t.key());
  EXPECT_EQ(missing.status, TuningLoadStatus::kMissing);
  EXPECT_FALSE(missing.table.has_value());
}

// Every corruption is reported as kCorrupted with a message naming the file, never thrown.
TEST(TuningTable, CorruptedFiles) {
  TempDir dir;
  const TuningTable t = make_table();
  const std::string good = t.to_json();
  const fs::path path = dir.path() / "t.json";
  using nlohmann::json;
  const auto edited = [&](auto&& edit) {
    json j = json::parse(good);
    edit(j);
    return j.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty file", ""},
      {"garbage bytes", std::string("\x00\xff\xfe garbage \x01", 14)},
      {"truncated", good.substr(0, good.size() / 2)},
      {"not an object", "[1, 2, 3]"},
      {"wrong format", edited([](json& j) { j["format"] = "something-else"; })},
      {"no device", edited([](json& j) { j.erase("device"); })},
      {"no execution", edited([](json& j) { j.erase("execution"); })},
      {"sm_count a string", edited([](json& j) { j["device"]["sm_count"] = "132"; })},
      {"negative l2", edited([](json& j) { j["device"]["l2_bytes"] = -1; })},
      {"levels not pairs", edited([](json& j) { j["parameters"]["levels"][0] = json{1}; })},
      {"bad log_n", edited([](json& j) { j["parameters"]["log_n"] = 40; })},
      {"bad dataflow", edited([](json& j) { j["tuned"][0]["measured"][0]["dataflow"] = "DPOX"; })},
      {"auto measured", edited([](json& j) { j["tuned"][0]["measured"][0]["dataflow"] = "auto"; })},
      {"chunks out of range", edited([](json& j) {
         j["tuned"][1]["measured"][2]["chunks"] = 11;  // DPOC/11
       })},
      {"bulk with chunks", edited([](json& j) { j["tuned"][0]["measured"][0]["chunks"] = 3; })},
      {"negative time", edited([](json& j) { j["tuned"][0]["measured"][0]["median_us"] = -5.0; })},
      {"zero time", edited([](json& j) { j["tuned"][0]["measured"][0]["median_us"] = 0; })},
      {"null time", edited([](json& j) { j["tuned"][0]["measured"][0]["median_us"] = nullptr; })},
      {"level outside the set", edited([](json& j) { j["tuned"][0]["level"] = 3; })},
      {"level twice", edited([](json& j) { j["tuned"][1]["level"] = 0; })},
      {"candidate twice",
       edited([](json& j) { j["tuned"][0]["measured"][1] = j["tuned"][0]["measured"][0]; })},
      {"no measurements", edited([](json& j) { j["tuned"][0]["measured"] = json::array(); })},
      {"tuned not an array", edited([](json& j) { j["tuned"] = 5; })},
  };
  for (const auto& [what, text] : cases) {
    write(path, text);
    TuningLoad r;
    ASSERT_NO_THROW(r = load_tuning_table(path, t.key())) << what;
    EXPECT_EQ(r.status, TuningLoadStatus::kCorrupted) << what << ": " << r.message;
    EXPECT_FALSE(r.table.has_value()) << what;
    EXPECT_NE(r.message.find(path.string()), std::string::npos) << what << ": " << r.message;
  }
}

// A table of another GPU, driver, L2 size, SM count, parameter set or format version is stale.
TEST(TuningTable, StaleFiles) {
  TempDir dir;
  const TuningTable t = make_table();
  const fs::path path = dir.path() / "t.json";
  ASSERT_EQ(save_tuning_table(t, path), "");
  const auto expect_stale = [&](const TuningKey& expected, const std::string& word) {
    const TuningLoad r = load_tuning_table(path, expected);
    EXPECT_EQ(r.status, TuningLoadStatus::kStale) << r.message;
    EXPECT_FALSE(r.table.has_value());
    EXPECT_NE(r.message.find(word), std::string::npos) << r.message;
  };
  TuningKey k = make_key();
  k.device.name = "NVIDIA H200";
  expect_stale(k, "measured on NVIDIA H100");
  k = make_key();
  k.device.sm_count = 114;
  expect_stale(k, "114 SMs");
  k = make_key();
  k.device.l2_bytes /= 2;
  expect_stale(k, "L2");
  k = make_key();
  k.device.driver = "cuda driver 12080, runtime 12060";
  expect_stale(k, "12080");
  k = make_key("ffffffffffffffffffffffffffffffff");
  expect_stale(k, "another parameter set");
  k = make_key();
  k.levels[1].limbs = 15;
  expect_stale(k, "level shapes");
  k = make_key();
  k.cache_bytes = 1 << 20;
  expect_stale(k, "another cache size");
  k = make_key();
  k.execution = "fusion";
  expect_stale(k, "other optimizations");

  nlohmann::json j = nlohmann::json::parse(t.to_json());
  j["version"] = 99;
  write(path, j.dump());
  expect_stale(make_key(), "version 99");
}

TEST(TuningTable, UnreadableAndUnwritable) {
  TempDir dir;
  const TuningTable t = make_table();
  // A directory where the file should be.
  const fs::path as_dir = dir.path() / "is_a_directory.json";
  fs::create_directories(as_dir);
  TuningLoad r = load_tuning_table(as_dir, t.key());
  EXPECT_EQ(r.status, TuningLoadStatus::kUnreadable) << r.message;
  std::string err;
  ASSERT_NO_THROW(err = save_tuning_table(t, as_dir));
  EXPECT_NE(err, "");

  // A regular file where the directory should be.
  const fs::path blocker = dir.path() / "blocker";
  write(blocker, "x");
  ASSERT_NO_THROW(err = save_tuning_table(t, blocker / "sub" / "t.json"));
  EXPECT_NE(err.find("cannot create the directory"), std::string::npos) << err;

  // A directory nobody may create files in, root included.
  if (fs::is_directory("/proc")) {
    ASSERT_NO_THROW(err = save_tuning_table(t, "/proc/theodosian-tuning-test/t.json"));
    EXPECT_NE(err, "");
  }
}

// The same through permission bits, which do not bind root (skipped there; the cases above are
// the ones that hold for every user).
TEST(TuningTable, PermissionBits) {
  if (running_as_root()) GTEST_SKIP() << "permission bits do not bind root";
  TempDir dir;
  const TuningTable t = make_table();
  std::string err;
  // A file without read permission.
  const fs::path locked = dir.path() / "locked.json";
  ASSERT_EQ(save_tuning_table(t, locked), "");
  fs::permissions(locked, fs::perms::none);
  const TuningLoad r = load_tuning_table(locked, t.key());
  EXPECT_EQ(r.status, TuningLoadStatus::kUnreadable) << r.message;
  // A directory without write permission: the old table stays as it was.
  const fs::path ro = dir.path() / "readonly";
  fs::create_directories(ro);
  const fs::path inside = ro / "t.json";
  ASSERT_EQ(save_tuning_table(t, inside), "");
  const std::string before = read(inside);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  ASSERT_NO_THROW(err = save_tuning_table(t, inside));
  EXPECT_NE(err, "");
  fs::permissions(ro, fs::perms::owner_all);
  EXPECT_EQ(read(inside), before);
}

}  // namespace
