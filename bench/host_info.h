#pragma once
// Facts about the run for the header record: commit, date, host.

#include <string>

namespace theo::bench {

// `git rev-parse HEAD` of the source tree now, else the commit seen at configure time.
std::string git_commit();
// True when the source tree has uncommitted changes (false when git is unavailable).
bool git_dirty();
// UTC, ISO 8601.
std::string utc_now();
std::string host_name();
std::string cpu_model();
// 1-minute load average (/proc/loadavg), or -1: CPU timings on a busy host are upper bounds.
double load_average();

}  // namespace theo::bench
