// theo_bench --model: one bootstrapping split into its four stages (as Bootstrapper::bootstrap
// runs them on a level-0 ciphertext), timed free-running (wall clock, one synchronization per
// stage) and profiled op by op for its modelled traffic.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <map>
#include <random>

#include "model_bench.h"
#include "timing.h"

namespace theo::bench {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point& t) {
  const auto now = Clock::now();
  const double us = std::chrono::duration<double, std::micro>(now - t).count();
  t = now;
  return us;
}

const char* const kPhases[] = {"ModRaise", "CoeffToSlot", "EvalMod", "SlotToCoeff"};

}  // namespace

nlohmann::json run_bootstrap(ModelEnv& env, const ModelOptions& o) {
  const Context& ctx = *env.ctx;
  Backend& be = ctx.backend();
  auto t = Clock::now();
  const Bootstrapper boot(env.ctx);
  KeyGenerator kg(env.ctx);
  const BootstrappingKeys keys = boot.generate_keys(kg, env.sk, false);
  be.synchronize();
  const double setup_s = us_since(t) / 1e6;

  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> radius(0, 1), angle(0, 2 * M_PI);
  std::vector<std::complex<double>> z(boot.slots());
  for (auto& x : z)
    x = std::polar(radius(rng), angle(rng));
  Encoder enc(env.ctx);
  const Ciphertext ct = Encryptor(env.ctx, env.sk).encrypt(enc.encode(z, 0));

  // The stages of Bootstrapper::bootstrap on a level-0, 2-poly input; `step(i, f)` runs stage i.
  using Step = std::function<void(int, const std::function<void()>&)>;
  Ciphertext raised, w, reduced, result;
  auto stages = [&](const Step& step) {
    step(0, [&] { raised = boot.mod_raise(ct, keys); });
    step(1, [&] { w = boot.coeff_to_slot(raised, keys.galois); });
    step(2, [&] { reduced = boot.eval_mod(w, keys); });
    step(3, [&] { result = boot.slot_to_coeff(reduced, keys.galois); });
  };

  // Free-running: whole bootstraps, then stage by stage with a synchronization after each.
  const unsigned reps = std::max(1u, o.boot_reps);
  {
    const Ciphertext warm = boot.bootstrap(ct, keys);
    be.synchronize();
  }
  std::vector<double> whole;
  for (unsigned r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    const Ciphertext out = boot.bootstrap(ct, keys);
    be.synchronize();
    whole.push_back(us_since(t0));
  }
  std::vector<std::vector<double>> phase_us(4);
  for (unsigned r = 0; r < reps; ++r) {
    be.synchronize();
    auto t0 = Clock::now();
    stages([&](int i, const std::function<void()>& f) {
      f();
      be.synchronize();
      phase_us[static_cast<std::size_t>(i)].push_back(us_since(t0));
    });
  }
  double max_err = 0;
  {
    const auto got = enc.decode(Decryptor(env.ctx, env.sk).decrypt(result));
    for (std::size_t i = 0; i < z.size(); ++i)
      max_err = std::max(max_err, std::abs(got[i] - z[i]));
  }

  // Profiled: the same stages, each in its scope under "Boot".
  profile_passes(env, "Boot", o.passes, [&] {
    stages([](int i, const std::function<void()>& f) {
      const OpScope scope(kPhases[i]);
      f();
    });
  });
  const double passes = o.passes;
  const TrafficTotals total = env.rec->total_in("Boot").per_pass(passes);
  const double whole_us = percentile(whole, 50);

  std::printf(
      "\n== Bootstrapping (%s, %u slots, level 0 -> %u; set-up %.1f s; precision %.1f bits)\n"
      "   time = wall median of %u (stages: one synchronization after each); prof = per-op "
      "synchronized\n",
      ctx.params().name.c_str(), boot.slots(), boot.output_level(), setup_s, -std::log2(max_err),
      reps);
  print_table_header("stage");
  nlohmann::json phases = nlohmann::json::object();
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string scope = std::string("Boot/") + kPhases[i];
    const TrafficTotals pt = env.rec->total_in(scope).per_pass(passes);
    const double us = percentile(phase_us[i], 50);
    print_table_row(kPhases[i], pt, env.gpu, us);
    phases[kPhases[i]] = totals_json(pt, env.gpu, us);
    phases[kPhases[i]]["ops"] = ops_json(*env.rec, scope, passes, env.gpu);
  }
  print_table_row("Bootstrapping (whole, unsplit)", total, env.gpu, whole_us);

  // Key switching inside the bootstrapping, summed over the stages by step name.
  const std::map<std::string, TrafficTotals> ks = key_switch_steps(*env.rec);
  std::printf("\n   key switching inside the bootstrapping (all stages)\n");
  print_table_header("step");
  nlohmann::json ks_json = nlohmann::json::object();
  for (const auto& [name, cell] : ks) {
    print_table_row(name, cell.per_pass(passes), env.gpu, 0);
    ks_json[name] = totals_json(cell.per_pass(passes), env.gpu, 0);
  }

  std::printf("\n   bootstrapping by backend op\n");
  print_table_header("op");
  for (const auto& [op, cell] : env.rec->by_op("Boot"))
    print_table_row(op, cell.per_pass(passes), env.gpu, 0);

  const nlohmann::json key_stream = key_stream_json(*env.rec, passes, env.gpu);
  const nlohmann::json key_set = key_set_json(keys);

  std::printf(
      "\n   modelled traffic %.2f GB (+ %.2f GB tables), %llu calls: lower bound %.2f ms at L2 "
      "%.2f TB/s, %.2f ms at DRAM %.2f TB/s; measured %.2f ms = %.2fx / %.2fx\n",
      total.bytes() / 1e9, total.table_bytes / 1e9, static_cast<unsigned long long>(total.calls),
      env.gpu.l2_us(total.bytes()) / 1e3, env.gpu.l2_read_write_gbps / 1e3,
      env.gpu.dram_us(total.bytes()) / 1e3, env.gpu.dram_copy_gbps / 1e3, whole_us / 1e3,
      whole_us / env.gpu.l2_us(total.bytes()), whole_us / env.gpu.dram_us(total.bytes()));

  nlohmann::json j = totals_json(total, env.gpu, whole_us);
  j["slots"] = boot.slots();
  j["output_level"] = boot.output_level();
  j["describe"] = boot.describe();
  j["setup_s"] = setup_s;
  j["reps"] = reps;
  j["wall_us"] = whole_us;
  j["wall_p10_us"] = percentile(whole, 10);
  j["wall_p90_us"] = percentile(whole, 90);
  j["precision_bits"] = -std::log2(max_err);
  j["phases"] = phases;
  j["key_switching"] = ks_json;
  j["key_stream"] = key_stream;
  j["key_set"] = key_set;
  j["scopes"] = scopes_json(*env.rec, "Boot", passes, env.gpu);
  j["ops"] = ops_json(*env.rec, "Boot", passes, env.gpu);
  return j;
}

}  // namespace theo::bench
