// serialization_bench: bytes per second of to_bytes / load_ciphertext for a bootparam_40-sized
// ciphertext (N = 2^16, level 16: 2 x 23 limbs, 12 MB) on the CPU backend, next to the rates of
// what they are made of (BLAKE2b over the same bytes, memcpy, the word check), one JSON record per
// measurement on stdout. The serve path's budget is derived from these (bench/NOTES.md).
//
//   theo_serialization_bench [--preset P] [--level L] [--reps R] [--threads 1,2,0]
//                            [--out file.json]
//
// --threads: SaveOptions / LoadOptions::threads values to measure (0: every hardware thread).

#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_commit.h"
#include "host_info.h"
#include "records.h"
#include "theo/theodosian.h"

namespace {

using theo::u32;
using theo::u64;

double median_seconds(int reps, const std::function<void()>& f) {
  f();  // warm: page faults of fresh buffers, lazy pools
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

std::vector<unsigned> parse_list(const std::string& s) {
  std::vector<unsigned> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    out.push_back(static_cast<unsigned>(std::stoul(item)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "bootparam_40", out;
  int level = 16, reps = 7;
  std::vector<unsigned> thread_counts = {1, 2, 0};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--preset" && i + 1 < argc) {
      preset = argv[++i];
    } else if (a == "--level" && i + 1 < argc) {
      level = std::atoi(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      thread_counts = parse_list(argv[++i]);
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: theo_serialization_bench [--preset P] [--level L] [--reps R] "
                   "[--threads 1,2,0] [--out file.json]\n");
      return 2;
    }
  }
  theo::ContextOptions opt;
  opt.backend = theo::BackendChoice::kCpu;
  opt.threads = 1;
  opt.allow_insecure = true;
  const auto ctx = theo::Context::create(theo::load_preset(preset), opt);
  level = std::min<int>(level, static_cast<int>(ctx->max_level()));
  theo::KeyGenerator keygen(ctx);
  const theo::SecretKey sk = keygen.create_secret_key();
  theo::Encryptor enc(ctx, sk);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> values(ctx->n() / 2);
  for (double& v : values)
    v = u(rng);
  // Words, not a seed: the form a server's results have.
  theo::Encoder encoder(ctx);
  const theo::Ciphertext ct = enc.encrypt(encoder.encode(values, static_cast<u32>(level)));
  theo::SaveOptions full;
  full.compact = false;

  std::vector<std::string> records;
  const auto emit = [&](const std::string& op, unsigned threads, double seconds, u64 bytes) {
    char buf[900];
    std::snprintf(buf, sizeof buf,
                  "{\"op\": \"%s\", \"device\": \"cpu\", \"cpu\": \"%s\", \"threads\": %u, "
                  "\"hardware_threads\": %u, \"preset\": \"%s\", \"level\": %d, \"bytes\": %llu, "
                  "\"median_ms\": %.3f, \"GB_per_s\": %.3f, \"load_average\": %.2f, "
                  "\"reps\": %d, \"git_commit\": \"%s\", \"date\": \"%s\"}",
                  op.c_str(), theo::bench::cpu_model().c_str(), threads,
                  std::max(1u, std::thread::hardware_concurrency()), preset.c_str(), level,
                  static_cast<unsigned long long>(bytes), seconds * 1e3,
                  static_cast<double>(bytes) / seconds / 1e9, theo::bench::load_average(), reps,
                  THEO_BENCH_GIT_COMMIT, theo::bench::utc_now().c_str());
    std::printf("%s\n", buf);
    std::fflush(stdout);
    records.emplace_back(buf);
  };

  std::vector<std::uint8_t> bytes = theo::to_bytes(*ctx, ct, full);
  const u64 size = bytes.size();

  // What the format's work is made of, one thread.
  if (sodium_init() < 0) return 1;
  std::vector<std::uint8_t> copy(size);
  emit("memcpy", 1, median_seconds(reps, [&] { std::memcpy(copy.data(), bytes.data(), size); }),
       size);
  std::uint8_t digest[32];
  emit(
      "blake2b_256", 1,
      median_seconds(
          reps, [&] { crypto_generichash(digest, sizeof digest, bytes.data(), size, nullptr, 0); }),
      size);
  const u32 q = ctx->prime(0);
  const auto* words = reinterpret_cast<const u32*>(bytes.data() + 256);
  const std::size_t nwords = (size - 512) / 4;
  volatile u32 sink = 0;
  emit("word_check", 1,
       median_seconds(reps,
                      [&] {
                        u32 bad = 0;
                        for (std::size_t i = 0; i < nwords; ++i)
                          bad |= static_cast<u32>(words[i] >= q);
                        sink = bad;
                      }),
       nwords * 4);
  (void)sink;

  for (const unsigned t : thread_counts) {
    theo::SaveOptions so = full;
    theo::LoadOptions lo;
    so.threads = t;
    lo.threads = t;
    emit("to_bytes", t, median_seconds(reps, [&] { bytes = theo::to_bytes(*ctx, ct, so); }), size);
    // The server's halves: framing from host memory, and the checks into host memory.
    const theo::HostCiphertext host = theo::download(*ctx, ct, so);
    std::vector<std::uint8_t> into(size);
    emit("host_to_bytes", t,
         median_seconds(reps,
                        [&] { theo::to_bytes(*ctx, host, std::span<std::uint8_t>(into), so); }),
         size);
    emit("load_host_ciphertext", t,
         median_seconds(reps, [&] { (void)theo::load_host_ciphertext(*ctx, bytes, lo); }), size);
    emit("load_ciphertext", t,
         median_seconds(
             reps,
             [&] { (void)theo::load_ciphertext(ctx, std::span<const std::uint8_t>(bytes), lo); }),
         size);
  }
  if (!out.empty()) theo::bench::write_json_array(out, records);
  return 0;
}
