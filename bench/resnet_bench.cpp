// theo_resnet: encrypted ResNet inference on real images, end to end, with the numbers the
// workload benchmark reports. The model file decides the network: ReLU (the papers' workload,
// AppReLU under encryption) or the quadratic fast variant.
//
//   theo_resnet --model examples/models/resnet20_relu_mnist.theocnn
//               --images examples/models/mnist_test28.json --preset bootparam_40
//               [--backend cuda|cpu] [--count 100] [--graph [--eager-count 10]] [--min-keys]
//               [--profile]
//               [--out FILE.json] [--plan-only] [--insecure] [--threads T] [--levels L]
//               [--log-n K] [--boot-ratio-bits R] [--no-boot-center] [--margin M]
// --graph: every static unit (stem, block, head) captured once as a graph and replayed per image
// (mode "graph"); default eager. --eager-count M (with --graph): M images eagerly too, in the
// same process (a second record, mode "eager").
// --levels L: instead of a preset, a generated insecure N = 2^12 bootstrappable set with L user
// levels (the reduced CPU configuration; needs --insecure).
// --log-n K: the preset's primes and level structure on N = 2^K (insecure; CPU reproductions of a
// production set's numerics). --boot-ratio-bits R: BootstrapConfig::message_ratio_bits (7 gives
// a small ring the headroom of 2^15 slots; default: ResNetInference::bootstrap_config).
// --no-boot-center: bootstrap activations uncentred.
//
// Per image: encrypt -> every layer, bootstrapping where the level planner put it -> decrypt; the
// encrypted logits are compared with the plaintext model with the same activation
// (ResNetInference::reference_logits: the quadratic, or AppReLU with the network's scales): same
// class, precision in bits (-log2 max |error| over the logits); ReLU networks also against the
// exact-ReLU model (class_agreement_relu); the true labels give the accuracies. Timing: the host
// clock around infer() (or the graphs' run()) after a backend synchronize, median over the images
// (image 0 runs once more first, to warm up). Counts are measured where they happen: the
// bootstrap calls the run issues, the key switches the backend receives (KeyMult calls, one per
// key applied, from a recorded run of one image), the bytes the backend holds after compiling
// the layers (weights), after making the keys, and at its peak. --profile times every backend op
// of that recorded run (synchronized): the phase breakdown (bootstrapping share, key switching
// share, time by limb-count range as in Fig. 8b of the Theodosian paper) and the traffic model's
// bytes. JSON records (one object per line) go to --out and stdout: op "resnet20_relu_inference"
// / "resnet20_inference" ("resnet_relu_inference" / "resnet_inference" for other shapes).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench_commit.h"
#include "theo/math/prime_system.h"
#include "theo/model/traffic.h"
#include "theo/ring/automorphism.h"
#include "theo/theodosian.h"
#include "theo/workloads/resnet.h"

