// theo_trace: the op trace of one operation (a Boot, a KeySwitch, ...) on a parameter preset,
// recorded without computing anything (theo/model/cost_only_backend.h), key switches planned for
// a given GPU's L2 cache, written as JSON: every backend call in issue order with its scope,
// shape, bytes and modular multiply-adds (theo/model/report.h, trace_json), plus the totals per
// scope against the GPU's ceilings. The input of simulators; seconds on a CPU even for a Boot at
// N = 2^16, since nothing is computed.
//
//   theo_trace [--preset bootparam_40] [--op boot|keyswitch|hmult|hrot|rescale] [--level L]
//              [--gpu h100|h200|descriptor.json|probe.txt] [--insecure] [--out trace.json]
//
// --level: the level of the ciphertexts (keyswitch / hmult / hrot / rescale; default: the top).

#include <complex>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "theo/circuits/bootstrapper.h"
#include "theo/model/cost_only_backend.h"
#include "theo/model/report.h"
#include "theo/theodosian.h"

namespace {

using namespace theo;

struct Options {
  std::string preset = "bootparam_40";
  std::string op = "boot";
  std::string gpu = "h100";
  std::string out;
  int level = -1;
  bool insecure = false;
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "theo_trace: " << error << "\n"
            << "usage: theo_trace [--preset bootparam_40] "
               "[--op boot|keyswitch|hmult|hrot|rescale] [--level L]\n"
               "                  [--gpu h100|h200|descriptor.json|probe.txt] [--insecure] "
               "[--out trace.json]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--insecure") {
      o.insecure = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--preset")
      o.preset = v;
    else if (a == "--op")
      o.op = v;
    else if (a == "--gpu")
      o.gpu = v;
    else if (a == "--out")
      o.out = v;
    else if (a == "--level")
      o.level = std::stoi(v);
    else
      usage("unknown option " + a);
  }
  if (o.op != "boot" && o.op != "keyswitch" && o.op != "hmult" && o.op != "hrot" &&
      o.op != "rescale")
    usage("--op must be boot, keyswitch, hmult, hrot or rescale");
  return o;
}

std::vector<std::complex<double>> slots(std::size_t n) {
  std::vector<std::complex<double>> z(n);
  for (std::size_t i = 0; i < n; ++i)
    z[i] = std::polar(0.5, 0.001 * static_cast<double>(i));
  return z;
}

int run(const Options& o) {
  const GpuDescriptor gpu = load_gpu(o.gpu);
  auto rec = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.keep_records = true});
  rec->set_enabled(false);  // set-up (keys, plaintexts) is not part of the trace
  ContextOptions co;
  co.allow_insecure = o.insecure;
  co.make_backend = [&gpu](const RingParams& ring) {
    return make_cost_only_backend(ring, gpu.l2_bytes);
  };
  co.wrap_backend = record_traffic(rec);
  ContextPtr ctx;
  try {
    ctx = Context::create(load_preset(o.preset), co);
  } catch (const SecurityError& e) {
    throw SecurityError(std::string(e.what()) + " (theo_trace: add --insecure)");
  }
  KeyGenerator kg(ctx);
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk);
  const Evaluator ev(ctx);
  const u32 level = o.level >= 0 ? static_cast<u32>(o.level) : ctx->default_encryption_level();
  std::printf("theo_trace: %s of %s, key switches planned for %s (L2 %.0f MiB)\n", o.op.c_str(),
              o.preset.c_str(), gpu.name.c_str(), static_cast<double>(gpu.l2_bytes) / (1 << 20));

  std::function<void()> op;
  std::optional<Bootstrapper> boot;
  BootstrappingKeys boot_keys;
  GaloisKeys rot_keys;
  Ciphertext a, b;
  RnsPoly o0, o1;
  if (o.op == "boot") {
    boot.emplace(ctx);
    boot_keys = boot->generate_keys(kg, sk, false);
    a = encryptor.encrypt(enc.encode(slots(boot->slots()), 0));
    op = [&] { const Ciphertext r = boot->bootstrap(a, boot_keys); };
  } else {
    a = encryptor.encrypt(enc.encode(slots(8), level));
    b = encryptor.encrypt(enc.encode(slots(8), level));
    if (o.op == "keyswitch") {
      const LevelData& lv = ctx->level(level);
      o0 = ctx->backend().make_poly(lv.q_basis);
      o1 = ctx->backend().make_poly(lv.q_basis);
      op = [&] {
        ev.key_switcher().switch_key(a.poly(1).cref(), level, rlk.key(), o0.ref(), o1.ref());
      };
    } else if (o.op == "hmult") {
      op = [&] { const Ciphertext r = ev.multiply_relin_rescale(a, b, rlk); };
    } else if (o.op == "hrot") {
      rot_keys = kg.create_galois_keys(sk, {1});
      op = [&] { const Ciphertext r = ev.rotate(a, 1, rot_keys); };
    } else {
      const Ciphertext ab = ev.multiply(a, b, rlk);
      a = ev.clone(ab);
      op = [&] { const Ciphertext r = ev.rescale(a); };
    }
  }
  rec->set_enabled(true);
  {
    const OpScope scope(o.op);
    op();
  }
  rec->set_enabled(false);

  print_table_header("scope");
  print_table_row(o.op, rec->total_in(o.op), gpu, 0);
  print_stages(*rec, o.op, 1, gpu);
  nlohmann::json j = trace_json(*rec, gpu);
  j["header"] = {{"preset", o.preset},
                 {"op", o.op},
                 {"level", o.op == "boot" ? 0 : level},
                 {"n", ctx->n()},
                 {"max_level", ctx->max_level()},
                 {"alpha", ctx->alpha()},
                 {"dnum", ctx->dnum()},
                 {"peak_bytes", ctx->backend().memory_report().peak_bytes}};
  j["scopes"] = scopes_json(*rec, "", 1, gpu);
  std::printf("%zu calls recorded\n", j["calls"].size());
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    if (!f) {
      std::cerr << "theo_trace: cannot write " << o.out << "\n";
      return 1;
    }
    f << j.dump(1) << "\n";
    std::printf("trace written to %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "theo_trace: " << e.what() << "\n";
    return 1;
  }
}
