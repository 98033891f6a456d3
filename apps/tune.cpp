// theo_tune: measures the key-switch tuning table of this device for a parameter set (every
// dataflow candidate's lone key switch at each level, theo/tuning/key_switch_tuning.h) and writes
// it where Dataflow::kAuto looks for it (theo/plan/tuning_table.h, docs/dataflows.md).
//
//   theo_tune [--preset NAME | --params FILE | --cells N,L,D;... | --grid] [--levels all|top|a,b]
//             [--backend cuda|cpu] [--dir DIR] [--reps R] [--warmup W] [--batch B]
//             [--confirm F] [--threads T] [--insecure] [--json FILE]
//
// --grid: every realizable, 128-bit secure cell of the dataflow study's grid, top level only
// (theo/math/parameter_grid.h). Levels already in a valid table are kept; the tuned ones are
// replaced. --json writes one record per (set, level): the candidates' times and the choices.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_number.h"
#include "theo/theodosian.h"

namespace {

using namespace theo;
using json = nlohmann::json;

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "theo_tune: " << error << "\n"
            << "usage: theo_tune [--preset NAME | --params FILE | --cells N,L,D;... | --grid]\n"
               "                 [--levels all|top|a,b,...] [--backend cuda|cpu] [--dir DIR]\n"
               "                 [--reps 7] [--warmup 2] [--batch 4] [--confirm 2] [--threads T]\n"
               "                 [--insecure] [--json FILE]\n";
  std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

u32 number(const std::string& what, const std::string& v) {
  if (const auto x = theo::apps::parse_u32(v)) return *x;
  usage("bad value '" + v + "' for " + what);
}

struct Options {
  std::vector<ParameterSet> sets;
  bool grid_levels_top = false;  // --grid / --cells: the top level unless --levels says otherwise
  std::string levels;            // "" (all, or top for grid cells), "all", "top", "a,b,..."
  std::string backend = "cuda";
  std::string dir;
  std::string json_out;
  TuneOptions tune;
  unsigned threads = 0;
  bool insecure = false;
};

Options parse(int argc, char** argv) {
  Options o;
  const auto add_cell = [&](const GridCell& c) {
    const GridCellReport r = check_grid_cell(c);
    if (r.status == GridCellStatus::kUnrealizable)
      usage(grid_cell_name(c) + " is unrealizable: " + r.reason);
    o.sets.push_back(generate_grid_parameters(c));
    o.grid_levels_top = true;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--insecure") {
      o.insecure = true;
      continue;
    }
    if (a == "--grid") {
      for (const GridCell& c : dataflow_grid())
        if (check_grid_cell(c).status == GridCellStatus::kOk) add_cell(c);
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--preset") {
      o.sets.push_back(load_preset(v));
    } else if (a == "--params") {
      o.sets.push_back(load_parameter_file(v));
    } else if (a == "--cells") {
      for (const std::string& c : split(v, ';')) {
        const auto p = split(c, ',');
        if (p.size() != 3) usage("--cells wants N,L,D triples separated by ';'");
        add_cell({number("--cells", p[0]), number("--cells", p[1]), number("--cells", p[2])});
      }
    } else if (a == "--levels") {
      o.levels = v;
    } else if (a == "--backend") {
      if (v != "cuda" && v != "cpu") usage("--backend must be cuda or cpu");
      o.backend = v;
    } else if (a == "--dir") {
      o.dir = v;
    } else if (a == "--reps") {
      o.tune.reps = number(a, v);
    } else if (a == "--warmup") {
      o.tune.warmup = number(a, v);
    } else if (a == "--batch") {
      o.tune.batch = number(a, v);
    } else if (a == "--confirm") {
      o.tune.confirm_factor = number(a, v);
    } else if (a == "--threads") {
      o.threads = number(a, v);
    } else if (a == "--json") {
      o.json_out = v;
    } else {
      usage("unknown option " + a);
    }
  }
  if (o.sets.empty()) usage("name a parameter set (--preset, --params, --cells or --grid)");
  if (o.tune.reps == 0) usage("--reps must be at least 1");
  if (o.tune.batch == 0) usage("--batch must be at least 1");
  return o;
}

std::vector<u32> levels_of(const Options& o, const ParameterSet& p) {
  const std::string spec = o.levels.empty() ? (o.grid_levels_top ? "top" : "all") : o.levels;
  if (spec == "all") return {};
  if (spec == "top") return {p.max_level()};
  std::vector<u32> out;
  for (const std::string& l : split(spec, ','))
    out.push_back(number("--levels", l));
  return out;
}

// Progress on stderr: a bar redrawn in place on a terminal; in a log (not a terminal), one line
// per quarter of the candidates, so the file stays readable.
class Progress {
 public:
  explicit Progress(std::string what)
      : what_(std::move(what)),
        tty_(::isatty(STDERR_FILENO) != 0),
        t0_(std::chrono::steady_clock::now()) {}