namespace {

using namespace theo;
using Clock = std::chrono::steady_clock;

struct Images {
  u32 size = 0;
  std::vector<std::vector<double>> pixels;  // size x size, in [0, 1]
  std::vector<int> labels;
};

Images load_images(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw ParameterError("cannot open " + path);
  nlohmann::json j = nlohmann::json::parse(f);
  Images im;
  im.size = j.at("size").get<u32>();
  const double maxv = j.value("max_value", 16.0);
  for (const auto& img : j.at("images")) {
    std::vector<double> v;
    for (const auto& x : img)
      v.push_back(x.get<double>() / maxv);
    if (v.size() != static_cast<std::size_t>(im.size) * im.size) {
      throw ParameterError(path + ": an image of " + std::to_string(v.size()) + " pixels");
    }
    im.pixels.push_back(std::move(v));
  }
  im.labels = j.at("labels").get<std::vector<int>>();
  if (im.labels.size() != im.pixels.size()) throw ParameterError(path + ": labels != images");
  return im;
}

// Bilinear resize with pixel centres aligned (theodosian.cnn.digits_dataset does the same), the
// gray image repeated over `channels`: C x out x out.
std::vector<double> to_input(const std::vector<double>& src, u32 in, u32 out, u32 channels) {
  std::vector<int> i0(out), i1(out);
  std::vector<double> fr(out);
  for (u32 k = 0; k < out; ++k) {
    const double s = (k + 0.5) * in / out - 0.5;
    const int a = std::clamp(static_cast<int>(std::floor(s)), 0, static_cast<int>(in) - 1);
    i0[k] = a;
    i1[k] = std::min(a + 1, static_cast<int>(in) - 1);
    fr[k] = std::clamp(s - a, 0.0, 1.0);
  }
  std::vector<double> rows(static_cast<std::size_t>(out) * in);
  for (u32 y = 0; y < out; ++y)
    for (u32 x = 0; x < in; ++x)
      rows[y * in + x] = src[i0[y] * in + x] * (1 - fr[y]) + src[i1[y] * in + x] * fr[y];
  std::vector<double> img(static_cast<std::size_t>(channels) * out * out);
  for (u32 y = 0; y < out; ++y)
    for (u32 x = 0; x < out; ++x) {
      const double v = rows[y * in + i0[x]] * (1 - fr[x]) + rows[y * in + i1[x]] * fr[x];
      // float32 like the training script's tensors
      for (u32 c = 0; c < channels; ++c)
        img[(static_cast<std::size_t>(c) * out + y) * out + x] = static_cast<float>(v);
    }
  return img;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

u32 argmax(const std::vector<double>& v) {
  return static_cast<u32>(std::max_element(v.begin(), v.end()) - v.begin());
}

struct Args {
  std::string model, images, preset = "bootparam_40", backend = "auto", out;
  u32 count = 100;
  u32 threads = 0;
  u32 levels = 0;  // > 0: a generated N = 2^12 bootstrappable set with that many user levels
  u32 log_n = 0;   // > 0: the preset's primes and level structure on a smaller ring (insecure)
  u32 boot_ratio_bits = 0;  // > 0: BootstrapConfig::message_ratio_bits
  u32 eager_count = 0;      // with --graph: this many images eagerly too (a second record)
  double margin = 1.25;
  bool no_boot_center = false, graph = false;
  bool insecure = false, min_keys = false, profile = false, plan_only = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ParameterError(s + " needs a value");
      return argv[++i];
    };
    if (s == "--model")
      a.model = next();
    else if (s == "--images")
      a.images = next();
    else if (s == "--preset")
      a.preset = next();
    else if (s == "--backend")
      a.backend = next();
    else if (s == "--out")
      a.out = next();
    else if (s == "--count")
      a.count = static_cast<u32>(std::stoul(next()));
    else if (s == "--threads")
      a.threads = static_cast<u32>(std::stoul(next()));
    else if (s == "--levels")
      a.levels = static_cast<u32>(std::stoul(next()));
    else if (s == "--log-n")
      a.log_n = static_cast<u32>(std::stoul(next()));
    else if (s == "--boot-ratio-bits")
      a.boot_ratio_bits = static_cast<u32>(std::stoul(next()));
    else if (s == "--no-boot-center")
      a.no_boot_center = true;
    else if (s == "--margin")
      a.margin = std::stod(next());
    else if (s == "--graph")
      a.graph = true;
    else if (s == "--eager-count")
      a.eager_count = static_cast<u32>(std::stoul(next()));
    else if (s == "--insecure")
      a.insecure = true;
    else if (s == "--min-keys")
      a.min_keys = true;
    else if (s == "--profile")
      a.profile = true;
    else if (s == "--plan-only")
      a.plan_only = true;
    else
      throw ParameterError("unknown argument " + s);
  }
  if (a.model.empty()) throw ParameterError("--model FILE is required");
  return a;
}

void emit(const nlohmann::json& rec, const std::string& out) {
  std::cout << rec.dump() << std::endl;
  if (!out.empty()) {
    std::ofstream f(out, std::ios::app);
    f << rec.dump() << "\n";
  }
}

