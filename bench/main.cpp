// theo_bench: times registered benchmark cases and prints one JSON record per (op, limbs), after a
// header record that says what ran where. See docs/benchmarks.md for the traffic models.

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "ablation_bench.h"
#include "bench_case.h"
#include "cli.h"
#include "dataflows_bench.h"
#include "host_info.h"
#include "model_bench.h"
#include "records.h"
#include "theo/backend/factory.h"
#include "theo/math/primes.h"
#include "timing.h"

namespace theo::bench {
namespace {

struct Options {
  std::string backend = "cpu";
  std::vector<std::string> ops;  // empty: every registered case
  u32 n = 1u << 16;
  std::vector<u32> limbs = {12, 24, 48};
  u32 alpha = 12;
  u32 dnum = 0;
  unsigned reps = 20;
  unsigned warmup = 3;
  unsigned threads = 0;
  u64 seed = 1;
  std::string out;
  bool list = false;
  // --model (see model_bench.h): the traffic model of the mechanisms and a bootstrapping.
  bool model = false;
  ModelOptions model_opts;
  bool quick = false;
  bool reps_given = false, warmup_given = false, limbs_given = false;
  // --ablation (see ablation_bench.h): the optimizations added one at a time.
  bool ablation = false;
  bool boot_reps_given = false, preset_given = false;
  // --dataflows (see dataflows_bench.h): the dataflow study over the parameter grid.
  bool dataflows = false;
  bool check = false;
  std::vector<GridCell> cells;
  std::string tuning_dir;
};

std::vector<std::string> split_cells(const std::string& s) {
  return apps::split_list(s, ';');
}

[[noreturn]] void usage(const std::string& error) {
  std::cerr
      << "theo_bench: " << error << "\n"
      << "usage: theo_bench [--backend cpu|cuda] [--ops ntt,intt,...] [--n 65536]\n"
         "                  [--limbs 12,24,48] [--alpha 12] [--dnum D] [--reps 20]\n"
         "                  [--warmup 3] [--threads T] [--seed S] [--out file.json] [--list]\n"
         "       theo_bench --model [--preset bootparam_40] [--insecure] [--backend cpu|cuda]\n"
         "                  [--limbs 14,23,35,47] [--reps 10] [--warmup 2] [--boot-reps 5]\n"
         "                  [--passes 3] [--gpu h100|h200|file] [--no-bootstrap]\n"
         "                  [--quick] [--threads T] [--out file.json]\n"
         "       theo_bench --ablation [--backend cuda|cpu] [--preset P] [--reps 30] [--warmup 5]\n"
         "                  [--boot-reps 10] [--gpu h100|h200|file] [--no-bootstrap] [--quick]\n"
         "                  [--threads T] [--out file.json]\n"
         "       theo_bench --dataflows [--backend cuda|cpu] [--cells N,L,D;N,L,D...] "
         "[--insecure]\n"
         "                  [--reps 10] [--warmup 2] [--tuning-dir D] [--check] [--quick]\n"
         "                  [--threads T] [--out file.json]\n";
  std::exit(2);
}

// The samples of a mode (its reps and warmup): --quick's counts, then explicit --reps / --warmup,
// which win.
template <typename ModeOptions>
void set_samples(const Options& o, ModeOptions& m, unsigned quick_reps, unsigned quick_warmup) {
  if (o.quick) {
    m.reps = quick_reps;
    m.warmup = quick_warmup;
  }
  if (o.reps_given) m.reps = o.reps;
  if (o.warmup_given) m.warmup = o.warmup;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list" || a == "--model" || a == "--quick" || a == "--insecure" ||
        a == "--no-bootstrap" || a == "--ablation" || a == "--dataflows" || a == "--check") {
      o.ablation = o.ablation || a == "--ablation";
      o.dataflows = o.dataflows || a == "--dataflows";
      o.check = o.check || a == "--check";
      o.list = o.list || a == "--list";
      o.model = o.model || a == "--model";
      o.quick = o.quick || a == "--quick";
      if (a == "--insecure") o.model_opts.insecure = true;
      if (a == "--no-bootstrap") o.model_opts.skip_bootstrap = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + a);
    const std::string v = argv[++i];
    try {
      if (a == "--backend")
        o.backend = v;
      else if (a == "--ops")
        o.ops = apps::split_list(v);
      else if (a == "--n")
        o.n = static_cast<u32>(std::stoul(v));
      else if (a == "--limbs") {
        o.limbs_given = true;
        o.limbs.clear();
        for (const auto& l : apps::split_list(v))
          o.limbs.push_back(static_cast<u32>(std::stoul(l)));
      } else if (a == "--alpha")
        o.alpha = static_cast<u32>(std::stoul(v));
      else if (a == "--dnum")
        o.dnum = static_cast<u32>(std::stoul(v));
      else if (a == "--reps") {
        o.reps = static_cast<unsigned>(std::stoul(v));
        o.reps_given = true;
      } else if (a == "--warmup") {
        o.warmup = static_cast<unsigned>(std::stoul(v));
        o.warmup_given = true;
      } else if (a == "--preset") {
        o.model_opts.preset = v;
        o.preset_given = true;
      } else if (a == "--boot-reps") {
        o.model_opts.boot_reps = static_cast<unsigned>(std::stoul(v));
        o.boot_reps_given = true;
      } else if (a == "--passes")
        o.model_opts.passes = static_cast<unsigned>(std::stoul(v));
      else if (a == "--gpu")
        o.model_opts.gpu = v;
      else if (a == "--threads")
        o.threads = static_cast<unsigned>(std::stoul(v));
      else if (a == "--seed")
        o.seed = std::stoull(v);
      else if (a == "--out")
        o.out = v;
      else if (a == "--tuning-dir")
        o.tuning_dir = v;
      else if (a == "--cells") {
        for (const auto& c : split_cells(v)) {
          const auto parts = apps::split_list(c);
          if (parts.size() != 3) usage("--cells wants N,L,D triples separated by ';'");
          o.cells.push_back({static_cast<u32>(std::stoul(parts[0])),
                             static_cast<u32>(std::stoul(parts[1])),
                             static_cast<u32>(std::stoul(parts[2]))});
        }
      } else
        usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + a);
    }
  }
  if (o.backend != "cpu" && o.backend != "cuda") usage("--backend must be cpu or cuda");
  if (o.n < 1024 || o.n > (1u << 17) || (o.n & (o.n - 1)) != 0)
    usage("--n must be a power of two in [2^10, 2^17]");
  if (o.limbs.empty() || o.reps == 0 || o.alpha == 0) usage("--limbs, --reps, --alpha must be > 0");
  if (o.model) {
    // --quick: one run of everything (CI smoke test); explicit --reps / --warmup still win.
    ModelOptions& m = o.model_opts;
    m.backend = o.backend;
    m.threads = o.threads;
    m.out = o.out;
    if (o.limbs_given) m.limbs = o.limbs;
    set_samples(o, m, 1, 0);
    if (o.quick) {
      m.boot_reps = 1;
      m.passes = 1;
    }
    if (m.boot_reps == 0 || m.passes == 0) usage("--boot-reps and --passes must be > 0");
  }
  return o;
}

