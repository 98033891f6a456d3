// theo_params: builds parameter sets of the dataflow study's grid (theo/math/parameter_grid.h)
// and says which cells a Context accepts.
//
//   theo_params grid [--json] [--l2-mib M]
//                                         every cell: status, alpha, log2(PQ) against the bound;
//                                         with --l2-mib, the footprint model's dataflow for the
//                                         top level on a GPU with that L2 (theo/plan/dataflow.h)
//   theo_params cell --log-n 16 --limbs 30 --dnum 4 [--out set.json]
//                                         one cell's set as a parameter file (stdout by default)

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "theo/errors.h"
#include "theo/math/parameter_grid.h"
#include "theo/math/security.h"
#include "theo/plan/dataflow.h"

namespace {

using namespace theo;

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "theo_params: " << error << "\n"
            << "usage: theo_params grid [--json] [--l2-mib M]\n"
               "       theo_params cell --log-n N --limbs L --dnum D [--out file.json]\n";
  std::exit(2);
}

u32 number(const std::string& flag, const std::string& v) {
  if (const auto x = theo::apps::parse_u32(v)) return *x;
  usage("bad value '" + v + "' for " + flag);
}

int grid(bool as_json, u32 l2_mib) {
  nlohmann::json out = nlohmann::json::array();
  int ok = 0;
  for (const GridCell& c : dataflow_grid()) {
    const GridCellReport r = check_grid_cell(c);
    std::string model;
    if (l2_mib != 0 && r.status != GridCellStatus::kUnrealizable) {
      const KeySwitchShape shape{c.limbs, c.dnum, r.alpha, u32{1} << c.log_n};
      model = choice_name(model_choice(shape, std::size_t{l2_mib} << 20));
    }
    if (as_json) {
      out.push_back({{"name", grid_cell_name(c)},
                     {"log_n", c.log_n},
                     {"limbs", c.limbs},
                     {"dnum", c.dnum},
                     {"status", grid_cell_status_name(r.status)},
                     {"alpha", r.alpha},
                     {"log2_pq", r.log2_pq},
                     {"bound", r.bound},
                     {"reason", r.reason},
                     {"model_choice", model}});
    } else {
      std::printf("%-18s %-12s alpha %2u  log2(PQ) %7.1f / %4.0f  %-8s %s\n",
                  grid_cell_name(c).c_str(), grid_cell_status_name(r.status), r.alpha, r.log2_pq,
                  r.bound, model.c_str(), r.reason.c_str());
    }
    ok += r.status == GridCellStatus::kOk;
  }
  if (as_json)
    std::cout << out.dump(2) << "\n";
  else
    std::printf("%d of %zu cells are realizable and 128-bit secure\n", ok, dataflow_grid().size());
  return 0;
}

int cell(int argc, char** argv) {
  GridCell c{0, 0, 0};
  std::string out;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--log-n")
      c.log_n = number(a, v);
    else if (a == "--limbs")
      c.limbs = number(a, v);
    else if (a == "--dnum")
      c.dnum = number(a, v);
    else if (a == "--out")
      out = v;
    else
      usage("unknown option " + a);
  }
  if (c.log_n == 0 || c.limbs == 0 || c.dnum == 0) usage("cell needs --log-n, --limbs and --dnum");
  const ParameterSet p = generate_grid_parameters(c);
  const double bound = max_log2_pq_128(c.log_n);
  if (p.log2_pq() > bound) {
    std::cerr << "theo_params: warning: " << p.name
              << " is not 128-bit secure (log2(PQ) = " << p.log2_pq() << " > " << bound
              << "); a Context loads it only with allow_insecure\n";
  }
  if (out.empty()) {
    std::cout << to_json(p);
    return 0;
  }
  std::ofstream f(out);
  if (!(f << to_json(p))) {
    std::cerr << "theo_params: cannot write " << out << "\n";
    return 1;
  }
  std::cerr << "theo_params: wrote " << p.name << " to " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("missing command");
  const std::string cmd = argv[1];
  try {
    if (cmd == "grid") {
      bool as_json = false;
      u32 l2_mib = 0;
      for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json")
          as_json = true;
        else if (a == "--l2-mib" && i + 1 < argc)
          l2_mib = number(a, argv[++i]);
        else
          usage("unknown option " + a);
      }
      return grid(as_json, l2_mib);
    }
    if (cmd == "cell") return cell(argc, argv);
    usage("unknown command '" + cmd + "'");
  } catch (const theo::Error& e) {
    std::cerr << "theo_params: " << e.what() << "\n";
    return 1;
  }
}
