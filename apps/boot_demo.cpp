// theo_boot_demo: bootstrap fresh random slots with a bundled parameter set and print the level
// plan, the key-generation progress, the time per bootstrap and the precision.
//
//   theo_boot_demo [preset] [--slots n] [--runs r] [--min-keys] [--compact-keys] [--lean-cpu]
//                  [--insecure]
//                  [--backend cpu|cuda] [--cts l] [--stc l] [--evalmod l]
//                  [--evalmod-r r --evalmod-degree d] [--ratio b] [--phases] [--diagnose]
//                  [--graph] [--profile] [--dataflow D[/chunks]] [--tuning-dir DIR]
//                  [--no-tuning-table]
//
// --ratio sets BootstrapConfig::message_ratio_bits (log2 q0 / Delta' at ModRaise);
// --evalmod-r / --evalmod-degree fix EvalMod's double angles and cosine degree (K stays derived);
// --phases also times each stage (ModRaise, CoeffToSlot, EvalMod, SlotToCoeff) with a
// synchronization after each; --diagnose prints the error each stage adds (full slots; it decrypts
// every stage with the secret key, so it is a diagnostic, not a server-side operation); --graph
// captures the bootstrapping once as a CUDA Graph (Context::capture) and replays it per input;
// --profile wraps the last run's bootstrap in a profiler range (Backend::profiler_range), e.g. for
// `ncu --profile-from-start off --metrics gpu__time_duration.sum theo_boot_demo ... --profile`.
//
// --dataflow fixes the key-switching dataflow of every level (DSOB, DPOB, DSOC/c, DPOC/c; default
// auto: the tuning table of this device and preset, else the footprint model); --tuning-dir
// names the table directory (default $XDG_CACHE_HOME/theodosian/tuning); --no-tuning-table makes
// auto use the footprint model alone. The level plan lists each level's choice.
//
// --insecure opts in to parameter sets below 128-bit security (test_*, bootparam_30/35).
//
// --compact-keys keeps the keys' a halves as their seeds and expands them at each use (half the
// key memory, slower key switching); --lean-cpu turns on --min-keys and --compact-keys when the
// backend is the CPU (scripts/demo passes it: n16_s40_boot then peaks at ~4.5 GB resident instead
// of ~13 GB) and changes nothing on a GPU. The last line is the process's peak resident memory.
//
// Default preset: n16_s40_boot (128-bit secure, N = 2^16, 2^15 slots: a few minutes on 2 CPU cores,
// under a second on a GPU). test_boot_n12 --insecure (N = 2^12, 64 slots) takes seconds on a CPU;
// the anchor sets bootparam_30/35/40 are meant for the CUDA backend.

#include <sys/resource.h>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "theo/circuits/bootstrapper.h"
#include "theo/theodosian.h"

namespace {

using Cplx = std::complex<double>;

int usage() {
  std::fprintf(stderr,
               "usage: theo_boot_demo [preset] [--slots n] [--runs r] [--min-keys] "
               "[--compact-keys] [--lean-cpu] [--insecure] "
               "[--backend cpu|cuda] [--cts l] [--stc l] [--evalmod l] [--evalmod-r r "
               "--evalmod-degree d] [--ratio b] [--phases] [--diagnose] [--graph] [--profile] "
               "[--dataflow D[/chunks]] [--tuning-dir DIR] [--no-tuning-table]\n");
  return 2;
}

double gib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

std::size_t key_bytes(const theo::SwitchingKey& k) {
  return k.stored_words() * sizeof(theo::u32);
}

// The process's peak resident memory so far (getrusage: kilobytes on Linux).
double peak_rss_gib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
}

