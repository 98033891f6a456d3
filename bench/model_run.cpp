// theo_bench --model: set-up (Context wrapped with a TrafficRecorder, keys), the mechanisms, the
// bootstrapping, and the JSON file.

#include <cstdio>
#include <fstream>
#include <iostream>

#include "host_info.h"
#include "model_bench.h"
#include "records.h"

namespace theo::bench {

namespace {

constexpr int kAnchorRotation = 1234;  // the anchor's HRot (shared/anchors/cheddar-h200.md)

ContextPtr make_context(const ModelOptions& o, std::shared_ptr<TrafficRecorder> rec) {
  ContextOptions co;
  co.backend = o.backend == "cuda" ? BackendChoice::kCuda : BackendChoice::kCpu;
  co.allow_insecure = o.insecure;
  co.threads = o.threads;
  co.wrap_backend = record_traffic(std::move(rec));
  try {
    return Context::create(load_preset(o.preset), co);
  } catch (const SecurityError& e) {
    throw SecurityError(std::string(e.what()) + " (theo_bench --model: add --insecure)");
  }
}

}  // namespace

void profile_passes(ModelEnv& env, const std::string& scope, unsigned passes,
                    const std::function<void()>& f) {
  Backend& be = env.ctx->backend();
  be.synchronize();
  env.rec->clear();
  env.rec->set_profiling(true);
  env.rec->set_enabled(true);
  for (unsigned p = 0; p < passes; ++p) {
    const OpScope s(scope);
    f();
  }
  be.synchronize();
  env.rec->set_enabled(false);
}

GpuDescriptor model_gpu(const std::string& choice, const Backend& backend) {
  if (!choice.empty()) return load_gpu(choice);
  if (const GpuDescriptor* g = find_gpu(backend.name()); g != nullptr) return *g;
  return *find_gpu("h200");
}

int run_model(const ModelOptions& o) {
  if (o.reps == 0 || o.passes == 0) throw ParameterError("--reps and --passes must be > 0");
  ModelEnv env;
  env.rec = std::make_shared<TrafficRecorder>(
      TrafficRecorderOptions{.profile = true, .keep_records = true});
  env.rec->set_enabled(false);  // recorded only inside profile_passes
  env.ctx = make_context(o, env.rec);
  const Context& ctx = *env.ctx;
  env.gpu = model_gpu(o.gpu, unwrap_recording_backend(ctx.backend()));
  {
    KeyGenerator kg(env.ctx);
    env.sk = kg.create_secret_key();
    env.relin = kg.create_relin_key(env.sk);
    env.rotation = kAnchorRotation % static_cast<int>(ctx.max_slots());
    if (env.rotation == 0) env.rotation = 1;
    env.rot_keys = kg.create_galois_keys(env.sk, {env.rotation});
  }
  ctx.backend().synchronize();

  nlohmann::json header =
      header_record({{"mode", "model"},
                     {"load_average", load_average()},
                     {"backend", o.backend},
                     {"device", ctx.backend().name()},
                     {"preset", o.preset},
                     {"n", ctx.n()},
                     {"max_level", ctx.max_level()},
                     {"alpha", ctx.alpha()},
                     {"dnum", ctx.dnum()},
                     {"rotation", env.rotation},
                     {"reps", o.reps},
                     {"warmup", o.warmup},
                     {"boot_reps", o.boot_reps},
                     {"profile_passes", o.passes},
                     {"ceilings", to_json(env.gpu)},
                     {"model",
                      "inputs read once, outputs written once, 4 B per word; tables "
                      "separate (docs/traffic-model.md)"}});
  std::printf("theo_bench --model: %s on %s, N = %u, levels 0..%u, alpha %u, dnum %u\n",
              o.preset.c_str(), ctx.backend().name().c_str(), ctx.n(), ctx.max_level(), ctx.alpha(),
              ctx.dnum());
  std::printf(
      "ceilings (%s, %s): DRAM %.2f TB/s, L2 %.2f TB/s; GB = modelled reads + writes; lb = lower "
      "bound GB / ceiling; x = time / lb\n",
      env.gpu.name.c_str(), env.gpu.source.c_str(), env.gpu.dram_copy_gbps / 1e3,
      env.gpu.l2_read_write_gbps / 1e3);

  nlohmann::json result = {{"header", header}};
  result["mechanisms"] = run_mechanisms(env, o);
  if (!o.skip_bootstrap) result["bootstrap"] = run_bootstrap(env, o);
  std::fflush(stdout);
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    if (!f) {
      std::cerr << "theo_bench: cannot write " << o.out << "\n";
      return 1;
    }
    f << result.dump(2) << "\n";
  }
  return 0;
}

}  // namespace theo::bench
