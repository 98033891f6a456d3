// theo_bench --model: the basic mechanisms at the anchor levels (the levels with at most 14, 23,
// 35, 47 limbs: bootparam_40's levels 9, 16, 22, 28), each timed free-running (CUDA events on
// the GPU) and then profiled op by op for its modelled traffic, calls and stage split.

#include <algorithm>
#include <complex>
#include <cstdio>

#include "model_bench.h"
#include "scheme_env.h"
#include "timing.h"

namespace theo::bench {

namespace {

std::vector<std::complex<double>> test_slots(const Context& ctx, double phase) {
  std::vector<std::complex<double>> v(ctx.max_slots());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::polar(0.8, phase * static_cast<double>(i));
  return v;
}

}  // namespace

nlohmann::json run_mechanisms(ModelEnv& env, const ModelOptions& o) {
  const Context& ctx = *env.ctx;
  Evaluator ev(env.ctx);
  Encoder enc(env.ctx);
  Encryptor encr(env.ctx, env.sk);
  Backend& be = ctx.backend();
  Backend& timed = unwrap_recording_backend(be);  // the event timer needs the concrete backend

  std::vector<u32> levels;
  for (const u32 limbs : o.limbs.empty() ? std::vector<u32>{14, 23, 35, 47} : o.limbs) {
    const u32 l = level_for(ctx, limbs);
    if (std::find(levels.begin(), levels.end(), l) == levels.end()) levels.push_back(l);
  }

  nlohmann::json out = nlohmann::json::array();
  std::printf("\n== Basic mechanisms (%s; time = %s median of %u; prof = per-op synchronized)\n",
              ctx.params().name.c_str(),
              timed.kind() == BackendKind::kCuda ? "CUDA events" : "wall", o.reps);
  print_table_header("mechanism @ level (limbs)");
  for (const u32 level : levels) {
    const u32 limbs = ctx.level(level).limbs;
    const Ciphertext a = encr.encrypt(enc.encode(test_slots(ctx, 0.001), level));
    const Ciphertext b = encr.encrypt(enc.encode(test_slots(ctx, -0.002), level));
    const Ciphertext ab = level > 0 ? ev.multiply(a, b, env.relin) : Ciphertext{};
    RnsPoly o0 = be.make_poly(ctx.level(level).q_basis),
            o1 = be.make_poly(ctx.level(level).q_basis);

    struct Mechanism {
      std::string name;
      bool needs_lower;
      std::function<void()> run;
    };
    const std::vector<Mechanism> mechanisms = {
        {"HMult+relin+rescale", true,
         [&] { const Ciphertext r = ev.multiply_relin_rescale(a, b, env.relin); }},
        {"HRot", false, [&] { const Ciphertext r = ev.rotate(a, env.rotation, env.rot_keys); }},
        {"KeySwitch", false,
         [&] {
           ev.key_switcher().switch_key(a.poly(1).cref(), level, env.relin.key(), o0.ref(),
                                        o1.ref());
         }},
        {"Rescale", true, [&] { const Ciphertext r = ev.rescale(ab); }},
    };
    for (const Mechanism& m : mechanisms) {
      if (m.needs_lower && level == 0) continue;
      const Timing t = time_op(timed, m.run, o.warmup, o.reps);
      profile_passes(env, m.name, o.passes, m.run);
      const double passes = o.passes;
      const TrafficTotals total = env.rec->total().per_pass(passes);
      const std::string label =
          m.name + " @ " + std::to_string(level) + " (" + std::to_string(limbs) + ")";
      print_table_row(label, total, env.gpu, t.median_us);
      print_stages(*env.rec, m.name, passes, env.gpu);
      nlohmann::json rec = totals_json(total, env.gpu, t.median_us);
      rec["mechanism"] = m.name;
      rec["level"] = level;
      rec["limbs"] = limbs;
      rec["time_us"] = t.median_us;
      rec["time_p10_us"] = t.p10_us;
      rec["time_p90_us"] = t.p90_us;
      rec["wall_us"] = t.wall_us;
      rec["clock"] = t.clock;
      rec["reps"] = t.reps;
      if (t.timeouts > 0) rec["clock_timeouts"] = t.timeouts;
      rec["scopes"] = scopes_json(*env.rec, m.name, passes, env.gpu);
      rec["ops"] = ops_json(*env.rec, m.name, passes, env.gpu);
      out.push_back(std::move(rec));
    }
  }
  return out;
}

}  // namespace theo::bench
