// compact_keys_cpu: the CPU reference expansion of compact switching keys (math/compact_expand.h)
// on one thread, per ChaCha round count: the words of a bootparam_40 key's limbs (every prime of
// the key basis, all dnum digits) per second. One JSON record per round count on stdout.
//
//   theo_compact_keys_cpu [--reps R] [--out file.json]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench_commit.h"
#include "host_info.h"
#include "math/compact_expand.h"
#include "records.h"
#include "theo/math/params.h"

int main(int argc, char** argv) {
  using theo::u32;
  using theo::u64;
  namespace ce = theo::compact_expand;
  int reps = 5;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: theo_compact_keys_cpu [--reps R] [--out file.json]\n");
      return 2;
    }
  }
  const theo::ParameterSet p = theo::load_preset("bootparam_40");
  std::vector<u32> primes;
  for (const auto* list : {&p.terminal_primes, &p.main_primes, &p.auxiliary_primes})
    for (const u64 q : *list)
      primes.push_back(static_cast<u32>(q));
  const u32 n = 1u << p.log_degree, digits = 4;
  const ce::Key key{{0x01234567u, 0x89abcdefu, 3, 4, 5, 6, 7, 8}};
  std::vector<u32> limb(static_cast<std::size_t>(digits) * n);
  std::vector<std::string> records;
  for (const u32 rounds : {8u, 12u, 20u}) {
    std::vector<double> secs;
    u64 spills = 0;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      spills = 0;
      for (const u32 q : primes)
        spills += ce::expand_limb(key, rounds, 0, digits, q, n, limb);
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(secs.begin(), secs.end());
    const double med = secs[secs.size() / 2];
    const double words = static_cast<double>(primes.size()) * digits * n;
    const double blocks = words / 16 + static_cast<double>(spills);
    char buf[768];
    std::snprintf(buf, sizeof buf,
                  "{\"op\": \"compact_expand_cpu\", \"device\": \"cpu\", \"cpu\": \"%s\", "
                  "\"threads\": 1, \"preset\": \"bootparam_40\", \"rounds\": %u, \"limbs\": %zu, "
                  "\"digits\": %u, \"n\": %u, \"median_ms\": %.2f, \"Mwords_per_s\": %.1f, "
                  "\"chacha_blocks_per_16_words\": %.4f, \"load_average\": %.2f, \"reps\": %d, "
                  "\"git_commit\": \"%s\", \"date\": \"%s\"}",
                  theo::bench::cpu_model().c_str(), rounds, primes.size(), digits, n, med * 1e3,
                  words / med / 1e6, blocks / (words / 16), theo::bench::load_average(), reps,
                  THEO_BENCH_GIT_COMMIT, theo::bench::utc_now().c_str());
    std::printf("%s\n", buf);
    std::fflush(stdout);
    records.emplace_back(buf);
  }
  if (!out.empty()) theo::bench::write_json_array(out, records);
  return 0;
}