  void operator()(std::size_t done, std::size_t total) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (tty_) {
      const int width = 30;
      const int filled = total ? static_cast<int>(width * done / total) : width;
      std::fprintf(stderr, "\r%-30s [%s%s] %zu/%zu %.1f s", what_.c_str(),
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done,
                   total, secs);
      if (done == total) std::fprintf(stderr, "\n");
    } else {
      const std::size_t quarter = total ? 4 * done / total : 4;
      if (quarter == last_quarter_) return;
      last_quarter_ = quarter;
      std::fprintf(stderr, "%s: %zu/%zu candidates timed, %.1f s\n", what_.c_str(), done, total,
                   secs);
    }
    std::fflush(stderr);
  }

 private:
  std::string what_;
  bool tty_;
  std::chrono::steady_clock::time_point t0_;
  std::size_t last_quarter_ = 0;
};

int tune_set(const Options& o, const ParameterSet& p, const std::string& position, json& records) {
  const std::vector<u32> levels = levels_of(o, p);
  ContextOptions opts;
  opts.backend = o.backend == "cuda" ? BackendChoice::kCuda : BackendChoice::kCpu;
  opts.threads = o.threads;
  opts.allow_insecure = o.insecure;
  opts.key_switching.prepare_all = true;
  opts.key_switching.prepare_levels = levels;
  if (!o.dir.empty()) opts.key_switching.tuning.directory = o.dir;
  const auto t0 = std::chrono::steady_clock::now();
  const ContextPtr ctx = Context::create(p, opts);
  const TuningReport& report = ctx->tuning_report();
  if (report.file.empty()) {
    std::cerr << "theo_tune: no tuning directory (set --dir, XDG_CACHE_HOME or HOME)\n";
    return 1;
  }
  const TuningKey key = ctx->tuning_key();
  // Levels of a valid table stay; the tuned ones are replaced.
  TuningTable table(key);
  if (report.status == TuningLoadStatus::kLoaded) {
    TuningLoad existing = load_tuning_table(report.file, key);
    if (existing.table) table = std::move(*existing.table);
  }
  TuneOptions t = o.tune;
  t.levels = levels;
  const std::string label = p.name.empty() ? std::string("parameters") : p.name;
  Progress progress(label + position);
  t.progress = [&](std::size_t done, std::size_t total) { progress(done, total); };
  const TuningTable measured = tune_key_switching(ctx, t);
  for (const TunedLevel& l : measured.levels())
    table.set_level(l);
  const std::string err = save_tuning_table(table, report.file);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string device =
      key.device.name + (key.device.driver.empty() ? "" : " (" + key.device.driver + ")");
  std::printf("%s on %s: %zu level%s tuned in %.1f s -> %s%s\n", label.c_str(), device.c_str(),
              measured.levels().size(), measured.levels().size() == 1 ? "" : "s", secs,
              report.file.c_str(), err.empty() ? "" : (" NOT WRITTEN: " + err).c_str());
  std::printf("  level limbs digits   DPOB us   best             us  speedup  choice    model\n");
  for (const TunedLevel& l : measured.levels()) {
    const TuningMeasurement* best = &l.measured.front();
    for (const TuningMeasurement& m : l.measured)
      if (m.median_us < best->median_us) best = &m;
    const TuningMeasurement* dpob = l.find(kDefaultChoice);
    const KeySwitchShape s = key.levels[l.level];
    const DataflowChoice model = model_choice(s, key.cache_bytes);
    std::printf("  %5u %5u %6u %9.1f   %-9s %9.1f  %7.3f  %-9s %s\n", l.level, s.limbs, s.digits,
                dpob ? dpob->median_us : 0.0, choice_name(best->choice).c_str(), best->median_us,
                dpob ? dpob->median_us / best->median_us : 0.0, choice_name(l.choice()).c_str(),
                choice_name(model).c_str());
    json m = json::array();
    for (const TuningMeasurement& x : l.measured)
      m.push_back({{"dataflow", std::string(dataflow_name(x.choice.dataflow))},
                   {"chunks", x.choice.chunks},
                   {"median_us", x.median_us}});
    records.push_back({{"parameters", label},
                       {"device", key.device.name},
                       {"level", l.level},
                       {"limbs", s.limbs},
                       {"digits", s.digits},
                       {"alpha", s.alpha},
                       {"log_n", key.log_n},
                       {"cache_bytes", key.cache_bytes},
                       {"choice", choice_name(l.choice())},
                       {"best", choice_name(best->choice)},
                       {"model_choice", choice_name(model)},
                       {"measured", std::move(m)},
                       {"file", report.file.string()}});
  }
  return err.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    json records = json::array();
    int rc = 0;
    for (std::size_t i = 0; i < o.sets.size(); ++i) {
      const std::string position = o.sets.size() > 1 ? " (" + std::to_string(i + 1) + "/" +
                                                           std::to_string(o.sets.size()) + ")"
                                                     : "";
      rc |= tune_set(o, o.sets[i], position, records);
    }
    if (!o.json_out.empty()) {
      std::ofstream f(o.json_out);
      if (!(f << records.dump(1) << "\n")) {
        std::cerr << "theo_tune: cannot write " << o.json_out << "\n";
        return 1;
      }
    }
    return rc;
  } catch (const theo::Error& e) {
    std::cerr << "theo_tune: " << e.what() << "\n";
    return 1;
  }
}
