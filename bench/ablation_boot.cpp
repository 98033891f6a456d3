// theo_bench --ablation: Boot per step (Fig. 8a). One full-slot bootstrapping of a ciphertext at
// the bootstrapper's input level on a Context made with the step's switches (its own keys and
// tables: the switches are fixed per Context), replayed from a graph when the step has CUDA Graphs.
// `wall` is the host clock around the bootstrapping and a synchronize, the anchor's measure; `time`
// the device clock (CUDA events), which for eager issue can exceed its stream hold
// (`clock_timeouts`; read wall).

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>

#include "ablation_bench.h"
#include "theo/circuits/circuits.h"
#include "timing.h"

namespace theo::bench {

nlohmann::json boot_step(const AblationOptions& o, const std::string& preset,
                         const AblationStep& step) {
  const auto t0 = std::chrono::steady_clock::now();
  const ContextPtr ctx = ablation_context(o, preset, step.opt);
  KeyGenerator kg(ctx, ablation_seed(1));
  const SecretKey sk = kg.create_secret_key();
  const Bootstrapper boot(ctx);
  const BootstrappingKeys keys = boot.generate_keys(kg, sk, false);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk, ablation_seed(2));
  std::vector<std::complex<double>> z(boot.slots());
  for (std::size_t i = 0; i < z.size(); ++i)
    z[i] = std::polar(0.8, 0.001 * static_cast<double>(i));
  // At the bootstrapper's input level: 0, or stc_levels with SlotToCoeff first.
  const Ciphertext input = encryptor.encrypt(enc.encode(z, boot.input_level()));
  Backend& be = ctx->backend();
  be.synchronize();
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  Ciphertext out;
  Graph g;
  std::function<void()> run = [&] { out = boot.bootstrap(input, keys); };
  if (step.opt.graphs) {
    g = ctx->capture(run);
    run = [&g] { g.replay(); };
  }
  const Timing t = time_op(unwrap_recording_backend(be), run, 2, o.boot_reps);
  const auto got = enc.decode(Decryptor(ctx, sk).decrypt(out));
  double max_err = 0;
  for (std::size_t i = 0; i < z.size(); ++i)
    max_err = std::max(max_err, std::abs(got[i] - z[i]));
  const u64 hash = hash_words(*ctx, {out.poly(0).cref(), out.poly(1).cref()});
  std::printf("  Boot %-13s %-22s %8.2f ms (wall)  %8.2f ms (events)  %.1f bits  set-up %.1f s\n",
              preset.c_str(), step.name.c_str(), t.wall_us / 1e3, t.median_us / 1e3,
              -std::log2(max_err), setup_s);
  std::fflush(stdout);
  return {{"preset", preset},
          {"slots", boot.slots()},
          {"input_level", boot.input_level()},
          {"output_level", boot.output_level()},
          {"effective_levels", boot.output_level() - boot.input_level()},
          {"wall_ms", t.wall_us / 1e3},
          {"wall_p10_ms", t.wall_p10_us / 1e3},
          {"wall_p90_ms", t.wall_p90_us / 1e3},
          {"events_ms", t.median_us / 1e3},
          {"clock", t.clock},
          {"clock_timeouts", t.timeouts},
          {"reps", t.reps},
          {"precision_bits", -std::log2(max_err)},
          {"graph",
           {{"captured", g.captured()}, {"kernels", g.kernel_count()}, {"nodes", g.node_count()}}},
          {"setup_s", setup_s},
          {"output_hash", std::to_string(hash)}};
}

}  // namespace theo::bench
