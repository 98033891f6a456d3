#include "host_info.h"

#include "bench_commit.h"
#include "theo/backend/device_facts.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>

namespace theo::bench {

namespace {

// First line of a shell command's output, or "" when it fails.
std::string first_line(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::array<char, 512> buf{};
  std::string out;
  if (std::fgets(buf.data(), static_cast<int>(buf.size()), p)) out = buf.data();
  const int rc = pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return rc == 0 ? out : "";
}

std::string git(const std::string& args) {
  return first_line("git -C '" THEO_SOURCE_DIR "' " + args + " 2>/dev/null");
}

}  // namespace

namespace {

// The commit this binary was built from (bench_commit.h, stamped at build time), "" if unknown.
std::string built_from() {
  const std::string stamp = THEO_BENCH_GIT_COMMIT;
  return stamp == "unknown" ? "" : stamp;
}

constexpr std::string_view kDirty = "-dirty";

}  // namespace

std::string git_commit() {
  std::string c = built_from();
  if (c.empty()) return git("rev-parse HEAD");
  if (c.ends_with(kDirty)) c.resize(c.size() - kDirty.size());
  return c;
}

bool git_dirty() {
  const std::string c = built_from();
  if (c.empty()) return !git("status --porcelain --untracked-files=no").empty();
  return c.ends_with(kDirty);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

std::string cpu_model() {
  return cpu_model_name();
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  if (!(f >> load)) return -1;
  return load;
}

}  // namespace theo::bench
