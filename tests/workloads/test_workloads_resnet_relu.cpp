// The papers' network, ReLU through AppReLU, on a reduced configuration (N = 2^12, insecure
// test parameters, a random narrow network): encrypted logits against the plaintext network with
// the same AppReLU in bits and class, the planner's bootstrappings counted as issued, the graph
// replay word for word equal to eager execution. Labelled slow (kept out of the sanitizer run).

#include "workloads/resnet_test_util.h"

namespace theo::test {
namespace {

TEST(ResNetWorkload, ReluNetworkMatchesItsPlaintextAppRelu) {
  // The papers' network on a reduced configuration: a random ReLU ResNet (widths 2 / 4, one
  // block per stage, 8x8 input: 5 ReLUs), a cheaper sign (7-7, depth 6) so that CI stays short,
  // and 8 user levels: the planner bootstraps between sign components and refreshes side values.
  const u64 seed = fresh_seed("ResNetWorkload.ReluNetworkMatchesItsPlaintextAppRelu");
  std::mt19937_64 rng(seed);
  ResNetModel model = ResNetModel::random(3, 8, {2, 4}, 1, 4, seed, ResNetModel::Activation::kRelu);
  // AppReLU holds on the calibrated range (x margin) only - beyond [-1, 1] the composite grows
  // without bound, in plaintext as under encryption - so the calibration covers the test image
  // (random() calibrates on 8 other random images).
  const std::vector<double> img = random_image(model, rng);
  std::vector<std::vector<double>> calibration{img};
  for (int i = 0; i < 8; ++i)
    calibration.push_back(random_image(model, rng));
  model.calibrate(calibration);
  Env e(generated_boot_params(12, 8, 13, 2, 2));  // N = 2^12 (insecure), 8 user levels
  const Bootstrapper boot(e.ctx, ResNetInference::bootstrap_config(model));
  ResNetOptions o;
  o.sign = CompositeSign::fit({7, 7}, 1.0 / 32);
  const ResNetInference net(e.ctx, model, &boot, std::nullopt, o);
  std::printf("%s", net.describe().c_str());
  EXPECT_EQ(net.activation_name(), "appRelu-7-7");
  EXPECT_EQ(net.counts().ciphertext_products, 5u);
  EXPECT_GE(net.counts().bootstraps, 2u);
  EXPECT_EQ(net.program_plan().bootstraps, net.counts().bootstraps);
  BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk, false);
  std::vector<u32> gal;
  for (const int r : net.rotations())
    gal.push_back(galois_element_for_rotation(r, e.ctx->log_n()));
  e.keygen.add_galois_keys(e.sk, gal, keys.galois);
  std::vector<std::string> seen;
  u32 boots = 0;
  const Ciphertext in = net.encrypt(e.encoder, e.encryptor, img);
  const Ciphertext out = net.infer(
      e.evaluator, in, keys, [&](const std::string& step, u32, u32) { seen.push_back(step); },
      &boots);
  EXPECT_EQ(seen.size(), net.plan().steps.size());
  EXPECT_EQ(boots, net.counts().bootstraps);
  const auto got = net.decrypt_logits(e.encoder, e.decryptor, out);
  const auto want = net.reference_logits(img);
  // Captured per unit (stem, blocks, head) and replayed: the same words as the eager run.
  const std::unique_ptr<ResNetGraphs> graphs = net.capture(e.evaluator, keys, in);
  EXPECT_EQ(graphs->units(), net.plan().steps.size());
  EXPECT_EQ(graphs->bootstraps_per_run(), net.counts().bootstraps);
  EXPECT_GT(graphs->kernel_count(), 0u);
  const Ciphertext replayed = graphs->run(in);
  EXPECT_EQ(hash_ct(*e.ctx, replayed), hash_ct(*e.ctx, out));
  // The units share their scratch (one CaptureSequence): another image, then the first again.
  EXPECT_GT(graphs->workspace_bytes(), 0u);
  const Ciphertext in2 = net.encrypt(e.encoder, e.encryptor, random_image(model, rng));
  EXPECT_EQ(hash_ct(*e.ctx, graphs->run(in2)), hash_ct(*e.ctx, net.infer(e.evaluator, in2, keys)));
  EXPECT_EQ(hash_ct(*e.ctx, graphs->run(in)), hash_ct(*e.ctx, out));
  const double b = logit_bits(got, want);
  print_bits("ReLU ResNet vs plaintext AppReLU: logits", b);
  EXPECT_GT(b, 10);
  EXPECT_EQ(argmax(got), argmax(want));
  // The AppReLU network against exact ReLU (the same weights), for the log: with this cheap sign
  // (error 2^-2.6) it is only roughly ReLU; alpha13's AppReLU is checked in the circuits tests.
  print_bits("plaintext AppReLU vs exact ReLU: logits", logit_bits(want, model.logits(img)));
}

}  // namespace
}  // namespace theo::test
