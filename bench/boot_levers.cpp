// theo_boot_levers: bootstrapping with the levers of issue 31 switched one at a time, all in one
// process, so that one device call measures the baseline, each lever and their combination
// side by side (docs/performance-journal.md, "Issue 31").
//
//   theo_boot_levers [--backend cuda|cpu] [--presets bootparam_40,...] [--configs c1,c2,...]
//                    [--reps 20] [--warmup 3] [--eager-reps 5] [--phase-reps 3]
//                    [--precision-runs 10] [--ratio BITS] [--insecure] [--out FILE.json] [--quick]
//                    [--log-n L] [--diagnose] [--evalmod-r R] [--evalmod-degree D] [--arcsine A]
//                    [--dense-h H] [--no-timing]
//
// A config is a theo::with_bootstrap_levers spec on top of Optimizations::all(): "baseline"
// (every lever off), "all", one lever name, or names joined by '+'. Per preset and config, on a
// Context of its own (keys from fixed seeds, so configs that differ only in bit-exact levers give
// the same output words: `output_hash`):
//   * graph: the bootstrapping captured once (Context::capture) and replayed; `median_ms` is the
//     host clock around a replay and a synchronize (the anchor's measure), median of --reps;
//     precision over --precision-runs fresh random inputs (mean and worst, -log2 max slot error);
//   * eager: the same, issued op by op (median of --eager-reps), and the phases, each timed with a
//     synchronize after it (median of --phase-reps): ModRaise, CoeffToSlot, EvalMod, SlotToCoeff;
//   * set-up: Context, Bootstrapper tables and every key (seconds).
// Precision studies (on the CPU at reduced N): --log-n runs each preset's primes and levels on
// N = 2^L (theo::with_log_degree, insecure: needs --insecure); --diagnose adds
// Bootstrapper::diagnose's error by stage, averaged over the precision inputs
// (`error_by_stage`, log2 max slot error); --evalmod-r / --evalmod-degree / --arcsine fix EvalMod's
// double angles, cosine degree and arcsine degree (K stays derived); --dense-h sets the dense
// secret's Hamming weight (the final rescale's rounding e0 + e1 s grows with it; below N/2 the
// set needs --insecure: the library's security table is for dense ternary secrets); --no-timing
// skips the timed replays and the eager phases (precision and diagnosis only).
// Records (JSON array, a header first): op "boot", preset, mode ("graph" / "eager"), config,
// levers, device, median_ms / p10_ms / p90_ms, precision_bits, phases_ms, input_level,
// output_level, effective_levels (= output - input), setup_s, kernels, output_hash, anchor_ms
// (null: scripts/gpu/boot-levers.sh fills it from the anchor's run) and git_commit. A table is
// printed last.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "records.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/theodosian.h"
#include "timing.h"

