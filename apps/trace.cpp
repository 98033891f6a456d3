// theo_trace: runs CKKS ops on a parameter set with the traffic recorder on and writes each op's
// trace (every backend call in issue order with its modelled bytes and work) as a "theo-trace"
// JSON document (docs/trace-format.md), the input of the HMC simulator (python -m
// theodosian.sim). No GPU is needed: the CPU backend issues the same backend calls, and
// --backend cost issues them without computing anything (the model layer's cost-only backend, key
// switches planned for --cache-mib): seconds even for a Boot at N = 2^16.
//
//   theo_trace [preset] [--workloads boot,hmult,hrot,...] [--limbs k] [--rotation r]
//              [--backend cpu|cuda|cost] [--cache-mib m] [--insecure] [--min-keys]
//              [--levers spec] [--commit sha] [--out-dir dir]
//
// Workloads (each under an OpScope of its name; one file <out-dir>/<preset>-<workload>.json):
//   hmult          Evaluator::multiply(a, b, relin) at the level          scope "HMult"
//   hmult_rescale  Evaluator::multiply_relin_rescale                       scope "HMultRescale"
//   hrot           Evaluator::rotate(a, rotation, galois)                  scope "HRot"
//   keyswitch      KeySwitcher::switch_key of a's second poly (relin key)  scope "KeySwitch"
//   rescale        Evaluator::rescale of a product                         scope "Rescale"
//   pmult          Evaluator::multiply_plain                               scope "PMult"
//   hadd           Evaluator::add                                          scope "HAdd"
//   boot           Bootstrapper::bootstrap of a ciphertext at its input level (0, or
//                  stc_levels with --levers slot_to_coeff_first)            scope "Boot"
//   helr           HELR training iterations (theo/workloads/helr.h, 1024 x 256 mini-batches;
//                  --helr-layout han2019|sparse-weights (default sparse-weights; op by op);
//                  --helr-iterations, default: up to and including the first one with a
//                  bootstrapping); batches of synthetic features (the ops do not depend on the
//                  values)                                                 scope "HELR"
//   resnet20       one encrypted ResNet-20 inference (theo/workloads/resnet.h) of the model file
//                  --resnet-model (default examples/models/resnet20_digits.theocnn) on a
//                  synthetic image; --resnet-min-keys for the layers' min-keys mode (what fits
//                  an 80 GB card). Tens of GB of encoded weights: meant for a GPU     "ResNet20"
// --limbs picks the level as theo_bench does (the highest with at most k limbs; default: the top
// level). --cache-mib sets the cache the key-switch batch planner fills
// (Optimizations::cache_bytes): the batches, and so the op sequence, follow the GPU's L2. Default
// on the CPU backend: 50 (the H100's L2), so a CPU run issues the calls an H100 run does; on the
// CUDA backend: the device's own L2 (0). Bootstrapping needs every rotation key (bootparam_40: ~9.4
// GiB on the CPU backend;
// --min-keys: the +-2^k keys only, a different and slower op sequence). --levers sets the
// bootstrapping levers (theo::with_bootstrap_levers: default, baseline, all, or names joined by
// '+'), so that each lever's trace can be priced before a GPU run.

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/model/cost_only_backend.h"
#include "theo/model/traffic.h"
#include "theo/model/traffic_trace.h"
#include "theo/ring/automorphism.h"
#include "theo/theodosian.h"
#include "theo/workloads/helr.h"
#include "theo/workloads/resnet.h"

