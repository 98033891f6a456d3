// theo_bench --dataflows (dataflows_bench.h).

#include "dataflows_bench.h"

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_info.h"
#include "records.h"
#include "theo/theodosian.h"
#include "timing.h"

namespace theo::bench {

namespace {

using json = nlohmann::json;

void write(const DataflowsOptions& o, const json& header, const json& results) {
  if (o.out.empty()) return;
  const std::filesystem::path parent = std::filesystem::path(o.out).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream f(o.out);
  if (!f) throw ParameterError("theo_bench --dataflows: cannot write " + o.out);
  f << json{{"header", header}, {"results", results}}.dump(1) << "\n";
}

u64 hash_words(const Context& ctx, const RnsPoly& a, const RnsPoly& b) {
  u64 h = 1469598103934665603ull;
  for (const RnsPoly* p : {&a, &b}) {
    std::vector<u32> w(p->words());
    ctx.backend().download(p->cref(), w.data());
    for (const u32 x : w) {
      h ^= x;
      h *= 1099511628211ull;
    }
  }
  return h;
}

// One cell: its Context, keys and operands, and every timing.
void run_cell(const DataflowsOptions& o, const GridCell& cell, const ParameterSet& params,
              json& results) {
  ContextOptions opts;
  opts.backend = o.backend == "cuda" ? BackendChoice::kCuda : BackendChoice::kCpu;
  opts.threads = o.threads;
  opts.allow_insecure = o.insecure;
  opts.key_switching.prepare_all = true;
  opts.key_switching.prepare_levels = {params.max_level()};
  if (!o.tuning_dir.empty()) opts.key_switching.tuning.directory = o.tuning_dir;
  const auto t0 = std::chrono::steady_clock::now();
  const ContextPtr ctx = Context::create(params, opts);
  KeyGenerator kg(ctx);
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);  // the one key HMult needs
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk);
  const Evaluator ev(ctx);
  const u32 top = ctx->max_level();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::complex<double>> za(ctx->max_slots()), zb(ctx->max_slots());
  for (std::size_t i = 0; i < za.size(); ++i) {
    za[i] = {u(rng), u(rng)};
    zb[i] = {u(rng), u(rng)};
  }
  const Ciphertext a = encryptor.encrypt(enc.encode(za, top));
  const Ciphertext b = encryptor.encrypt(enc.encode(zb, top));
  Backend& be = ctx->backend();
  be.synchronize();
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const KeySwitcher& ks = ev.key_switcher();
  const TuningKey tkey = ctx->tuning_key();
  const LevelData& lv = ctx->level(top);
  const KeySwitchShape shape = tkey.levels[top];
  const DataflowChoice model = model_choice(shape, tkey.cache_bytes);
  const LevelDataflow& autoc = ctx->key_switch_dataflow(top);
  const ConstPolyRef d[] = {a.poly(1).cref()};
  const SwitchingKey* keys[] = {&rlk.key()};
  RnsPoly o0 = be.make_poly(lv.q_basis), o1 = be.make_poly(lv.q_basis);
  const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};

  const json common = {{"device", be.name()},
                       {"backend", o.backend},
                       {"log_n", cell.log_n},
                       {"levels", cell.limbs},
                       {"dnum", cell.dnum},
                       {"alpha", ctx->alpha()},
                       {"cell", grid_cell_name(cell)},
                       {"cache_bytes", tkey.cache_bytes},
                       {"model_choice", choice_name(model)},
                       {"auto_choice", choice_name(autoc.choice)},
                       {"auto_source", choice_source_name(autoc.source)},
                       {"tuning_table", tuning_load_status_name(ctx->tuning_report().status)},
                       {"git_commit", git_commit()},
                       {"reps", o.reps}};
  const auto record = [&](const std::string& op, const std::string& dataflow, u32 chunks,
                          const Timing& t, const DataflowChoice& choice) {
    json r = common;
    r["record"] = "op";
    r["op"] = op;
    r["dataflow"] = dataflow;
    r["chunks"] = chunks;
    r["choice"] = choice_name(choice);
    r["median_us"] = t.median_us;
    r["p10_us"] = t.p10_us;
    r["p90_us"] = t.p90_us;
    r["wall_us"] = t.wall_us;
    r["clock"] = t.clock;
    r["footprint_bytes"] = dataflow_footprint(shape, choice);
    return r;
  };

  std::printf("%s: setup %.1f s, L2 plan %.1f MB, model %s, auto %s (%s)\n",
              grid_cell_name(cell).c_str(), setup_s, static_cast<double>(tkey.cache_bytes) / 1e6,
              choice_name(model).c_str(), choice_name(autoc.choice).c_str(),
              choice_source_name(autoc.source));
  // Every candidate and Auto, for both ops, timed in rounds over all of them (reps split across
  // the rounds, the first round with the full warm-up): a drift of the GPU's clocks or of the
  // host during the cell then falls on every candidate alike instead of on the ones timed last.
  struct Entry {
    std::string op, dataflow;
    DataflowChoice choice;
    std::function<void()> run;
    std::vector<Timing> rounds;
  };
  std::vector<Entry> entries;
  const std::vector<DataflowChoice> plans = dataflow_candidates();
  for (const DataflowChoice& c : plans) {
    const DataflowChoice* pp = &c;
    // HMult as Evaluator::multiply does it (tensor, key switch, two additions), the key switch
    // forced to this dataflow.
    const auto hmult = [&, pp] {
      const Ciphertext t = ev.multiply(a, b);
      RnsPoly r0 = be.make_poly(lv.q_basis), r1 = be.make_poly(lv.q_basis);
      const ConstPolyRef t2[] = {t.poly(2).cref()};
      const PolyRef r0s[] = {r0.ref()}, r1s[] = {r1.ref()};
      ks.run({.level = top, .inputs = t2, .keys = keys, .out0 = r0s, .out1 = r1s, .dataflow = *pp});
      be.add(r0.cref(), t.poly(0).cref(), r0.ref());
      be.add(r1.cref(), t.poly(1).cref(), r1.ref());
    };
    const auto keyswitch = [&, pp] {
      ks.run(
          {.level = top, .inputs = d, .keys = keys, .out0 = out0, .out1 = out1, .dataflow = *pp});
    };
    const std::string name(dataflow_name(c.dataflow));
    entries.push_back({"hmult", name, c, hmult, {}});
    entries.push_back({"keyswitch", name, c, keyswitch, {}});
  }
  entries.push_back(
      {"hmult", "auto", autoc.choice, [&] { const Ciphertext r = ev.multiply(a, b, rlk); }, {}});
  entries.push_back({"keyswitch",
                     "auto",
                     autoc.choice,
                     [&] { ks.switch_key(d[0], top, rlk.key(), o0.ref(), o1.ref()); },
                     {}});
  const unsigned rounds = std::max(1u, std::min(3u, o.reps));
  const unsigned reps = (o.reps + rounds - 1) / rounds;
  for (unsigned r = 0; r < rounds; ++r)
    for (Entry& e : entries)
      e.rounds.push_back(time_op(be, e.run, r == 0 ? o.warmup : std::min(o.warmup, 1u), reps));
  const auto median_of = [](std::vector<double> v) { return percentile(std::move(v), 50); };
  for (const Entry& e : entries) {
    Timing t = e.rounds.front();
    std::vector<double> med, p10, p90, wall;
    json per_round = json::array();
    for (const Timing& x : e.rounds) {
      med.push_back(x.median_us);
      p10.push_back(x.p10_us);
      p90.push_back(x.p90_us);
      wall.push_back(x.wall_us);
      per_round.push_back(x.median_us);
    }
    t.median_us = median_of(med);
    t.p10_us = median_of(p10);
    t.p90_us = median_of(p90);
    t.wall_us = median_of(wall);
    json r = record(e.op, e.dataflow, e.choice.chunks, t, e.choice);
    r["rounds"] = rounds;
    r["reps"] = rounds * reps;
    r["round_medians_us"] = std::move(per_round);
    results.push_back(std::move(r));
  }
  if (o.check) {
    u64 dpob_hash = 0;
    std::vector<std::pair<DataflowChoice, u64>> hashes;
    for (const DataflowChoice& c : plans) {
      ks.run({.level = top, .inputs = d, .keys = keys, .out0 = out0, .out1 = out1, .dataflow = c});
      hashes.push_back({c, hash_words(*ctx, o0, o1)});
      if (c == kDefaultChoice) dpob_hash = hashes.back().second;
    }
    bool same = true;
    for (const auto& [c, h] : hashes) {
      if (h != dpob_hash) {
        same = false;
        std::printf("  %s: KeySwitch output differs from DPOB's\n", choice_name(c).c_str());
      }
    }
    json r = common;
    r["record"] = "check";
    r["bit_exact_across_dataflows"] = same;
    results.push_back(r);
  }
}

}  // namespace