// --dataflows' options from the shared flags; --quick: a smoke run (2 samples, no warm-up).
DataflowsOptions dataflows_options(const Options& o) {
  DataflowsOptions d;
  d.backend = o.backend;
  d.cells = o.cells;
  d.insecure = o.model_opts.insecure;
  d.threads = o.threads;
  d.tuning_dir = o.tuning_dir;
  d.check = o.check;
  d.out = o.out;
  set_samples(o, d, 2, 0);
  return d;
}

// --ablation's options from the shared flags; --quick: a smoke run (few samples, B <= 4).
AblationOptions ablation_options(const Options& o) {
  AblationOptions a;
  a.backend = o.backend;
  a.threads = o.threads;
  a.out = o.out;
  a.gpu = o.model_opts.gpu;
  a.skip_boot = o.model_opts.skip_bootstrap;
  set_samples(o, a, 3, 1);
  if (o.quick) {
    a.boot_reps = 2;
    a.max_batch = 4;
  }
  if (o.boot_reps_given) a.boot_reps = o.model_opts.boot_reps;
  if (o.preset_given) {  // one preset for everything (e.g. test_boot_n12 for a CPU smoke run)
    a.keyswitch_preset = o.model_opts.preset;
    a.boot_presets = {o.model_opts.preset};
  }
  if (a.reps == 0 || a.boot_reps == 0) usage("--reps and --boot-reps must be > 0");
  return a;
}

