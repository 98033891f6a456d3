// theo_ckks_demo: CKKS end to end on the CPU (or CUDA) backend.
//   1. encrypt a random vector x in [-1, 1]^slots,
//   2. evaluate sin(x) by its degree-7 Taylor polynomial x - x^3/6 + x^5/120 - x^7/5040 in the
//      power basis (depth 4),
//   3. rotate-and-sum: log2(slots) rotations by 1, 2, 4, ... leave the total in every slot,
//   4. decrypt and compare with the plaintext computation: precision in bits (-log2 max error)
//      and the time of each op.
// Usage: theo_ckks_demo [--preset NAME] [--insecure] [--slots N]
//   Default preset: n14_s40 (N = 2^14, Delta = 2^40, 128-bit secure); when the library has no
//   such preset, a secure 25-30 prime system with N = 2^14 and 6 levels is generated.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "theo/math/prime_system.h"
#include "theo/theodosian.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timer {
  const char* what;
  Clock::time_point start = Clock::now();
  ~Timer() {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    std::printf("  %-34s %9.2f ms\n", what, ms);
  }
};

double precision_bits(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    err = std::max(err, std::abs(got[i] - want[i]));
  return err > 0 ? -std::log2(err) : 99.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace theo;
  std::string preset = "n14_s40";
  bool insecure = false;
  u32 slots_wanted = 0;
  // THEO_PRESET_DIR, read once: searched for presets before the bundled ones.
  const std::filesystem::path preset_dir = Environment::read().preset_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--preset") == 0 && i + 1 < argc) {
      preset = argv[++i];
    } else if (std::strcmp(argv[i], "--insecure") == 0) {
      insecure = true;
    } else if (std::strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
      slots_wanted = static_cast<u32>(std::stoul(argv[++i]));
    } else {
      std::printf("usage: %s [--preset NAME] [--insecure] [--slots N]\npresets:", argv[0]);
      for (const auto& name : preset_names(preset_dir))
        std::printf(" %s", name.c_str());
      std::printf("\n");
      return 2;
    }
  }
  try {
    ParameterSet params;
    const auto names = preset_names(preset_dir);
    if (std::find(names.begin(), names.end(), preset) == names.end() && preset == "n14_s40") {
      PrimeSystemSpec spec;
      spec.log_n = 14;
      spec.log_scale = 40;
      spec.levels = 6;
      params = generate_prime_system(spec);
      params.name = "generated n14, 6 levels, Delta 2^40";
    } else {
      params = load_preset(preset, preset_dir);
    }
    ContextOptions options;
    options.allow_insecure = insecure;
    std::shared_ptr<const Context> ctx;
    {
      Timer t{"context (tables, backend)"};
      ctx = Context::create(params, options);
    }
    const u32 slots = slots_wanted ? slots_wanted : ctx->max_slots();
    const u32 level = ctx->default_encryption_level();
    std::printf("parameters: %s, N = 2^%u, %u slots, top level %u (log2 Q = %.1f), backend %s\n",
                params.name.c_str(), ctx->log_n(), slots, level, ctx->level(level).log2_q,
                ctx->backend().name().c_str());
    if (level < 4) {
      std::printf("the degree-7 polynomial needs 4 levels; this set has %u\n", level);
      return 1;
    }

    KeyGenerator keygen(ctx);
    std::vector<int> rotations;
    for (u32 r = 1; r < slots; r *= 2)
      rotations.push_back(static_cast<int>(r));
    SecretKey sk;
    PublicKey pk;
    RelinKey rlk;
    GaloisKeys gk;
    {
      Timer t{"keygen (sk, pk, relin)"};
      sk = keygen.create_secret_key();
      pk = keygen.create_public_key(sk);
      rlk = keygen.create_relin_key(sk);
    }
    {
      Timer t{"keygen (rotation keys)"};
      gk = keygen.create_galois_keys(sk, rotations);
    }
    Encoder encoder(ctx);
    Encryptor encryptor(ctx, pk);
    Decryptor decryptor(ctx, sk);
    Evaluator ev(ctx);

    std::mt19937_64 rng{std::random_device{}()};
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    std::vector<double> x(slots);
    for (double& v : x)
      v = uni(rng);

    std::printf("\nsin(x) by its degree-7 Taylor polynomial, then rotate-and-sum:\n");
    Ciphertext ct;
    {
      Timer t{"encode + encrypt"};
      ct = encryptor.encrypt(encoder.encode(x, level));
    }
    // Power basis, depth 4: x^2, x^3 = x^2 x, x^4 = (x^2)^2, x^5 = x^4 x, x^7 = x^4 x^3; each term
    // c_k x^k is rescaled once more and the sum lines the levels up by itself.
    Ciphertext x2, x3, x4, x5, x7, acc;
    {
      Timer t{"HMult + relin + rescale (x^2)"};
      x2 = ev.multiply_relin_rescale(ct, ct, rlk);
    }
    {
      Timer t{"HMult, level-mismatched (x^3)"};
      x3 = ev.multiply_relin_rescale(x2, ct, rlk);
    }
    {
      Timer t{"square + rescale (x^4)"};
      x4 = ev.rescale(ev.square(x2, rlk));
    }
    x5 = ev.multiply_relin_rescale(x4, ct, rlk);
    x7 = ev.multiply_relin_rescale(x4, x3, rlk);
    {
      Timer t{"mult const + rescale"};
      acc = ev.rescale(ev.multiply_const(ct, 1.0));
    }
    {
      Timer t{"add (level-mismatched)"};
      acc = ev.add(acc, ev.rescale(ev.multiply_const(x3, -1.0 / 6.0)));
    }
    acc = ev.add(acc, ev.rescale(ev.multiply_const(x5, 1.0 / 120.0)));
    acc = ev.add(acc, ev.rescale(ev.multiply_const(x7, -1.0 / 5040.0)));
    std::vector<double> want(slots);
    for (u32 i = 0; i < slots; ++i) {
      const double v = x[i], v2 = v * v;
      want[i] = v * (1 - v2 / 6 * (1 - v2 / 20 * (1 - v2 / 42)));
    }
    std::vector<double> got;
    {
      Timer t{"decrypt + decode"};
      got = encoder.decode_real(decryptor.decrypt(acc));
    }
    std::printf("  level %u, scale 2^%.4f\n", acc.level(),
                static_cast<double>(std::log2(acc.scale())));
    for (u32 i = 0; i < std::min<u32>(4, slots); ++i) {
      std::printf("  x = % .6f  sin7(x) = % .9f  decrypted % .9f  (true sin % .9f)\n", x[i],
                  want[i], got[i], std::sin(x[i]));
    }
    std::printf("  polynomial precision: %.1f bits\n", precision_bits(got, want));

    Ciphertext sum = ev.clone(acc);
    {
      Timer t{"rotate-and-sum (all rotations)"};
      for (const int r : rotations)
        ev.add_inplace(sum, ev.rotate(sum, r, gk));
    }
    {
      Timer t{"one rotation"};
      (void)ev.rotate(acc, 1, gk);
    }
    double total = 0;
    for (const double v : want)
      total += v;
    const std::vector<double> sums = encoder.decode_real(decryptor.decrypt(sum));
    std::printf("  sum of sin7(x): plaintext % .9f, decrypted slot 0 % .9f, slot %u % .9f\n", total,
                sums[0], slots - 1, sums[slots - 1]);
    std::printf("  rotate-and-sum precision: %.1f bits (values up to %.1f)\n",
                precision_bits(sums, std::vector<double>(slots, total)), std::abs(total));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