namespace theo::bench {
namespace {

struct Options {
  std::string backend = "cuda";
  std::vector<std::string> presets = {"bootparam_40"};
  std::vector<std::string> configs = {
      "baseline",        "inplace_constants",
      "lazy_polynomial", "slot_to_coeff_first",
      "batched_evalmod", "inplace_constants+lazy_polynomial+slot_to_coeff_first"};
  unsigned reps = 20;
  unsigned warmup = 3;
  unsigned eager_reps = 5;
  unsigned phase_reps = 3;
  unsigned precision_runs = 10;
  u32 ratio = 0;  // BootstrapConfig::message_ratio_bits (0: the default)
  u32 log_n = 0;  // 0: the preset's N
  bool diagnose = false;
  bool timing = true;
  int evalmod_r = -1, evalmod_degree = -1;
  u32 arcsine = 0;
  u32 dense_h = 0;  // 0: the preset's
  bool insecure = false;
  std::string out;
};

int usage() {
  std::fprintf(stderr,
               "usage: theo_boot_levers [--backend cuda|cpu] [--presets p1,p2] [--configs c1,c2] "
               "[--reps n] [--warmup n] [--eager-reps n] [--phase-reps n] [--precision-runs n] "
               "[--ratio bits] [--insecure] [--out file.json] [--quick] [--log-n L] [--diagnose] "
               "[--evalmod-r R] [--evalmod-degree D] [--arcsine A] [--dense-h H] [--no-timing]\n"
               "configs: baseline, all, or lever names joined by '+'; levers:");
  for (const std::string& n : bootstrap_lever_names())
    std::fprintf(stderr, " %s", n.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

Prng::Seed seed(std::uint8_t tag) {
  Prng::Seed s{};
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<std::uint8_t>(tag + 29 * i);
  return s;
}

u64 hash_ct(const Context& ctx, const Ciphertext& ct) {
  u64 h = 1469598103934665603ull;
  for (const RnsPoly& p : ct.polys()) {
    std::vector<u32> words(p.words());
    ctx.backend().download(p.cref(), words.data());
    for (const u32 w : words) {
      for (int i = 0; i < 4; ++i) {
        h ^= (w >> (8 * i)) & 0xffu;
        h *= 1099511628211ull;
      }
    }
  }
  return h;
}

double median(std::vector<double> v) {
  return v.empty() ? 0.0 : percentile(std::move(v), 50);
}

// Records of one preset and config (graph and eager).
std::vector<nlohmann::json> measure(const Options& o, const std::string& preset,
                                    const std::string& config) {
  const auto t0 = std::chrono::steady_clock::now();
  ContextOptions co;
  co.backend = o.backend == "cuda" ? BackendChoice::kCuda : BackendChoice::kCpu;
  co.allow_insecure = o.insecure;
  co.optimizations = with_bootstrap_levers(Optimizations::all(), config);
  ParameterSet params = load_preset(preset);
  if (o.log_n != 0 && o.log_n != params.log_degree) params = with_log_degree(params, o.log_n);
  if (o.dense_h != 0) {
    if (!o.insecure) throw ParameterError("--dense-h needs --insecure (see the usage)");
    params.dense_hamming_weight = o.dense_h;
  }
  const ContextPtr ctx = Context::create(params, co);
  KeyGenerator kg(ctx, seed(1));
  const SecretKey sk = kg.create_secret_key();
  BootstrapConfig bc;
  bc.message_ratio_bits = o.ratio;
  bc.arcsine_degree = o.arcsine;
  if (o.evalmod_r >= 0 || o.evalmod_degree >= 0) {
    // K as the Bootstrapper derives it (its ModRaise lifts exactly: one limb's worth of I).
    EvalModParams e;
    e.k_bound = EvalModParams::bound_for(params.sparse_hamming_weight, params.log_degree, 1);
    if (o.evalmod_r >= 0) e.double_angles = static_cast<u32>(o.evalmod_r);
    if (o.evalmod_degree >= 0) e.degree = static_cast<u32>(o.evalmod_degree);
    e.arcsine_degree = o.arcsine;
    bc.evalmod = e;
  }
  const Bootstrapper boot(ctx, bc);
  const BootstrappingKeys keys = boot.generate_keys(kg, sk, false);
  Backend& be = ctx->backend();
  be.synchronize();
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Encoder enc(ctx);
  Encryptor fixed_enc(ctx, sk, seed(2));
  Encryptor fresh_enc(ctx, sk);
  Decryptor dec(ctx, sk);
  const u32 in_level = boot.input_level();
  std::vector<Complex> fixed(boot.slots());
  for (std::size_t i = 0; i < fixed.size(); ++i)
    fixed[i] = std::polar(0.8, 0.001 * static_cast<double>(i));
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> radius(0, 1), angle(0, 2 * M_PI);
  const auto fresh = [&] {
    std::vector<Complex> z(boot.slots());
    for (Complex& x : z)
      x = std::polar(radius(rng), angle(rng));
    return z;
  };
  const auto bits = [&](const Ciphertext& out, const std::vector<Complex>& z) {
    const auto got = enc.decode(dec.decrypt(out));
    double e = 0;
    for (std::size_t i = 0; i < z.size(); ++i)
      e = std::max(e, std::abs(got[i] - z[i]));
    return e > 0 ? -std::log2(e) : 1000.0;
  };

  // Graph: capture once, replay per input.
  const Evaluator ev(ctx);
  const Ciphertext fixed_in = fixed_enc.encrypt(enc.encode(fixed, in_level));
  Ciphertext graph_in = ev.clone(fixed_in), graph_out;
  Graph g = ctx->capture([&] { graph_out = boot.bootstrap(graph_in, keys); });
  be.synchronize();
  const Timing tg = o.timing ? time_op(
                                   be, [&] { g.replay(); }, o.warmup, o.reps)
                             : Timing{};
  if (!o.timing) g.replay();
  const u64 hash = hash_ct(*ctx, graph_out);
  std::vector<double> prec;
  // --diagnose: the error by stage (log2 max slot error), averaged over the inputs; its total is
  // the precision (the same bootstrapping, decrypted at every stage).
  std::map<std::string, double> stage;
  for (unsigned r = 0; r < o.precision_runs; ++r) {
    const std::vector<Complex> z = fresh();
    const Ciphertext in = fresh_enc.encrypt(enc.encode(z, in_level));
    if (o.diagnose) {
      const Bootstrapper::ErrorBreakdown e = boot.diagnose(in, keys, z, dec);
      const double n = o.precision_runs;
      stage["approximation"] += e.approximation / n;
      stage["CoeffToSlot"] += e.coeff_to_slot / n;
      stage["EvalMod"] += e.eval_mod / n;
      stage["SlotToCoeff"] += e.slot_to_coeff / n;
      stage["total"] += e.total / n;
      prec.push_back(-e.total);
      continue;
    }
    g.set_input(graph_in, in);
    g.replay();
    be.synchronize();
    prec.push_back(bits(graph_out, z));
  }
  double prec_mean = 0, prec_min = 1e9;
  for (const double b : prec) {
    prec_mean += b / static_cast<double>(prec.size());
    prec_min = std::min(prec_min, b);
  }

  // Eager: the whole bootstrapping, then phase by phase with a synchronize after each.
  const Ciphertext& eager_in = fixed_in;
  Ciphertext eager_out;
  const Timing te =
      o.timing ? time_op(
                     be, [&] { eager_out = boot.bootstrap(eager_in, keys); }, 1, o.eager_reps)
               : Timing{};
  const bool same_words = !o.timing || hash_ct(*ctx, eager_out) == hash;
  std::map<std::string, std::vector<double>> phase;
  using Clock = std::chrono::steady_clock;
  for (unsigned r = 0; o.timing && r < o.phase_reps; ++r) {
    be.synchronize();
    auto t = Clock::now();
    const auto lap = [&](const char* name) {
      be.synchronize();
      const auto now = Clock::now();
      phase[name].push_back(std::chrono::duration<double, std::milli>(now - t).count());
      t = now;
    };
    const bool stc_first = in_level > 0;
    Ciphertext c = stc_first ? boot.slot_to_coeff(eager_in, keys.galois) : Ciphertext();
    if (stc_first) lap("SlotToCoeff");
    const Ciphertext raised = boot.mod_raise(stc_first ? c : eager_in, keys);
    lap("ModRaise");
    const Bootstrapper::RealImag w = boot.coeff_to_slot_split(raised, keys);
    lap("CoeffToSlot");
    const Ciphertext red = boot.eval_mod(w, keys);
    lap("EvalMod");
    if (!stc_first) {
      const Ciphertext out = boot.slot_to_coeff(red, keys.galois);
      lap("SlotToCoeff");
    }
  }
  nlohmann::json phases_ms = nlohmann::json::object();
  for (const auto& [name, v] : phase)
    phases_ms[name] = median(v);
  nlohmann::json levers = nlohmann::json::object();
  for (const std::string& n : bootstrap_lever_names())
    levers[n] = bootstrap_lever(ctx->policy().optimizations(), n);
  const EvalModParams& emp = boot.evalmod_params();
  const nlohmann::json evalmod = {{"k_bound", emp.k_bound},
                                  {"degree", emp.degree},
                                  {"double_angles", emp.double_angles},
                                  {"arcsine_degree", emp.arcsine_degree},
                                  {"depth", emp.depth()}};
  nlohmann::json error_by_stage = nullptr;
  if (o.diagnose) error_by_stage = stage;
  const auto record = [&](const char* mode, const Timing& t) {
    // --no-timing: precision only, no time to report.
    const auto ms = [&](double us) {
      return o.timing ? nlohmann::json(us / 1e3) : nlohmann::json();
    };
    return nlohmann::json{{"op", "boot"},
                          {"preset", preset},
                          {"log_n", ctx->log_n()},
                          {"dense_hamming_weight", ctx->params().dense_hamming_weight},
                          {"evalmod", evalmod},
                          {"error_by_stage", error_by_stage},
                          {"mode", mode},
                          {"config", config},
                          {"levers", levers},
                          {"device", be.name()},
                          {"slots", boot.slots()},
                          {"median_ms", ms(t.wall_us)},
                          {"p10_ms", ms(t.wall_p10_us)},
                          {"p90_ms", ms(t.wall_p90_us)},
                          {"device_clock_ms", ms(t.median_us)},
                          {"clock", t.clock},
                          {"reps", t.reps},
                          {"precision_bits", prec_mean},
                          {"precision_min_bits", prec_min},
                          {"precision_runs", prec.size()},
                          {"phases_ms", phases_ms},
                          {"phases_clock", "eager, a synchronize after each phase"},
                          {"message_ratio_bits", boot.message_ratio_bits()},
                          {"input_level", in_level},
                          {"output_level", boot.output_level()},
                          {"effective_levels", boot.output_level() - in_level},
                          {"setup_s", setup_s},
                          {"kernels", g.kernel_count()},
                          {"output_hash", std::to_string(hash)},
                          {"eager_same_words", same_words},
                          {"anchor_ms", nullptr},
                          {"git_commit", git_commit()}};
  };
  std::printf(
      "  %-13s %-55s graph %7.2f ms  eager %7.2f ms  %.2f bits (worst %.2f)  levels %u->%u"
      "  set-up %.2f s\n",
      preset.c_str(), config.c_str(), tg.wall_us / 1e3, te.wall_us / 1e3, prec_mean, prec_min,
      in_level, boot.output_level(), setup_s);
  if (o.diagnose) {
    std::printf(
        "  %-13s   error by stage (log2 max slot error, mean of %u): approximation %.2f"
        "  CoeffToSlot %.2f  EvalMod %.2f  SlotToCoeff %.2f  total %.2f  (K %u, degree %u, "
        "r %u, arcsine %u, ratio 2^%.2f)\n",
        preset.c_str(), o.precision_runs, stage["approximation"], stage["CoeffToSlot"],
        stage["EvalMod"], stage["SlotToCoeff"], stage["total"], emp.k_bound, emp.degree,
        emp.double_angles, emp.arcsine_degree, boot.message_ratio_bits());
  }
  std::fflush(stdout);
  return {record("graph", tg), record("eager", te)};
}

}  // namespace

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--insecure") {
      o.insecure = true;
      continue;
    }
    if (a == "--diagnose") {
      o.diagnose = true;
      continue;
    }
    if (a == "--no-timing") {
      o.timing = false;
      continue;
    }
    if (a == "--quick") {
      o.reps = 2;
      o.warmup = 1;
      o.eager_reps = 1;
      o.phase_reps = 1;
      o.precision_runs = 2;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    const auto count = [&] { return static_cast<unsigned>(std::stoul(v)); };
    if (a == "--backend") {
      if (v != "cuda" && v != "cpu") return usage();
      o.backend = v;
    } else if (a == "--presets") {
      o.presets = apps::split_list(v);
    } else if (a == "--configs") {
      o.configs = apps::split_list(v);
    } else if (a == "--reps") {
      o.reps = count();
    } else if (a == "--warmup") {
      o.warmup = count();
    } else if (a == "--eager-reps") {
      o.eager_reps = count();
    } else if (a == "--phase-reps") {
      o.phase_reps = count();
    } else if (a == "--precision-runs") {
      o.precision_runs = count();
    } else if (a == "--ratio") {
      o.ratio = count();
    } else if (a == "--log-n") {
      o.log_n = count();
    } else if (a == "--evalmod-r") {
      o.evalmod_r = static_cast<int>(count());
    } else if (a == "--evalmod-degree") {
      o.evalmod_degree = static_cast<int>(count());
    } else if (a == "--arcsine") {
      o.arcsine = count();
    } else if (a == "--dense-h") {
      o.dense_h = count();
    } else if (a == "--out") {
      o.out = v;
    } else {
      return usage();
    }
  }
  for (const std::string& c : o.configs)
    (void)with_bootstrap_levers(Optimizations::all(), c);  // unknown names fail before any work
  std::vector<std::string> records;
  records.push_back(header_record({{"mode", "boot-levers"},
                                   {"backend", o.backend},
                                   {"reps", o.reps},
                                   {"precision_runs", o.precision_runs}})
                        .dump());
  std::vector<nlohmann::json> all;
  std::printf("theo_boot_levers: %s backend, %zu presets x %zu configs\n", o.backend.c_str(),
              o.presets.size(), o.configs.size());
  for (const std::string& p : o.presets) {
    for (const std::string& c : o.configs) {
      for (nlohmann::json& r : measure(o, p, c)) {
        records.push_back(r.dump());
        all.push_back(std::move(r));
      }
      if (!o.out.empty()) write_json_array(o.out, records);
    }
  }
  std::printf("\n%-13s %-55s %-5s %9s %7s %8s %8s %8s %8s %6s\n", "preset", "config", "mode",
              "median_ms", "bits", "ModRaise", "CtS", "EvalMod", "StC", "levels");
  for (const nlohmann::json& r : all) {
    const auto ph = [&](const char* k) {
      return r["phases_ms"].contains(k) ? r["phases_ms"][k].get<double>() : 0.0;
    };
    std::printf("%-13s %-55s %-5s %9.2f %7.2f %8.2f %8.2f %8.2f %8.2f %3u->%u\n",
                r["preset"].get<std::string>().c_str(), r["config"].get<std::string>().c_str(),
                r["mode"].get<std::string>().c_str(),
                r["median_ms"].is_number() ? r["median_ms"].get<double>() : 0.0,
                r["precision_bits"].get<double>(), ph("ModRaise"), ph("CoeffToSlot"), ph("EvalMod"),
                ph("SlotToCoeff"), r["input_level"].get<unsigned>(),
                r["output_level"].get<unsigned>());
  }
  return 0;
}

}  // namespace theo::bench

int main(int argc, char** argv) {
  try {
    return theo::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "theo_boot_levers: %s\n", e.what());
    return 1;
  }
}