u32 log2_exact(u32 n) {
  u32 l = 0;
  while ((1u << l) < n)
    ++l;
  return l;
}

int run(const Options& o) {
  const auto& cases = registered_cases();
  if (o.list) {
    for (const auto& c : cases)
      std::cout << c.name << "\tbytes = " << c.bytes_formula << "\n";
    return 0;
  }
  std::vector<const BenchCase*> selected;
  if (o.ops.empty()) {
    for (const auto& c : cases)
      selected.push_back(&c);
  } else {
    for (const auto& name : o.ops) {
      const BenchCase* found = nullptr;
      for (const auto& c : cases)
        if (c.name == name) found = &c;
      if (!found) usage("unknown op '" + name + "' (see --list)");
      selected.push_back(found);
    }
  }

  // One ring for the whole sweep: the largest L plus alpha auxiliary primes.
  u32 max_l = 0;
  for (u32 l : o.limbs)
    max_l = std::max(max_l, l);
  RingParams ring;
  ring.log_n = log2_exact(o.n);
  ring.primes = find_ntt_primes(ring.log_n, 30, max_l + o.alpha);
  // THEO_PDL / THEO_NTT_* apply here as they do to a Context's backend (before / after runs).
  std::unique_ptr<Backend> backend =
      o.backend == "cuda"
          ? make_cuda_backend(ring, KernelTuningOverrides::from(Environment::read()))
          : make_cpu_backend(ring, o.threads);

  nlohmann::json header = header_record({{"load_average", load_average()},
                                         {"backend", o.backend},
                                         {"device", backend->name()},
                                         {"n", o.n},
                                         {"alpha", o.alpha},
                                         {"reps", o.reps},
                                         {"warmup", o.warmup},
                                         {"seed", o.seed}});
  std::cout << header.dump() << std::endl;
  nlohmann::json results = nlohmann::json::array();

  std::mt19937_64 rng(o.seed);
  for (const BenchCase* c : selected) {
    for (u32 l : o.limbs) {
      CaseParams p{ring.log_n, l, o.alpha, o.dnum};
      CaseEnv env{*backend, p, Basis::range(0, l), Basis::range(max_l, o.alpha), rng};
      PreparedCase prepared = c->prepare(env);
      Backend& timed = prepared.backend ? *prepared.backend : *backend;
      const Timing t = time_op(timed, prepared.run, o.warmup, o.reps);
      nlohmann::json rec = {{"record", "op"},
                            {"op", c->name},
                            {"n", o.n},
                            {"limbs", l},
                            {"backend", o.backend},
                            {"device", backend->name()},
                            {"median_us", t.median_us},
                            {"p10_us", t.p10_us},
                            {"p90_us", t.p90_us},
                            {"wall_us", t.wall_us},
                            {"wall_p10_us", t.wall_p10_us},
                            {"wall_p90_us", t.wall_p90_us},
                            {"clock", t.clock},
                            {"reps", t.reps},
                            {"bytes_moved_model", prepared.bytes_moved},
                            {"achieved_GBps", prepared.bytes_moved / (t.median_us * 1e3)}};
      if (t.timeouts > 0) rec["clock_timeouts"] = t.timeouts;
      for (const auto& [k, v] : prepared.extra.items())
        rec[k] = v;
      std::cout << rec.dump() << std::endl;
      results.push_back(std::move(rec));
    }
  }
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    if (!f) {
      std::cerr << "theo_bench: cannot write " << o.out << "\n";
      return 1;
    }
    f << nlohmann::json{{"header", header}, {"results", results}}.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace theo::bench

int main(int argc, char** argv) {
  try {
    const theo::bench::Options o = theo::bench::parse(argc, argv);
    if (o.model) return theo::bench::run_model(o.model_opts);
    if (o.ablation) return theo::bench::run_ablation(theo::bench::ablation_options(o));
    if (o.dataflows) return theo::bench::run_dataflows(theo::bench::dataflows_options(o));
    return theo::bench::run(o);
  } catch (const std::exception& e) {
    std::cerr << "theo_bench: " << e.what() << "\n";
    return 1;
  }
}