namespace {

int usage() {
  std::fprintf(
      stderr,
      "usage: theo_trace [preset] [--workloads boot,hmult,hmult_rescale,hrot,keyswitch,"
      "rescale,pmult,hadd,helr,resnet20] [--limbs k] [--rotation r] [--backend cpu|cuda|cost] "
      "[--cache-mib m] [--helr-iterations k] [--helr-layout han2019|sparse-weights] "
      "[--resnet-model file] [--resnet-min-keys] "
      "[--insecure] [--min-keys] [--levers spec] [--commit sha] [--out-dir dir]\n");
  return 2;
}

// The highest level with at most `limbs` limbs (as theo_bench's --limbs).
theo::u32 level_for(const theo::Context& ctx, theo::u32 limbs) {
  theo::u32 best = 0;
  for (theo::u32 l = 0; l <= ctx.max_level(); ++l)
    if (ctx.level(l).limbs <= limbs && ctx.level(l).limbs >= ctx.level(best).limbs) best = l;
  return best;
}

std::vector<std::complex<double>> slots(const theo::Context& ctx, double phase) {
  std::vector<std::complex<double>> v(ctx.max_slots());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::polar(0.8, phase * static_cast<double>(i));
  return v;
}

const char* scope_of(const std::string& w) {
  if (w == "hmult") return "HMult";
  if (w == "hmult_rescale") return "HMultRescale";
  if (w == "hrot") return "HRot";
  if (w == "keyswitch") return "KeySwitch";
  if (w == "rescale") return "Rescale";
  if (w == "pmult") return "PMult";
  if (w == "hadd") return "HAdd";
  if (w == "boot") return "Boot";
  if (w == "helr") return "HELR";
  if (w == "resnet20") return "ResNet20";
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "bootparam_40";
  std::vector<std::string> workloads = {"hmult", "hrot", "keyswitch"};
  std::string out_dir = ".";
  std::string commit;
  unsigned limbs = 0;
  unsigned helr_iterations = 0;  // 0: through the first iteration with a bootstrapping
  std::string helr_layout = "sparse-weights";
  std::string resnet_model = "examples/models/resnet20_digits.theocnn";
  bool resnet_min_keys = false;
  long cache_mib = -1;  // -1: 50 on the CPU backend, the device's L2 on CUDA
  int rotation = 1234;  // the anchor's HRot (theo_bench)
  bool min_keys = false;
  std::string levers = "default";  // --levers: theo::with_bootstrap_levers' spec
  bool cost_only =
      false;  // --backend cost: record without computing (theo/model/cost_only_backend.h)
  theo::ContextOptions opts;
  opts.backend = theo::BackendChoice::kCpu;  // no GPU needed; --backend cuda to trace on one
  std::string command = "theo_trace";
  for (int i = 1; i < argc; ++i)
    command += std::string(" ") + argv[i];
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--workloads" || a == "--limbs" || a == "--rotation" || a == "--backend" ||
        a == "--commit" || a == "--out-dir" || a == "--cache-mib" || a == "--helr-iterations" ||
        a == "--helr-layout" || a == "--resnet-model" || a == "--levers") {
      const char* v = next();
      if (!v) return usage();
      if (a == "--workloads") workloads = theo::apps::split_list(v);
      if (a == "--limbs") limbs = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
      if (a == "--rotation") rotation = std::atoi(v);
      if (a == "--commit") commit = v;
      if (a == "--cache-mib") cache_mib = std::strtol(v, nullptr, 10);
      if (a == "--resnet-model") resnet_model = v;
      if (a == "--helr-layout") helr_layout = v;
      if (a == "--levers") levers = v;
      if (a == "--helr-iterations")
        helr_iterations = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
      if (a == "--out-dir") out_dir = v;
      if (a == "--backend") {
        if (std::strcmp(v, "cuda") == 0) {
          opts.backend = theo::BackendChoice::kCuda;
        } else if (std::strcmp(v, "cpu") == 0) {
          opts.backend = theo::BackendChoice::kCpu;
        } else if (std::strcmp(v, "cost") == 0) {
          cost_only = true;
        } else {
          return usage();
        }
      }
    } else if (a == "--insecure") {
      opts.allow_insecure = true;
    } else if (a == "--min-keys") {
      min_keys = true;
    } else if (a == "--resnet-min-keys") {
      resnet_min_keys = true;
    } else if (!a.empty() && a[0] != '-') {
      preset = a;
    } else {
      return usage();
    }
  }
  for (const std::string& w : workloads) {
    if (!scope_of(w)) {
      std::fprintf(stderr, "theo_trace: unknown workload '%s'\n", w.c_str());
      return usage();
    }
  }

  try {
    auto rec = std::make_shared<theo::TrafficRecorder>(
        theo::TrafficRecorderOptions{.profile = false, .keep_records = true});
    rec->set_enabled(false);  // only the workloads are recorded, not set-up and key generation
    opts.wrap_backend = theo::record_traffic(rec);
    if (cache_mib < 0)
      cache_mib = opts.backend == theo::BackendChoice::kCuda && !cost_only ? 0 : 50;
    opts.optimizations.cache_bytes = static_cast<std::size_t>(cache_mib) << 20;
    opts.optimizations = theo::with_bootstrap_levers(opts.optimizations, levers);
    if (cost_only) {
      const std::size_t l2 = opts.optimizations.cache_bytes;
      opts.make_backend = [l2](const theo::RingParams& r) {
        return theo::make_cost_only_backend(r, l2);
      };
    }
    const auto ctx = theo::Context::create(
        theo::load_preset(preset, theo::Environment::read().preset_dir), opts);
    const theo::u32 level =
        limbs == 0 ? ctx->max_level() : level_for(*ctx, static_cast<theo::u32>(limbs));
    std::printf("theo_trace: %s on %s, N = %u, level %u (%u limbs), dnum %u, alpha %u\n",
                preset.c_str(), ctx->backend().name().c_str(), ctx->n(), level,
                ctx->level(level).limbs, ctx->dnum(), ctx->alpha());

    theo::KeyGenerator keygen(ctx);
    const theo::SecretKey sk = keygen.create_secret_key();
    theo::Encoder enc(ctx);
    theo::Encryptor encr(ctx, sk);
    const theo::Evaluator ev(ctx);
    const theo::RelinKey relin = keygen.create_relin_key(sk);
    const int rot = rotation % static_cast<int>(ctx->max_slots());
    const theo::GaloisKeys galois = keygen.create_galois_keys(sk, {rot == 0 ? 1 : rot});
    const theo::u32 op_level = level == 0 ? 1 : level;  // rescale needs a level below
    const theo::Ciphertext a = encr.encrypt(enc.encode(slots(*ctx, 0.001), op_level));
    const theo::Ciphertext b = encr.encrypt(enc.encode(slots(*ctx, -0.002), op_level));
    const theo::Plaintext pt = enc.encode(slots(*ctx, 0.003), op_level);

    for (const std::string& w : workloads) {
      theo::TraceInfo info;
      info.workload = w;
      info.preset = preset;
      info.backend = ctx->backend().kind() == theo::BackendKind::kCuda       ? "cuda"
                     : ctx->backend().kind() == theo::BackendKind::kCostOnly ? "cost"
                                                                             : "cpu";
      info.device = ctx->backend().name();
      info.git_commit = commit;
      info.command = command;
      info.n = ctx->n();
      info.dnum = ctx->dnum();
      info.alpha = ctx->alpha();
      info.max_level = ctx->max_level();
      info.level = w == "boot" ? 0 : op_level;
      info.limbs = ctx->level(info.level).limbs;
      info.extra["cache_mib"] =
          cache_mib > 0 ? std::to_string(cache_mib)
                        : std::to_string(ctx->backend().l2_bytes() >> 20) + " (device L2)";
      info.extra["key_switch_digits_at_level"] =
          std::to_string(ctx->level(info.level).digits.size());

      std::function<void()> run;
      std::unique_ptr<theo::Helr> helr;
      std::unique_ptr<theo::ResNetInference> net;
      theo::Ciphertext net_in;
      std::vector<theo::Helr::Batch> helr_batches;
      theo::Helr::State helr_state;
      std::unique_ptr<theo::Bootstrapper> boot;
      std::unique_ptr<theo::BootstrappingKeys> boot_keys;
      theo::Ciphertext product, boot_in;
      theo::RnsPoly o0, o1;
      if (w == "hmult") {
        run = [&] { const theo::Ciphertext r = ev.multiply(a, b, relin); };
      } else if (w == "hmult_rescale") {
        run = [&] { const theo::Ciphertext r = ev.multiply_relin_rescale(a, b, relin); };
      } else if (w == "hrot") {
        info.extra["rotation"] = std::to_string(rot);
        run = [&] { const theo::Ciphertext r = ev.rotate(a, rot, galois); };
      } else if (w == "keyswitch") {
        o0 = ctx->backend().make_poly(ctx->level(op_level).q_basis);
        o1 = ctx->backend().make_poly(ctx->level(op_level).q_basis);
        run = [&] {
          ev.key_switcher().switch_key(a.poly(1).cref(), op_level, relin.key(), o0.ref(), o1.ref());
        };
      } else if (w == "rescale") {
        product = ev.multiply(a, b, relin);
        run = [&] { const theo::Ciphertext r = ev.rescale(product); };
      } else if (w == "pmult") {
        run = [&] { const theo::Ciphertext r = ev.multiply_plain(a, pt); };
      } else if (w == "hadd") {
        run = [&] { const theo::Ciphertext r = ev.add(a, b); };
      } else if (w == "boot") {
        theo::BootstrapConfig cfg;
        cfg.min_keys = min_keys;
        boot = std::make_unique<theo::Bootstrapper>(ctx, cfg);
        std::printf("%s", boot->describe().c_str());
        const auto t0 = std::chrono::steady_clock::now();
        boot_keys = std::make_unique<theo::BootstrappingKeys>(boot->generate_keys(keygen, sk));
        std::printf("bootstrapping keys: %.1f s\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        boot_in = encr.encrypt(enc.encode(slots(*ctx, 0.004), boot->input_level()));
        info.level = boot->input_level();
        info.limbs = ctx->level(info.level).limbs;
        info.extra["min_keys"] = min_keys ? "true" : "false";
        run = [&] { const theo::Ciphertext r = boot->bootstrap(boot_in, *boot_keys); };
      } else if (w == "helr") {
        theo::HelrConfig hc;
        hc.layout = theo::helr_layout_from_string(helr_layout);
        hc.graphs = false;  // op by op: every call is recorded (captured work is not)
        helr = std::make_unique<theo::Helr>(ctx, hc);
        unsigned iters = helr_iterations;
        for (std::size_t i = 0; iters == 0 && i < helr->plan().steps.size(); ++i)
          if (helr->plan().steps[i].bootstrap_before) iters = static_cast<unsigned>(i + 1);
        if (iters == 0) iters = 1;
        std::printf("%s", helr->plan().describe().c_str());
        const auto t0 = std::chrono::steady_clock::now();
        helr->generate_keys(keygen, sk, true);
        std::printf("HELR keys: %.1f s; tracing %u iterations\n",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                    iters);
        std::vector<double> x(static_cast<std::size_t>(hc.batch) * hc.features);
        std::vector<std::uint8_t> y(hc.batch);
        for (std::size_t i = 0; i < x.size(); ++i)
          x[i] = static_cast<double>(i % 17) / 17.0;
        for (std::size_t i = 0; i < y.size(); ++i)
          y[i] = static_cast<std::uint8_t>(i & 1);
        helr_state = helr->initial_state(encr);
        for (unsigned t = 0; t < iters; ++t)
          helr_batches.push_back(helr->encrypt_batch(encr, x, y, t));
        info.extra["helr_iterations"] = std::to_string(iters);
        info.extra["helr_batch"] = std::to_string(hc.batch);
        info.extra["helr_features"] = std::to_string(hc.features);
        info.extra["helr_layout"] = helr_layout;
        info.level = ctx->params().default_encryption_level;
        info.limbs = ctx->level(info.level).limbs;
        run = [&] {
          for (const theo::Helr::Batch& batch : helr_batches)
            helr->iterate(helr_state, batch);
        };
      } else if (w == "resnet20") {
        const theo::ResNetModel model = theo::ResNetModel::load(resnet_model);
        boot = std::make_unique<theo::Bootstrapper>(ctx);
        theo::ResNetOptions ro;
        ro.min_keys = resnet_min_keys;
        const auto t0 = std::chrono::steady_clock::now();
        net = std::make_unique<theo::ResNetInference>(ctx, model, boot.get(), std::nullopt, ro);
        std::printf("%s\ncompiled in %.1f s\n", net->describe().c_str(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        boot_keys = std::make_unique<theo::BootstrappingKeys>(boot->generate_keys(keygen, sk));
        std::vector<theo::u32> extra;
        for (const int r : net->rotations()) {
          const theo::u32 g = theo::galois_element_for_rotation(r, ctx->log_n());
          if (!boot_keys->galois.contains(g) &&
              std::find(extra.begin(), extra.end(), g) == extra.end())
            extra.push_back(g);
        }
        keygen.add_galois_keys(sk, extra, boot_keys->galois);
        std::vector<double> image(model.input_size());
        for (std::size_t i = 0; i < image.size(); ++i)
          image[i] = static_cast<double>(i % 13) / 13.0 - 0.5;
        net_in = net->encrypt(enc, encr, image);
        info.extra["resnet_model"] = resnet_model;
        info.extra["resnet_min_keys"] = resnet_min_keys ? "true" : "false";
        info.extra["bootstraps"] = std::to_string(net->counts().bootstraps);
        info.level = net->input_level();
        info.limbs = ctx->level(info.level).limbs;
        run = [&] { const theo::Ciphertext r = net->infer(ev, net_in, *boot_keys); };
      }

      ctx->backend().synchronize();
      rec->clear();
      rec->set_enabled(true);
      const auto t0 = std::chrono::steady_clock::now();
      {
        const theo::OpScope scope(scope_of(w));
        run();
      }
      ctx->backend().synchronize();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rec->set_enabled(false);
      const std::vector<theo::TrafficRecord> records = rec->records();
      const std::string path = out_dir + "/" + preset + "-" + w + ".json";
      std::ofstream f(path);
      if (!f) {
        std::fprintf(stderr, "theo_trace: cannot write %s\n", path.c_str());
        return 1;
      }
      f << theo::trace_json(records, info);
      const theo::TrafficTotals t = rec->total();
      std::printf("%-14s %6zu calls %8.3f GB %8.3f GMAC  (%.2f s)  -> %s\n", w.c_str(),
                  records.size(), t.bytes() / 1e9, t.macs / 1e9, s, path.c_str());
    }
  } catch (const theo::Error& e) {
    std::fprintf(stderr, "theo_trace: %s\n", e.what());
    return 1;
  }
  return 0;
}
