// HELR on a reduced configuration (insecure N = 2^12 bootstrapping set with bootparam_40's levels,
// MNIST 3 vs 8 at 14 x 14 (python/theodosian/data/mnist14_3v8.bin), mini-batches of 64 distinct
// images): radix-4 reductions against the plaintext reference (same polynomial, same batches, same
// schedule) in bits, and bad input rejected before any encryption work. Training through a
// bootstrapping, eager and from graphs: test_helr_replay.cpp.

#include <gtest/gtest.h>

#include <cstdio>

#include "workloads/helr_test_util.h"

namespace theo::test {
namespace {

ContextPtr make_ctx() {
  return Context::create(helr_boot_params(), test_options());
}

// Trains `cfg.iterations` encrypted iterations on fresh batches and checks every iteration's
// weights against the plaintext reference (>= 12 bits).
void train_and_compare(const HelrConfig& cfg, u32 expect_bootstraps) {
  auto ctx = make_ctx();
  Helr helr(ctx, cfg);
  std::printf("%s layout, %u ciphertexts per batch\n%s", to_string(cfg.layout), helr.ciphertexts(),
              helr.plan().describe().c_str());
  EXPECT_EQ(helr.slots(), 2048u);
  EXPECT_EQ(helr.plan().bootstraps, expect_bootstraps);

  const HelrData data = mnist_3_vs_8(cfg.features);
  // Batches of distinct images (64 of 1000).
  const std::vector<u32> batches =
      random_batches(static_cast<u32>(data.labels.size()), cfg.batch, cfg.iterations);
  const auto ref = helr_reference_train(cfg, data.x, data.labels, batches);

  KeyGenerator keygen(ctx);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  Encryptor enc(ctx, pk);
  Decryptor dec(ctx, sk);
  helr.generate_keys(keygen, sk, false);
  Helr::State state = helr.initial_state(enc);
  for (u32 t = 0; t < cfg.iterations; ++t) {
    const Helr::Batch batch = encrypt_iteration(helr, enc, data, cfg, batches, t);
    HelrPhaseTimes times;
    helr.iterate(state, batch, &times);
    double scale = 0;
    const double bits = weight_bits(helr, dec, state, ref[t], scale);
    std::printf(
        "[precision] %s iteration %u: weights vs plaintext %.2f bits (max |w| %.3f), %.0f ms, "
        "%u key switches\n",
        to_string(cfg.layout), t, bits, scale, times.total_ms(), times.key_switches);
    EXPECT_GE(bits, 12) << "iteration " << t;
  }
  EXPECT_EQ(helr.bootstraps(), expect_bootstraps);
}

HelrConfig sparse_config(u32 radix, u32 iterations) {
  HelrConfig cfg;
  cfg.layout = HelrLayout::kSparseWeights;
  cfg.batch = 64;
  cfg.iterations = iterations;
  cfg.reduction_radix = radix;
  return cfg;
}

// Through a bootstrapping, eager and from graphs, both layouts: test_helr_replay.cpp.
// Double-hoisted radix-4 reductions: the same precision (one span, sparse weights; Han's column
// sums and replication).
TEST(Helr, EncryptedTrainingRadix4) {
  train_and_compare(sparse_config(4, 2), 0);
  HelrConfig han;
  han.layout = HelrLayout::kHan2019;
  han.batch = 64;
  han.iterations = 2;
  han.reduction_radix = 4;
  train_and_compare(han, 0);
}

TEST(Helr, RejectsBadInputBeforeEncrypting) {
  auto ctx = make_ctx();
  HelrConfig cfg;
  cfg.batch = 64;
  EXPECT_EQ(helr_layout_from_string("han2019"), HelrLayout::kHan2019);
  EXPECT_EQ(std::string(to_string(HelrLayout::kSparseWeights)), "sparse-weights");
  EXPECT_THROW(helr_layout_from_string("han"), ParameterError);
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
  // A deeper sigmoid (degree 15: 2 + 4 levels) fits two iterations per bootstrapped span (12
  // levels after the split): two from level 16, then two per bootstrapping.
  HelrConfig deep = cfg;
  deep.sigmoid_degree = 15;
  deep.iterations = 6;
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
  EXPECT_EQ(helr.ciphertexts(), 4u);
  EXPECT_EQ(helr.iteration_depth(), 4u);
  // Han et al.'s layout: 8 ciphertexts of 64 rows x 32 features, depth 4; shapes it cannot hold.
  HelrConfig han = cfg;
  han.layout = HelrLayout::kHan2019;
  {
    const Helr h(ctx, han);
    EXPECT_EQ(h.ciphertexts(), 8u);
    EXPECT_EQ(h.iteration_depth(), 4u);
  }
  han.features = 16;  // 16 x 64 values do not fill 2048 slots
  EXPECT_THROW(Helr(ctx, han), ParameterError);
  han.features = 256;
  han.batch = 4096;
  EXPECT_THROW(Helr(ctx, han), ParameterError);
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
}  // namespace theo::test