// The keys' words, and what the backend's memory holds (GPU: its pool and the whole device).
void print_memory(const char* when, const theo::Backend& be, const theo::BootstrappingKeys& keys) {
  std::size_t bytes =
      key_bytes(keys.relin.key()) + key_bytes(keys.to_sparse) + key_bytes(keys.to_dense);
  const std::vector<theo::u32> gs = keys.galois.galois_elements();
  for (const theo::u32 g : gs)
    bytes += key_bytes(*keys.galois.find(g));
  std::printf("memory %s: keys %.2f GiB (%zu switching keys%s), process peak %.2f GiB", when,
              gib(bytes), gs.size() + 3, keys.relin.key().compact() ? ", compact" : "",
              peak_rss_gib());
  const theo::MemoryReport m = be.memory_report();
  if (m.device_total > 0) {
    std::printf(", backend live %.2f GiB (peak %.2f GiB), device in use %.2f of %.2f GiB",
                gib(m.live_bytes), gib(m.peak_bytes), gib(m.device_used), gib(m.device_total));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines in order with the progress bar on stderr
  std::string preset = "n16_s40_boot";
  theo::BootstrapConfig cfg;
  int runs = 3;
  int evalmod_r = -1, evalmod_degree = -1;
  bool phases = false;
  bool diagnose = false;
  bool graph = false;
  bool profile = false;
  bool lean_cpu = false;
  theo::ContextOptions opts;  // insecure sets (test_*, bootparam_30/35) need --insecure
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--slots" || a == "--runs" || a == "--cts" || a == "--stc" || a == "--evalmod" ||
        a == "--backend" || a == "--evalmod-r" || a == "--evalmod-degree" || a == "--ratio") {
      const char* v = next();
      if (!v) return usage();
      if (a == "--backend") {
        opts.backend =
            std::strcmp(v, "cuda") == 0 ? theo::BackendChoice::kCuda : theo::BackendChoice::kCpu;
        continue;
      }
      const auto x = static_cast<theo::u32>(std::strtoul(v, nullptr, 10));
      if (a == "--slots") cfg.slots = x;
      if (a == "--runs") runs = static_cast<int>(x);
      if (a == "--cts") cfg.cts_levels = x;
      if (a == "--stc") cfg.stc_levels = x;
      if (a == "--evalmod") cfg.evalmod_levels = x;
      if (a == "--ratio") cfg.message_ratio_bits = x;
      if (a == "--evalmod-r") evalmod_r = static_cast<int>(x);
      if (a == "--evalmod-degree") evalmod_degree = static_cast<int>(x);
    } else if (a == "--min-keys") {
      cfg.min_keys = true;
    } else if (a == "--compact-keys") {
      cfg.compact_keys = true;
    } else if (a == "--lean-cpu") {
      lean_cpu = true;
    } else if (a == "--phases") {
      phases = true;
    } else if (a == "--diagnose") {
      diagnose = true;
    } else if (a == "--graph") {
      graph = true;
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--insecure") {
      opts.allow_insecure = true;
    } else if (a == "--no-tuning-table") {
      opts.key_switching.tuning.use_table = false;
    } else if (a == "--tuning-dir" || a == "--dataflow") {
      const char* v = next();
      if (!v) return usage();
      if (a == "--tuning-dir") {
        opts.key_switching.tuning.directory = v;
        continue;
      }
      const std::string spec = v;
      const auto slash = spec.find('/');
      const auto d = theo::parse_dataflow(spec.substr(0, slash));
      if (!d) return usage();
      opts.key_switching.dataflow = *d;
      if (slash != std::string::npos)
        opts.key_switching.chunks =
            static_cast<theo::u32>(std::strtoul(v + slash + 1, nullptr, 10));
    } else if (!a.empty() && a[0] != '-') {
      preset = a;
    } else {
      return usage();
    }
  }
  if (preset == "test_boot_n12" && cfg.slots == 0) cfg.slots = 64;
  try {
    const auto setup_start = std::chrono::steady_clock::now();
    const auto ctx = theo::Context::create(theo::load_preset(preset), opts);
    std::printf("preset %s on %s\n", preset.c_str(), ctx->backend().name().c_str());
    if (lean_cpu && ctx->backend().kind() == theo::BackendKind::kCpu) {
      cfg.min_keys = true;
      cfg.compact_keys = true;
      std::printf("--lean-cpu: min-keys and compact keys (less memory, slower)\n");
    }
    {
      // The key-switching dataflow of each level, and where the choice came from.
      const theo::TuningReport& tr = ctx->tuning_report();
      std::printf("key switching (tuning table %s%s%s):", theo::tuning_load_status_name(tr.status),
                  tr.file.empty() ? "" : ", ", tr.file.c_str());
      for (theo::u32 l = 0; l <= ctx->max_level(); ++l) {
        const theo::LevelDataflow& d = ctx->key_switch_dataflow(l);
        std::printf(" %u:%s(%c)", l, theo::choice_name(d.choice).c_str(),
                    theo::choice_source_name(d.source)[0]);
      }
      std::printf("\n");
    }
    if (evalmod_r >= 0 || evalmod_degree >= 0) {
      theo::EvalModParams e;
      // The Bootstrapper's ModRaise lifts exactly: I varies like after a one-limb fast lift.
      e.k_bound =
          theo::EvalModParams::bound_for(ctx->params().sparse_hamming_weight, ctx->log_n(), 1);
      if (evalmod_r >= 0) e.double_angles = static_cast<theo::u32>(evalmod_r);
      if (evalmod_degree >= 0) e.degree = static_cast<theo::u32>(evalmod_degree);
      cfg.evalmod = e;
    }
    theo::KeyGenerator keygen(ctx);
    const theo::SecretKey sk = keygen.create_secret_key();
    theo::Encoder encoder(ctx);
    theo::Encryptor encryptor(ctx, sk);
    theo::Decryptor decryptor(ctx, sk);
    const theo::Evaluator evaluator(ctx);
    const auto boot_start = std::chrono::steady_clock::now();
    const theo::Bootstrapper boot(ctx, cfg);
    std::printf("%s", boot.describe().c_str());
    std::printf("memory after the bootstrapper's tables: process peak %.2f GiB\n", peak_rss_gib());
    const auto keys_start = std::chrono::steady_clock::now();
    const theo::BootstrappingKeys keys = boot.generate_keys(keygen, sk);
    ctx->backend().synchronize();
    const auto keys_end = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    std::printf(
        "set-up parts: context + secret key %.2f s, bootstrapper tables %.2f s, keys %.2f s\n",
        secs(setup_start, boot_start), secs(boot_start, keys_start), secs(keys_start, keys_end));
    std::printf(
        "set-up (context, tables, bootstrapper, all keys): %.2f s\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count());
    print_memory("after key generation", ctx->backend(), keys);
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_real_distribution<double> radius(0, 1), angle(0, 2 * M_PI);
    // --graph: the bootstrapping captured once (Context::capture) and replayed on each new input.
    theo::Ciphertext graph_in, graph_out;
    theo::Graph boot_graph;
    for (int r = 0; r < runs; ++r) {
      std::vector<Cplx> z(boot.slots());
      for (auto& x : z)
        x = std::polar(radius(rng), angle(rng));
      const theo::Ciphertext ct = encryptor.encrypt(encoder.encode(z, 0));
      if (graph && r == 0) {
        graph_in = evaluator.clone(ct);
        const auto c0 = std::chrono::steady_clock::now();
        boot_graph = ctx->capture([&] { graph_out = boot.bootstrap(graph_in, keys); });
        std::printf("graph: %zu kernels (%zu programmatic edges) captured in %.2f s\n",
                    boot_graph.kernel_count(), boot_graph.programmatic_edge_count(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count());
      }
      if (graph) boot_graph.set_input(graph_in, ct);
      ctx->backend().synchronize();
      const bool profiled = profile && r + 1 == runs;
      if (profiled) ctx->backend().profiler_range(true);
      const auto t0 = std::chrono::steady_clock::now();
      theo::Ciphertext out;
      if (graph) {
        boot_graph.replay();
      } else {
        out = boot.bootstrap(ct, keys);
      }
      ctx->backend().synchronize();
      if (profiled) ctx->backend().profiler_range(false);
      if (graph) out = evaluator.clone(graph_out);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (phases) {
        // The same bootstrap stage by stage, synchronized after each: where the time goes.
        using Clock = std::chrono::steady_clock;
        auto lap = [&](Clock::time_point& t) {
          ctx->backend().synchronize();
          const auto now = Clock::now();
          const double d = std::chrono::duration<double, std::milli>(now - t).count();
          t = now;
          return d;
        };
        auto t = Clock::now();
        const theo::Ciphertext raised = boot.mod_raise(ct, keys);
        const double t_raise = lap(t);
        const theo::Bootstrapper::RealImag w = boot.coeff_to_slot_split(raised, keys);
        const double t_cts = lap(t);
        const theo::Ciphertext red = boot.eval_mod(w, keys);
        const double t_mod = lap(t);
        const theo::Ciphertext o2 = boot.slot_to_coeff(red, keys.galois);
        const double t_stc = lap(t);
        std::printf(
            "  phases: ModRaise %.2f ms, CoeffToSlot %.2f ms, EvalMod %.2f ms, "
            "SlotToCoeff %.2f ms\n",
            t_raise, t_cts, t_mod, t_stc);
      }
      if (diagnose && boot.slots() == ctx->max_slots()) {
        const auto e = boot.diagnose(ct, keys, z, decryptor);
        std::printf(
            "  error by stage (log2 max slot error): approximation %.2f, CoeffToSlot %.2f, "
            "EvalMod %.2f, SlotToCoeff %.2f, total %.2f\n",
            e.approximation, e.coeff_to_slot, e.eval_mod, e.slot_to_coeff, e.total);
      }
      const auto got = encoder.decode(decryptor.decrypt(out));
      double err = 0;
      for (std::size_t i = 0; i < z.size(); ++i)
        err = std::max(err, std::abs(got[i] - z[i]));
      std::printf("bootstrap %d: %.1f ms, level 0 -> %u, precision %.2f bits (max error %.3g)\n", r,
                  ms, out.level(), -std::log2(err), err);
    }
    if (runs > 0)
      print_memory("after bootstrapping (peak = keys + working set)", ctx->backend(), keys);
    std::printf("peak resident memory of this process: %.2f GiB (getrusage)\n", peak_rss_gib());
  } catch (const theo::Error& e) {
    std::fprintf(stderr, "theo_boot_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
