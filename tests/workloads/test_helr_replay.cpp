// HELR replayed from captured graphs: both layouts on an insecure N = 2^12 bootstrapping set with
// bootparam_40's levels, MNIST 3 vs 8, batches of 64 distinct images, through one bootstrapping.
// Every iteration's state (its words) from graph replays equals eager execution's, and on the CUDA
// backend also the CPU reference's (seeded keys and encryptions); the weights agree with the
// plaintext reference to >= 12 bits. Built into test_helr_replay (CPU) and test_cuda_helr (GPU,
// tests/backend_test.h).

#include <gtest/gtest.h>

#include <cstdio>

#include "backend_test.h"
#include "workloads/helr_test_util.h"

namespace theo::test {
namespace {

ContextPtr boot_context(BackendChoice backend) {
  return Context::create(helr_boot_params(), test_options(backend));
}

// Hashes of every state ciphertext after each iteration.
using Trace = std::vector<std::vector<u64>>;

u64 state_hash(const Context& ctx, const Helr::State& s) {
  u64 h = 0;
  for (const Ciphertext& c : s.w)
    h = h * 1099511628211ull ^ hash_ct(ctx, c);
  for (const Ciphertext& c : s.q)
    h = h * 1099511628211ull ^ hash_ct(ctx, c);
  if (!s.packed.empty()) h = h * 1099511628211ull ^ hash_ct(ctx, s.packed);
  return h;
}

// Trains eagerly and from graphs side by side on `backend` with seeded keys and encryptions, twice
// (the second training replays every captured shape again); returns the states' hashes per
// iteration (graph == eager checked here) and checks the weights.
std::vector<u64> train_twice(BackendChoice backend, HelrLayout layout, u32 iterations,
                             const std::vector<u32>& batches, u32 expect_bootstraps) {
  const ContextPtr ctx = boot_context(backend);
  HelrConfig cfg;
  cfg.layout = layout;
  cfg.batch = 64;
  cfg.iterations = iterations;
  HelrConfig eager_cfg = cfg;
  eager_cfg.graphs = false;
  Helr graph(ctx, cfg), eager(ctx, eager_cfg);
  EXPECT_EQ(graph.plan().bootstraps, expect_bootstraps);
  KeyGenerator keygen(ctx, seed_of(11));
  const SecretKey sk = keygen.create_secret_key();
  graph.generate_keys(keygen, sk, false);
  eager.use_keys(graph.keys());
  Encryptor enc(ctx, sk, seed_of(12));
  Decryptor dec(ctx, sk);
  Evaluator ev(ctx);

  const HelrData data = mnist_3_vs_8(cfg.features);
  const auto ref = helr_reference_train(cfg, data.x, data.labels, batches);
  std::vector<u64> hashes;
  // Two trainings: the second replays the graphs the first captured, on new encryptions.
  u32 captured = 0;
  for (u32 pass = 0; pass < 2; ++pass) {
    Helr::State sg = graph.initial_state(enc), se;
    for (const Ciphertext& c : sg.w)
      se.w.push_back(ev.clone(c));
    for (const Ciphertext& c : sg.q)
      se.q.push_back(ev.clone(c));
    for (u32 t = 0; t < iterations; ++t) {
      const Helr::Batch b = encrypt_iteration(graph, enc, data, cfg, batches, t);
      graph.iterate(sg, b);
      eager.iterate(se, b);
      const u64 h = state_hash(*ctx, sg);
      EXPECT_EQ(h, state_hash(*ctx, se))
          << to_string(layout) << ": graph replay differs from eager execution after iteration "
          << t << " of pass " << pass;
      hashes.push_back(h);
      double scale = 0;
      const double bits = weight_bits(graph, dec, sg, ref[t], scale);
      std::printf(
          "[precision] %s pass %u iteration %u: weights vs plaintext %.2f bits (max |w| "
          "%.3f)\n",
          to_string(layout), pass, t, bits, scale);
      EXPECT_GE(bits, 12) << to_string(layout) << " iteration " << t;
    }
    if (pass == 0) captured = graph.captured_graphs();
  }
  EXPECT_EQ(graph.captured_graphs(), captured) << "the second training captured again";
  expect_bootstraps *= 2;
  EXPECT_EQ(graph.bootstraps(), expect_bootstraps);
  EXPECT_EQ(eager.bootstraps(), expect_bootstraps);
  EXPECT_GT(graph.captured_graphs(), 0u);
  EXPECT_EQ(eager.captured_graphs(), 0u);
  std::printf("[graphs] %s: %u graphs captured, %zu kernels per replay of each shape\n",
              to_string(layout), graph.captured_graphs(), graph.captured_kernels());
  return hashes;
}

class HelrReplay : public OnBackend {
 protected:
  void run(HelrLayout layout, u32 iterations, u32 expect_bootstraps) {
    // Distinct images per batch (64 of 1000), from a fresh seed each run.
    const std::vector<u32> batches = random_batches(1000, 64, iterations);
    const std::vector<u64> got =
        train_twice(backend(), layout, iterations, batches, expect_bootstraps);
    if (!on_cpu()) {
      const std::vector<u64> cpu =
          train_twice(BackendChoice::kCpu, layout, iterations, batches, expect_bootstraps);
      EXPECT_EQ(got, cpu) << "the CUDA backend's states differ from the CPU reference's";
    }
  }
};

// Han et al.'s layout: three iterations of depth 4 from level 16, the packing, a full-slot
// bootstrapping, one more iteration.
TEST_P(HelrReplay, HanLayoutGraphsMatchEagerAndPlaintext) {
  run(HelrLayout::kHan2019, 4, 1);
}

// Sparse weights: four iterations of depth 4 from level 16, the pack, a sparse bootstrapping,
// one more.
TEST_P(HelrReplay, SparseWeightsGraphsMatchEagerAndPlaintext) {
  run(HelrLayout::kSparseWeights, 5, 1);
}

THEO_INSTANTIATE_ON_BACKEND(HelrReplay);

}  // namespace
}  // namespace theo::test
