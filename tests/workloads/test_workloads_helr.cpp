// HELR on a reduced configuration (insecure N = 2^12 bootstrapping set with 13 user levels,
// 14 x 14 digits 3 vs 8, mini-batches of 64 drawn with replacement, 4 iterations with one
// bootstrapping): the encrypted weights against the plaintext reference (same polynomial, same
// batches, same schedule) in bits, and bad input rejected before any encryption work.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "theo/math/prime_system.h"
#include "theo/theodosian.h"
#include "theo/workloads/digits.h"
#include "theo/workloads/helr.h"

namespace theo {
namespace {

ParameterSet small_boot_params() {
  PrimeSystemSpec spec;
  spec.log_n = 12;
  spec.log_scale = 40;
  spec.levels = 13;
  spec.boot_levels = 13;
  spec.num_cts_levels = 2;
  spec.num_stc_levels = 2;
  return generate_prime_system(spec);
}

ContextPtr make_ctx() {
  ContextOptions o;
  o.backend = BackendChoice::kCpu;
  o.allow_insecure = true;
  return Context::create(small_boot_params(), o);
}

struct Data {
  std::vector<double> x;  // samples x F
  std::vector<std::uint8_t> labels;
};

Data digits_3_vs_8(u32 features) {
  const Digits d =
      load_digits(std::string(THEO_SOURCE_DIR) + "/python/theodosian/data/digits14.bin");
  std::vector<u32> idx;
  Data out;
  for (u32 i = 0; i < d.count(); ++i) {
    if (d.labels[i] == 3 || d.labels[i] == 8) {
      idx.push_back(i);
      out.labels.push_back(d.labels[i] == 8 ? 1 : 0);
    }
  }
  out.x = digit_features(d, idx, features);
  return out;
}

void train_and_compare(u32 radix, u32 iterations) {
  HelrConfig cfg;
  cfg.batch = 64;
  cfg.iterations = iterations;
  cfg.reduction_radix = radix;
  auto ctx = make_ctx();
  Helr helr(ctx, cfg);
  std::printf("%s", helr.plan().describe().c_str());
  EXPECT_EQ(helr.slots(), 2048u);
  EXPECT_EQ(helr.ciphertexts(), 4u);
  EXPECT_EQ(helr.iteration_depth(), 6u);
  EXPECT_EQ(helr.config().reduction_radix, radix);
  EXPECT_EQ(helr.plan().bootstraps, iterations > 2 ? 1u : 0u);

  const Data data = digits_3_vs_8(cfg.features);
  const u32 n = static_cast<u32>(data.labels.size());
  const u64 seed = std::random_device{}();
  std::printf("batch sampling seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<u32> pick(0, n - 1);
  std::vector<u32> batches(cfg.iterations * cfg.batch);
  for (auto& b : batches)
    b = pick(rng);  // with replacement
  const auto ref = helr_reference_train(cfg, data.x, data.labels, batches);

  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  Encryptor enc(ctx, pk);
  Decryptor dec(ctx, sk);
  helr.generate_keys(keygen, sk, false);
  Helr::State state = helr.initial_state(enc);
  for (u32 t = 0; t < cfg.iterations; ++t) {
    std::vector<double> bx;
    std::vector<std::uint8_t> by;
    for (u32 k = 0; k < cfg.batch; ++k) {
      const u32 i = batches[t * cfg.batch + k];
      bx.insert(bx.end(), data.x.begin() + static_cast<std::ptrdiff_t>(i) * cfg.features,
                data.x.begin() + static_cast<std::ptrdiff_t>(i + 1) * cfg.features);
      by.push_back(data.labels[i]);
    }
    const Helr::Batch batch = helr.encrypt_batch(enc, bx, by, t);
    HelrPhaseTimes times;
    helr.iterate(state, batch, &times);
    const auto w = helr.decrypt_weights(dec, state);
    double err = 0, scale = 0;
    for (u32 j = 0; j < cfg.features; ++j) {
      err = std::max(err, std::abs(w[j] - ref[t][j]));
      scale = std::max(scale, std::abs(ref[t][j]));
    }
    const double bits = -std::log2(err / scale);
    std::printf(
        "[precision] iteration %u: weights vs plaintext %.2f bits (max |w| %.3f), %.0f ms, "
        "%u key switches\n",
        t, bits, scale, times.total_ms(), times.key_switches);
    EXPECT_GE(bits, 12) << "iteration " << t;
  }
  EXPECT_EQ(helr.bootstraps(), iterations > 2 ? 1u : 0u);
}

// Four iterations: two from the encryption level, a bootstrapping, two more.
TEST(Helr, EncryptedTrainingMatchesPlaintextInBits) {
  train_and_compare(2, 4);
}
// Double-hoisted radix-4 reductions: the same result to the same precision (one span).
TEST(Helr, EncryptedTrainingRadix4) {
  train_and_compare(4, 2);
}

TEST(Helr, RejectsBadInputBeforeEncrypting) {
  auto ctx = make_ctx();
  HelrConfig cfg;
  cfg.batch = 64;
  cfg.iterations = 2;
  Helr helr(ctx, cfg);
  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  Encryptor enc(ctx, pk);
  std::vector<double> x(cfg.batch * cfg.features, 0.5);
  std::vector<std::uint8_t> y(cfg.batch, 1);
  // Wrong shape, NaN, bad label.
  EXPECT_THROW(helr.encrypt_batch(enc, std::span(x).first(x.size() - 1), y, 0), ParameterError);
  x[17] = NAN;
  EXPECT_THROW(helr.encrypt_batch(enc, x, y, 0), ParameterError);
  x[17] = 0.5;
  y[3] = 2;
  EXPECT_THROW(helr.encrypt_batch(enc, x, y, 0), ParameterError);
  // A deeper sigmoid (degree 15: 4 + 4 levels) fits one iteration per bootstrapped span.
  HelrConfig deep = cfg;
  deep.sigmoid_degree = 15;
  deep.iterations = 3;
  EXPECT_EQ(Helr(ctx, deep).plan().bootstraps, 2u);
  HelrConfig too_deep = cfg;
  too_deep.sigmoid_degree = 511;
  EXPECT_THROW(Helr(ctx, too_deep), ParameterError);
  // Shapes the packing cannot hold.
  HelrConfig odd = cfg;
  odd.features = 200;
  EXPECT_THROW(Helr(ctx, odd), ParameterError);
  HelrConfig huge = cfg;
  huge.batch = 4096;
  EXPECT_THROW(Helr(ctx, huge), ParameterError);
  // Iterating without keys.
  Helr::State s = helr.initial_state(enc);
  y[3] = 1;
  const Helr::Batch b = helr.encrypt_batch(enc, x, y, 0);
  EXPECT_THROW(helr.iterate(s, b), MissingKeyError);
}

TEST(Helr, PlanRejectsAnIterationDeeperThanABootstrapping) {
  // test_boot_n12 gives 4 levels after bootstrapping (3 after the split): an iteration needs 6.
  ContextOptions o;
  o.backend = BackendChoice::kCpu;
  o.allow_insecure = true;
  auto ctx = Context::create(load_preset("test_boot_n12"), o);
  HelrConfig cfg;
  cfg.batch = 64;
  try {
    Helr h(ctx, cfg);
    FAIL() << "expected LevelError";
  } catch (const LevelError& e) {
    EXPECT_NE(std::string(e.what()).find("HELR iteration"), std::string::npos) << e.what();
  }
}

TEST(Helr, ReferenceAndScheduleBasics) {
  const auto eta = helr_eta_schedule(4);
  EXPECT_NEAR(eta[0], 0.99 / ((1 + std::sqrt(1 + 4e-4)) / 2), 1e-12);
  EXPECT_LT(eta[3], 0);
  HelrConfig cfg;
  cfg.features = 4;
  cfg.batch = 2;
  cfg.iterations = 1;
  const std::vector<double> x{1, 0.5, 0, 0, 1, -0.5, 0, 0};
  const std::vector<std::uint8_t> y{1, 0};
  const std::vector<u32> batches{0, 1};
  const auto w = helr_reference_train(cfg, x, y, batches);
  // v = 0: p(0) = 1/2, g = (z_0 + z_1) / 2 = ((1, .5) - (1, -.5)) / 2 = (0, .5); w = gamma g.
  EXPECT_NEAR(w[0][0], 0, 1e-15);
  EXPECT_NEAR(w[0][1], cfg.learning_rate / 2 * 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(helr_accuracy(w[0], x, y), 1.0);
  EXPECT_THROW(helr_reference_train(cfg, x, y, std::vector<u32>{0}), ParameterError);
}

}  // namespace
}  // namespace theo
