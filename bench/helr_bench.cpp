// theo_helr_bench: HELR training on the 14 x 14 digits, encrypted, timed per iteration with a phase
// breakdown, checked against the plaintext reference (same polynomial, same mini-batches), and
// (--profile) the traffic model's bytes and the time by limb count (the paper's Fig. 8b).
//
// --preset gen:12 is a generated insecure N = 2^12 bootstrapping set with 13 user levels (with
// --insecure): the small CPU configuration.
//
//   theo_helr_bench [--preset bootparam_40] [--batch 1024] [--iterations 32] [--degree 3]
//                   [--radix 2|4|8] [--digits 3,8] [--backend auto|cpu|cuda] [--insecure]
//                   [--profile N]
//                   [--data PATH] [--seed S] [--json PATH]
//
// The digits set has 1797 images (about 250 training images of two classes), fewer than a batch:
// mini-batches are drawn with replacement from the training share (70%, seeded shuffle); the
// other 30% are the held-out images. One JSON record per line on stdout and appended to --json:
// op "helr_iteration" (timing, accuracy, precision) and, with --profile, "helr_profile".

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_commit.h"
#include "theo/math/prime_system.h"
#include "theo/model/traffic.h"
#include "theo/theodosian.h"
#include "theo/workloads/digits.h"
#include "theo/workloads/helr.h"

using namespace theo;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string preset = "bootparam_40";
  u32 batch = 1024, iterations = 32, degree = 3, profile = 0, radix = 2;
  int d0 = 3, d1 = 8;
  std::string backend = "auto",
              data = std::string(THEO_SOURCE_DIR) + "/python/theodosian/data/digits14.bin";
  std::string json;
  bool insecure = false;
  u64 seed = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  a.seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ParameterError("missing value after " + k);
      return argv[++i];
    };
    if (k == "--preset")
      a.preset = next();
    else if (k == "--batch")
      a.batch = static_cast<u32>(std::stoul(next()));
    else if (k == "--iterations")
      a.iterations = static_cast<u32>(std::stoul(next()));
    else if (k == "--degree")
      a.degree = static_cast<u32>(std::stoul(next()));
    else if (k == "--radix")
      a.radix = static_cast<u32>(std::stoul(next()));
    else if (k == "--profile")
      a.profile = static_cast<u32>(std::stoul(next()));
    else if (k == "--backend")
      a.backend = next();
    else if (k == "--data")
      a.data = next();
    else if (k == "--json")
      a.json = next();
    else if (k == "--seed")
      a.seed = std::stoull(next());
    else if (k == "--insecure")
      a.insecure = true;
    else if (k == "--digits") {
      const std::string v = next();
      if (std::sscanf(v.c_str(), "%d,%d", &a.d0, &a.d1) != 2) throw ParameterError("--digits a,b");
    } else if (k == "--help" || k == "-h") {
      std::puts(
          "theo_helr_bench [--preset P] [--batch B] [--iterations T] [--degree 3|5|7] [--radix "
          "2|4|8] "
          "[--digits a,b] [--backend auto|cpu|cuda] [--insecure] [--profile N] [--data PATH] "
          "[--seed S] [--json PATH]");
      std::exit(0);
    } else {
      throw ParameterError("unknown argument " + k);
    }
  }
  return a;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