int run_dataflows(const DataflowsOptions& o) {
  const std::vector<GridCell> cells = o.cells.empty() ? dataflow_grid() : o.cells;
  const json header = header_record(
      {{"mode", "dataflows"}, {"backend", o.backend}, {"reps", o.reps}, {"warmup", o.warmup}});
  json results = json::array();
  int failures = 0;
  for (const GridCell& cell : cells) {
    const GridCellReport rep = check_grid_cell(cell);
    const bool run = rep.status == GridCellStatus::kOk ||
                     (rep.status == GridCellStatus::kInsecure && o.insecure);
    if (!run) {
      results.push_back({{"record", "skipped"},
                         {"cell", grid_cell_name(cell)},
                         {"log_n", cell.log_n},
                         {"levels", cell.limbs},
                         {"dnum", cell.dnum},
                         {"status", grid_cell_status_name(rep.status)},
                         {"reason", rep.reason}});
      std::printf("%s: skipped (%s: %s)\n", grid_cell_name(cell).c_str(),
                  grid_cell_status_name(rep.status), rep.reason.c_str());
      write(o, header, results);
      continue;
    }
    try {
      run_cell(o, cell, generate_grid_parameters(cell), results);
    } catch (const Error& e) {
      // One cell's failure (e.g. out of device memory) does not lose the others.
      ++failures;
      std::fprintf(stderr, "theo_bench --dataflows: %s failed: %s\n", grid_cell_name(cell).c_str(),
                   e.what());
      results.push_back({{"record", "failed"},
                         {"cell", grid_cell_name(cell)},
                         {"log_n", cell.log_n},
                         {"levels", cell.limbs},
                         {"dnum", cell.dnum},
                         {"error", e.what()}});
    }
    std::fflush(stdout);
    write(o, header, results);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace theo::bench