// Fig. 8b's ranges: time by the limb count of the polynomials an op works on.
std::string limb_range(u32 limbs) {
  static const u32 edges[] = {10, 20, 30, 40};
  u32 lo = 0;
  for (const u32 e : edges) {
    if (limbs < e) return std::to_string(lo) + "-" + std::to_string(e - 1);
    lo = e;
  }
  return std::to_string(lo) + "+";
}

// Key switches the backend received in `records` (one per key applied: KeyMult calls, hoisted
// rotation batches counted per rotation); `in_boot` those inside a bootstrapping.
struct KeySwitchCount {
  u64 total = 0, in_boot = 0;
};
KeySwitchCount count_key_switches(const std::vector<TrafficRecord>& records) {
  KeySwitchCount k;
  for (const TrafficRecord& r : records) {
    u64 n = 0;
    if (r.op == "key_mult" || r.op == "key_mult_add_scaled" || r.op == "key_mult_automorphed") {
      n = 1;
    } else if (r.op == "key_mult_rotations") {
      n = r.cost.polys / 2;  // two output polys per rotation
    }
    k.total += n;
    if (r.scope.find("/Boot") != std::string::npos) k.in_boot += n;
  }
  return k;
}

double gb(std::size_t bytes) {
  return static_cast<double>(bytes) / 1e9;
}