void emit(const Args& a, const Json& j) {
  std::cout << j.dump() << std::endl;
  if (!a.json.empty()) {
    std::ofstream out(a.json, std::ios::app);
    out << j.dump() << "\n";
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(a.seed));
  std::mt19937_64 rng(a.seed);

  // ---- data: two digits, 70/30 split, batches with replacement --------------------------------
  HelrConfig cfg;
  cfg.batch = a.batch;
  cfg.iterations = a.iterations;
  cfg.sigmoid_degree = a.degree;
  cfg.reduction_radix = a.radix;
  const Digits digits = load_digits(a.data);
  std::vector<u32> idx;
  for (u32 i = 0; i < digits.count(); ++i)
    if (digits.labels[i] == a.d0 || digits.labels[i] == a.d1) idx.push_back(i);
  std::shuffle(idx.begin(), idx.end(), rng);
  const std::size_t n_train = idx.size() * 7 / 10;
  const std::vector<u32> train(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n_train));
  const std::vector<u32> test(idx.begin() + static_cast<std::ptrdiff_t>(n_train), idx.end());
  auto labels_of = [&](const std::vector<u32>& s) {
    std::vector<std::uint8_t> y;
    for (const u32 i : s)
      y.push_back(digits.labels[i] == a.d1 ? 1 : 0);
    return y;
  };
  const auto x_train = digit_features(digits, train, cfg.features);
  const auto y_train = labels_of(train);
  const auto x_test = digit_features(digits, test, cfg.features);
  const auto y_test = labels_of(test);
  std::uniform_int_distribution<u32> pick(0, static_cast<u32>(train.size()) - 1);
  std::vector<u32> batches(static_cast<std::size_t>(cfg.iterations) * cfg.batch);
  for (auto& b : batches)
    b = pick(rng);
  const auto ref = helr_reference_train(cfg, x_train, y_train, batches);
  std::fprintf(stderr,
               "digits %d vs %d: %zu training / %zu held-out images; batches of %u drawn "
               "with replacement\n",
               a.d0, a.d1, train.size(), test.size(), cfg.batch);

  // ---- context, workload, keys ------------------------------------------------------------------
  ContextOptions o;
  o.backend = a.backend == "cpu"    ? BackendChoice::kCpu
              : a.backend == "cuda" ? BackendChoice::kCuda
                                    : BackendChoice::kAuto;
  o.allow_insecure = a.insecure;
  std::shared_ptr<TrafficRecorder> rec;
  if (a.profile > 0) {
    rec = std::make_shared<TrafficRecorder>(
        TrafficRecorderOptions{.profile = true, .keep_records = true});
    rec->set_enabled(false);
    o.wrap_backend = record_traffic(rec);
  }
  // "gen:LOGN": a generated insecure bootstrapping set with 13 user levels (the CPU configuration).
  ParameterSet params;
  if (a.preset.rfind("gen:", 0) == 0) {
    PrimeSystemSpec spec;
    spec.log_n = static_cast<u32>(std::stoul(a.preset.substr(4)));
    spec.log_scale = 40;
    spec.levels = 13;
    spec.boot_levels = 13;
    spec.num_cts_levels = 2;
    spec.num_stc_levels = 2;
    params = generate_prime_system(spec);
  } else {
    params = load_preset(a.preset);
  }
  auto ctx = Context::create(params, o);
  Helr helr(ctx, cfg);  // plans the levels: rejects an impossible depth before any key work
  std::fprintf(stderr, "%s", helr.plan().describe().c_str());
  std::fprintf(stderr, "%s", helr.bootstrapper().describe().c_str());
  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  Encryptor enc(ctx, pk);
  Decryptor dec(ctx, sk);
  const auto tk = Clock::now();
  helr.generate_keys(keygen, sk, true);
  std::fprintf(stderr, "keys in %.1f s\n",
               std::chrono::duration<double>(Clock::now() - tk).count());

  auto batch_of = [&](u32 t, std::vector<double>& bx, std::vector<std::uint8_t>& by) {
    bx.clear();
    by.clear();
    for (u32 k = 0; k < cfg.batch; ++k) {
      const u32 i = batches[static_cast<std::size_t>(t) * cfg.batch + k];
      bx.insert(bx.end(), x_train.begin() + static_cast<std::ptrdiff_t>(i) * cfg.features,
                x_train.begin() + static_cast<std::ptrdiff_t>(i + 1) * cfg.features);
      by.push_back(y_train[i]);
    }
  };

  // ---- training, timed per iteration (encryption of the batch is the client's, not timed) ----
  std::vector<double> bx;
  std::vector<std::uint8_t> by;
  {
    // Warm-up: one iteration on a throwaway state (first-use allocations, tables).
    Helr::State warm = helr.initial_state(enc);
    batch_of(0, bx, by);
    helr.iterate(warm, helr.encrypt_batch(enc, bx, by, 0));
    ctx->backend().synchronize();
  }
  Helr::State state = helr.initial_state(enc);
  std::vector<double> iter_ms;
  HelrPhaseTimes sum;
  double min_bits = 1e9;
  for (u32 t = 0; t < cfg.iterations; ++t) {
    batch_of(t, bx, by);
    const Helr::Batch b = helr.encrypt_batch(enc, bx, by, t);
    ctx->backend().synchronize();
    HelrPhaseTimes pt;
    const auto t0 = Clock::now();
    helr.iterate(state, b, &pt);
    ctx->backend().synchronize();
    iter_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    sum.bootstrap_ms += pt.bootstrap_ms;
    sum.unpack_ms += pt.unpack_ms;
    sum.inner_product_ms += pt.inner_product_ms;
    sum.sigmoid_ms += pt.sigmoid_ms;
    sum.gradient_ms += pt.gradient_ms;
    sum.update_ms += pt.update_ms;
    sum.key_switches = pt.key_switches;
    const auto w = helr.decrypt_weights(dec, state);
    double err = 0, scale = 0;
    for (u32 j = 0; j < cfg.features; ++j) {
      err = std::max(err, std::abs(w[j] - ref[t][j]));
      scale = std::max(scale, std::abs(ref[t][j]));
    }
    const double bits = err > 0 ? -std::log2(err / scale) : 60;
    min_bits = std::min(min_bits, bits);
    std::fprintf(stderr, "\r[helr] iteration %2u/%u  %8.1f ms  weights %.1f bits   ", t + 1,
                 cfg.iterations, iter_ms.back(), bits);
  }
  std::fputc('\n', stderr);
  const auto w_enc = helr.decrypt_weights(dec, state);
  const auto& w_ref = ref.back();
  double err = 0, scale = 0;
  for (u32 j = 0; j < cfg.features; ++j) {
    err = std::max(err, std::abs(w_enc[j] - w_ref[j]));
    scale = std::max(scale, std::abs(w_ref[j]));
  }
  const double acc_enc = helr_accuracy(w_enc, x_test, y_test);
  const double acc_ref = helr_accuracy(w_ref, x_test, y_test);
  const double total = std::accumulate(iter_ms.begin(), iter_ms.end(), 0.0);
  const double per = total / cfg.iterations;
  const double it = cfg.iterations;
  Json j{{"op", "helr_iteration"},
         {"device", ctx->backend().name()},
         {"preset", a.preset},
         {"log_n", ctx->log_n()},
         {"features", cfg.features},
         {"batch", cfg.batch},
         {"iterations", cfg.iterations},
         {"sigmoid_degree", cfg.sigmoid_degree},
         {"sigmoid_bound", cfg.sigmoid_bound},
         {"reduction_radix", cfg.reduction_radix},
         {"digits", std::to_string(a.d0) + " vs " + std::to_string(a.d1)},
         {"held_out_images", test.size()},
         {"mean_ms", per},
         {"median_ms", median(iter_ms)},
         {"bootstraps", helr.bootstraps()},
         {"phase_ms_per_iteration",
          {{"bootstrap", sum.bootstrap_ms / it},
           {"unpack", sum.unpack_ms / it},
           {"inner_product", sum.inner_product_ms / it},
           {"sigmoid", sum.sigmoid_ms / it},
           {"gradient", sum.gradient_ms / it},
           {"update", sum.update_ms / it}}},
         {"bootstrap_share", sum.bootstrap_ms / total},
         {"key_switches_per_iteration_excl_boot", sum.key_switches},
         {"accuracy", acc_enc},
         {"accuracy_plaintext", acc_ref},
         {"precision_bits", -std::log2(err / scale)},
         {"precision_bits_min_over_iterations", min_bits},
         {"seed", a.seed},
         {"git_commit", THEO_BENCH_GIT_COMMIT},
         {"date", today()},
         {"note",
          "mean_ms = total / iterations (bootstrapping amortized, the paper's ms/it); "
          "batch encryption excluded (client side)"}};
  emit(a, j);

  // ---- profile: traffic model bytes and time by limb count over a few more iterations ----------
  if (a.profile > 0) {
    // A fresh state and the same first batches, with every op timed (one synchronize per op:
    // absolute times are inflated by the launch round trips; the shares are what this is for).
    Helr::State s = helr.initial_state(enc);
    const u32 runs = std::min(a.profile, cfg.iterations);
    std::vector<Helr::Batch> enc_batches;
    for (u32 t = 0; t < runs; ++t) {
      batch_of(t, bx, by);
      enc_batches.push_back(helr.encrypt_batch(enc, bx, by, t));
    }
    rec->clear();
    rec->set_enabled(true);
    for (u32 t = 0; t < runs; ++t)
      helr.iterate(s, enc_batches[t]);
    rec->set_enabled(false);
    std::map<std::string, double> by_limbs;
    double total_us = 0, ks_us = 0, boot_us = 0;
    for (const TrafficRecord& r : rec->records()) {
      const u32 per_poly = r.cost.polys ? r.cost.limbs / r.cost.polys : 0;
      const u32 lo = per_poly / 10 * 10;
      by_limbs[std::to_string(lo) + "-" + std::to_string(lo + 9)] += r.time_us;
      total_us += r.time_us;
      if (r.scope.find("ModUp") != std::string::npos ||
          r.scope.find("KeyMult") != std::string::npos ||
          r.scope.find("ModDown") != std::string::npos)
        ks_us += r.time_us;
      if (r.scope.rfind("HELR/Bootstrap", 0) == 0) boot_us += r.time_us;
    }
    Json bins = Json::object();
    for (const auto& [k, v] : by_limbs)
      bins[k] = v / total_us;
    const TrafficTotals tot = rec->total();
    Json p{{"op", "helr_profile"},
           {"device", ctx->backend().name()},
           {"preset", a.preset},
           {"batch", cfg.batch},
           {"iterations_profiled", runs},
           {"time_share_by_limbs_per_poly", bins},
           {"key_switch_share", ks_us / total_us},
           {"bootstrap_share", boot_us / total_us},
           {"traffic_bytes_per_iteration", tot.bytes() / runs},
           {"table_bytes_per_iteration", tot.table_bytes / runs},
           {"backend_calls_per_iteration", static_cast<double>(tot.calls) / runs},
           {"profiled_ms_per_iteration", total_us / 1e3 / runs},
           {"git_commit", THEO_BENCH_GIT_COMMIT},
           {"date", today()}};
    emit(a, p);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "theo_helr_bench: %s\n", e.what());
  return 1;
}