int run(const Args& a) {
  const ResNetModel model = ResNetModel::load(a.model);
  const bool relu = model.activation == ResNetModel::Activation::kRelu;
  ContextOptions co;
  co.backend = a.backend == "cpu"    ? BackendChoice::kCpu
               : a.backend == "cuda" ? BackendChoice::kCuda
                                     : BackendChoice::kAuto;
  co.allow_insecure = a.insecure;
  co.threads = a.threads;
  auto recorder = std::make_shared<TrafficRecorder>(
      TrafficRecorderOptions{.profile = a.profile, .keep_records = true});
  recorder->set_enabled(false);
  co.wrap_backend = record_traffic(recorder);
  std::string preset = a.preset;
  ParameterSet params;
  if (a.levels > 0) {
    // Reduced configuration for the CPU: N = 2^12 (insecure), `levels` user levels.
    PrimeSystemSpec spec;
    spec.log_n = 12;
    spec.log_scale = 40;
    spec.levels = a.levels;
    spec.boot_levels = 13;
    spec.num_cts_levels = 2;
    spec.num_stc_levels = 2;
    params = generate_prime_system(spec);
    preset = "generated log_n 12, log_scale 40, levels " + std::to_string(a.levels) +
             ", boot_levels 13 (insecure)";
  } else {
    params = load_preset(a.preset);
    if (a.log_n > 0) {
      params = with_log_degree(params, a.log_n);
      preset = a.preset + " structure at log_n " + std::to_string(a.log_n) + " (insecure)";
    }
  }
  const ContextPtr ctx = Context::create(params, co);
  Backend& be = ctx->backend();
  const auto t0 = Clock::now();
  BootstrapConfig bc = ResNetInference::bootstrap_config(model);
  if (a.boot_ratio_bits > 0) bc.message_ratio_bits = a.boot_ratio_bits;
  const std::size_t live0 = be.memory_report().live_bytes;
  const Bootstrapper boot(ctx, bc);
  const std::size_t live_boot = be.memory_report().live_bytes;
  ResNetOptions ro;
  ro.min_keys = a.min_keys;
  ro.center_bootstrapping = !a.no_boot_center;
  ro.margin = a.margin;
  const ResNetInference net(ctx, model, &boot, std::nullopt, ro);
  const std::size_t live_net = be.memory_report().live_bytes;
  const double compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::fprintf(stderr, "%s\n%s\ncompiled in %.1f s\n", be.name().c_str(), net.describe().c_str(),
               compile_s);
  const double key_bytes = 2.0 * ctx->dnum() * (ctx->q_max_limbs() + ctx->alpha()) * ctx->n() * 4;
  std::set<u32> gal;
  for (const int r : boot.rotations())
    gal.insert(galois_element_for_rotation(r, ctx->log_n()));
  const std::size_t boot_keys = gal.size();
  for (const int r : net.rotations())
    gal.insert(galois_element_for_rotation(r, ctx->log_n()));
  std::fprintf(stderr,
               "rotation keys: %zu (bootstrapping %zu) x %.0f MB = %.1f GB; encoded weights "
               "%.1f GB (model of the layers), %.2f GB resident\n",
               gal.size(), boot_keys, key_bytes / 1e6,
               static_cast<double>(gal.size()) * key_bytes / 1e9,
               net.counts().plaintext_bytes / 1e9, gb(live_net - live_boot));
  if (a.plan_only) return 0;

  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const std::size_t live_sk = be.memory_report().live_bytes;
  BootstrappingKeys keys = boot.generate_keys(keygen, sk, true);
  std::vector<u32> extra;
  for (const u32 g : gal)
    if (!keys.galois.contains(g)) extra.push_back(g);
  keygen.add_galois_keys(sk, extra, keys.galois);
  const std::size_t live_keys = be.memory_report().live_bytes;
  const PublicKey pk = keygen.create_public_key(sk);
  Encoder encoder(ctx);
  Encryptor encryptor(ctx, pk);
  Decryptor decryptor(ctx, sk);
  const Evaluator ev(ctx);
  const double setup_s = std::chrono::duration<double>(Clock::now() - t0).count();

  const Images images = a.images.empty() ? Images{} : load_images(a.images);
  const u32 count = std::min<u32>(a.count, static_cast<u32>(images.pixels.size()));
  if (count == 0) throw ParameterError("no images (--images FILE, --count N)");
  auto input = [&](u32 idx) {
    return to_input(images.pixels[idx], images.size, model.image, model.channels);
  };

  // Graph mode: every unit captured once, for ciphertexts like image 0's.
  std::unique_ptr<ResNetGraphs> graphs;
  double capture_s = 0;
  if (a.graph) {
    const Ciphertext example = net.encrypt(encoder, encryptor, input(0));
    const auto tc = Clock::now();
    graphs = net.capture(ev, keys, example);
    be.synchronize();
    capture_s = std::chrono::duration<double>(Clock::now() - tc).count();
    std::fprintf(stderr, "captured %zu graphs (%zu kernels) in %.1f s\n", graphs->units(),
                 graphs->kernel_count(), capture_s);
  }

  // `n` images (after a warm-up run of image 0), through the graphs or eagerly.
  struct Stats {
    std::vector<double> times, bits;
    u32 agree = 0, agree_relu = 0, enc_correct = 0, plain_correct = 0, ref_correct = 0;
    u32 boots = 0;
  };
  auto measure = [&](u32 n, bool use_graph) {
    Stats st;
    for (u32 i = 0; i <= n; ++i) {
      const u32 idx = i == 0 ? 0 : i - 1;  // image 0 twice: the first run warms up
      const auto img = input(idx);
      const Ciphertext ct = net.encrypt(encoder, encryptor, img);
      be.synchronize();
      const auto t = Clock::now();
      u32 boots = 0;
      const Ciphertext out = use_graph ? (boots = graphs->bootstraps_per_run(), graphs->run(ct))
                                       : net.infer(ev, ct, keys, {}, &boots);
      be.synchronize();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      if (i == 0) continue;
      st.boots = std::max(st.boots, boots);
      st.times.push_back(ms);
      const auto got = net.decrypt_logits(encoder, decryptor, out);
      const auto want = net.reference_logits(img);  // same activation as the encrypted network
      const auto exact = model.logits(img);         // the model's own activation
      double err = 0;
      for (std::size_t j = 0; j < want.size(); ++j)
        err = std::max(err, std::abs(got[j] - want[j]));
      st.bits.push_back(err > 0 ? -std::log2(err) : 60);
      st.agree += argmax(got) == argmax(want);
      st.agree_relu += argmax(got) == argmax(exact);
      st.enc_correct += static_cast<int>(argmax(got)) == images.labels[idx];
      st.ref_correct += static_cast<int>(argmax(want)) == images.labels[idx];
      st.plain_correct += static_cast<int>(argmax(exact)) == images.labels[idx];
      std::fprintf(stderr,
                   "image %3u (%s): %8.1f ms, label %d, encrypted %u, reference %u, model %u, "
                   "%.1f bits, %u bootstrappings\n",
                   i, use_graph ? "graph" : "eager", ms, images.labels[idx], argmax(got),
                   argmax(want), argmax(exact), st.bits.back(), boots);
    }
    return st;
  };
  const Stats main_stats = measure(count, a.graph);
  // Memory as the measured mode leaves it: the eager images below run with the graphs still
  // held, so their working set comes on top.
  const MemoryReport mem_runs = be.memory_report();
  const u32 eager_count =
      a.graph ? std::min<u32>(a.eager_count, static_cast<u32>(images.pixels.size())) : 0;
  const Stats eager_stats = eager_count > 0 ? measure(eager_count, false) : Stats{};

  // One more image recorded (eager): key switches as the backend receives them, and with
  // --profile every op timed.
  const auto img0 = input(0);
  const Ciphertext ct0 = net.encrypt(encoder, encryptor, img0);
  be.synchronize();
  recorder->clear();
  recorder->set_enabled(true);
  {
    const OpScope scope("ResNet");
    net.infer(ev, ct0, keys);
  }
  be.synchronize();
  recorder->set_enabled(false);
  const KeySwitchCount ks = count_key_switches(recorder->records());
  const MemoryReport mem = be.memory_report();

  const bool r20 = model.image == 32 && model.widths == std::vector<u32>{16, 32, 64} &&
                   model.blocks_per_stage == 3;
  const std::string op =
      std::string(r20 ? "resnet20" : "resnet") + (relu ? "_relu_inference" : "_inference");
  const ResNetCounts& c = net.counts();
  auto record = [&](const Stats& st, bool graph_mode, const MemoryReport& m) {
    const u32 n = static_cast<u32>(st.times.size());
    nlohmann::json rec = {
        {"op", op},
        {"device", be.name()},
        {"preset", preset},
        {"model", a.model},
        {"mode", graph_mode ? "graph" : "eager"},
        {"activation", net.activation_name()},
        {"network", relu ? "relu (the papers' workload)" : "quadratic (the fast variant)"},
        {"min_keys", a.min_keys},
        {"images", n},
        {"median_ms", median(st.times)},
        {"min_ms", *std::min_element(st.times.begin(), st.times.end())},
        {"max_ms", *std::max_element(st.times.begin(), st.times.end())},
        {"precision_bits", median(st.bits)},
        {"precision_bits_min", *std::min_element(st.bits.begin(), st.bits.end())},
        {"class_agreement", static_cast<double>(st.agree) / n},
        {"accuracy", static_cast<double>(st.enc_correct) / n},
        {"reference_accuracy", static_cast<double>(st.ref_correct) / n},
        {"plaintext_accuracy", static_cast<double>(st.plain_correct) / n},
        {"bootstraps", st.boots},
        {"bootstraps_planned", c.bootstraps},
        {"key_switches", ks.total},
        {"key_switches_outside_boot", ks.total - ks.in_boot},
        {"key_switches_layers_model", c.key_switches},
        {"ciphertext_products", c.ciphertext_products},
        {"plaintext_products", c.diagonals},
        {"rotation_keys", gal.size()},
        {"weights_gb_model", c.plaintext_bytes / 1e9},
        {"setup_s", setup_s},
        {"git_commit", THEO_BENCH_GIT_COMMIT},
    };
    if (relu) rec["class_agreement_relu"] = static_cast<double>(st.agree_relu) / n;
    if (graph_mode) {
      rec["capture_s"] = capture_s;
      rec["graph_units"] = graphs->units();
      rec["graph_kernels"] = graphs->kernel_count();
      // The captured units' own memory (outputs and their shared scratch).
      rec["graph_memory_gb"] = gb(graphs->workspace_bytes());
    }
    // Bytes the backend holds on the device (null on the CPU): peak_gpu_gb the most in use by
    // the backend's allocations since it was made, sampled after this mode's images;
    // device_used_gb the device's own view then (cudaMemGetInfo: every process and the CUDA
    // context); pool_reserved_gb what the memory pool holds from the device, free blocks included.
    if (m.device_total > 0) {
      rec["weights_gb"] = gb(live_net - live_boot);
      rec["bootstrapper_gb"] = gb(live_boot - live0);
      rec["keys_gb"] = gb(live_keys - live_sk);
      rec["peak_gpu_gb"] = gb(m.peak_bytes);
      rec["device_used_gb"] = gb(m.device_used);
      rec["pool_reserved_gb"] = gb(m.reserved_bytes);
      rec["pool_reserved_peak_gb"] = gb(m.reserved_peak_bytes);
    } else {
      for (const char* k : {"weights_gb", "bootstrapper_gb", "keys_gb", "peak_gpu_gb",
                            "device_used_gb", "pool_reserved_gb", "pool_reserved_peak_gb"})
        rec[k] = nullptr;
    }
    return rec;
  };
  nlohmann::json rec = record(main_stats, a.graph, mem_runs);
  if (a.profile) {
    // The recorded image, every backend op synchronized and timed (slower than the median above:
    // the shares, not the sum, are what this pass is for).
    const TrafficTotals all = recorder->total_in("ResNet");
    double boot_us = 0, ks_us = 0;
    std::map<std::string, double> by_limbs, boot_by_limbs;
    for (const TrafficRecord& r : recorder->records()) {
      if (r.scope.find("ResNet/") == std::string::npos && r.scope != "ResNet") continue;
      const bool in_boot = r.scope.find("/Boot") != std::string::npos;
      if (in_boot) boot_us += r.time_us;
      if (r.scope.find("ModUp") != std::string::npos ||
          r.scope.find("KeyMult") != std::string::npos ||
          r.scope.find("ModDown") != std::string::npos)
        ks_us += r.time_us;
      const u32 limbs = r.cost.polys ? r.cost.limbs / r.cost.polys : r.cost.limbs;
      by_limbs[limb_range(limbs)] += r.time_us;
      if (in_boot) boot_by_limbs[limb_range(limbs)] += r.time_us;
    }
    nlohmann::json limbs = nlohmann::json::object(), boot_limbs = nlohmann::json::object();
    for (const auto& [k, v] : by_limbs)
      limbs[k] = v / all.time_us;
    for (const auto& [k, v] : boot_by_limbs)
      boot_limbs[k] = v / all.time_us;
    nlohmann::json scopes = nlohmann::json::object();
    for (const auto& [k, v] : recorder->by_scope())
      if (k.rfind("ResNet/", 0) == 0 && std::count(k.begin(), k.end(), '/') == 1) {
        scopes[k.substr(7)] = {{"ms", v.time_us / 1e3}, {"gb", v.bytes() / 1e9}};
      }
    rec["profile"] = {{"profiled_ms", all.time_us / 1e3},
                      {"bootstrap_share", boot_us / all.time_us},
                      {"key_switch_share", ks_us / all.time_us},
                      {"time_share_by_limbs", limbs},
                      {"bootstrap_time_share_by_limbs", boot_limbs},
                      {"scopes", scopes},
                      {"traffic_gb", all.bytes() / 1e9},
                      {"table_gb", all.table_bytes / 1e9},
                      {"backend_calls", all.calls}};
  }
  emit(rec, a.out);
  if (eager_count > 0) emit(record(eager_stats, false, mem), a.out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "theo_resnet: %s\n", e.what());
    return 1;
  }
}
