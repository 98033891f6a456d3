// Encrypted ResNet inference on reduced configurations (N = 2^12, few channels, insecure test
// parameters), against the plaintext model with the same quadratic activation: logits precision
// in bits and the predicted class; the trained tiny model on real digits; bad input.

#include <random>

#include "workloads/resnet_test_util.h"

namespace theo::test {
namespace {

// Relinearization and the layers' rotation keys (no bootstrapping).
BootstrappingKeys layer_keys(Env& e, const ResNetInference& net) {
  BootstrappingKeys k;
  k.relin = e.keygen.create_relin_key(e.sk);
  k.galois = e.keygen.create_galois_keys(e.sk, net.rotations());
  return k;
}

TEST(ResNetWorkload, PlaintextFoldingMatchesTheModel) {
  // The compiled program's scalars are exact: checked here through the encrypted path with
  // enough levels to need no bootstrapping (stem 2 + 3 blocks x 4 + head 1 = 15).
  const u64 seed = fresh_seed("ResNetWorkload.PlaintextFoldingMatchesTheModel");
  std::mt19937_64 rng(seed);
  const ResNetModel model = ResNetModel::random(3, 8, {2, 4, 8}, 1, 4, seed);
  Env e(generated_params(12, 15));
  const ResNetInference net(e.ctx, model, nullptr);
  std::printf("%s", net.describe().c_str());
  EXPECT_EQ(net.counts().bootstraps, 0u);
  EXPECT_EQ(net.counts().ciphertext_products, 7u);
  ResNetOptions mk;
  mk.min_keys = true;
  const ResNetInference net_mk(e.ctx, model, nullptr, std::nullopt, mk);
  for (const ResNetInference* n : {&net, &net_mk}) {
    const BootstrappingKeys keys = layer_keys(e, *n);
    const std::vector<double> img = random_image(model, rng);
    const Ciphertext ct = n->encrypt(e.encoder, e.encryptor, img);
    const Ciphertext out = n->infer(e.evaluator, ct, keys);
    EXPECT_EQ(out.level(), 0u);
    const auto got = n->decrypt_logits(e.encoder, e.decryptor, out);
    const auto want = model.logits(img);
    const double b = logit_bits(got, want);
    print_bits(
        n == &net ? "ResNet 2/4/8, no bootstrapping: logits" : "same, min-keys layers: logits", b);
    // Random models put the logits' scale anywhere in a wide range: over 40 seeds the bits ran
    // from 13.2 up, so 12 is the floor that separates noise from a folding error (which costs
    // most of the bits).
    EXPECT_GT(b, 12);
    EXPECT_EQ(argmax(got), argmax(want));
  }
  EXPECT_LT(net_mk.rotations().size(), 2 * e.ctx->log_n());
}

TEST(ResNetWorkload, WithBootstrappingPlacedByThePlanner) {
  const u64 seed = fresh_seed("ResNetWorkload.WithBootstrappingPlacedByThePlanner");
  std::mt19937_64 rng(seed);
  const ResNetModel model = ResNetModel::random(3, 8, {4}, 1, 3, seed);
  Env e(boot_test_params());
  BootstrapConfig cfg;
  const Bootstrapper boot(e.ctx, cfg);
  const ResNetInference net(e.ctx, model, &boot);
  std::printf("%s", net.describe().c_str());
  // 3 user levels fresh, 4 after each bootstrapping: stem (2), then one for the block and one
  // for the head.
  EXPECT_EQ(net.counts().bootstraps, 2u);
  BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk, false);
  std::vector<u32> gal;
  for (const int r : net.rotations())
    gal.push_back(galois_element_for_rotation(r, e.ctx->log_n()));
  e.keygen.add_galois_keys(e.sk, gal, keys.galois);
  const std::vector<double> img = random_image(model, rng);
  std::vector<std::string> seen;
  const Ciphertext out =
      net.infer(e.evaluator, net.encrypt(e.encoder, e.encryptor, img), keys,
                [&](const std::string& step, u32, u32) { seen.push_back(step); });
  EXPECT_EQ(seen.size(), net.plan().steps.size());
  const auto got = net.decrypt_logits(e.encoder, e.decryptor, out);
  const auto want = model.logits(img);
  const double b = logit_bits(got, want);
  print_bits("ResNet, 2 bootstrappings: logits", b);
  EXPECT_GT(b, 8);
  EXPECT_EQ(argmax(got), argmax(want));
}

TEST(ResNetWorkload, BadInputIsRejectedBeforeEncryption) {
  ResNetModel model = ResNetModel::random(3, 8, {2, 4}, 1, 3, 5);
  Env e(generated_params(12, 4));
  // Too deep for the parameters without bootstrapping: LevelError at compile time.
  EXPECT_THROW(ResNetInference(e.ctx, model, nullptr), LevelError);
  Env deep(generated_params(12, 12));
  const ResNetInference net(deep.ctx, model, nullptr);
  // An image of the wrong shape / with NaN.
  EXPECT_THROW(net.pack_image(std::vector<double>(3 * 8 * 7)), ParameterError);
  std::vector<double> img(3 * 8 * 8, 0.5);
  img[17] = std::nan("");
  EXPECT_THROW(net.encrypt(deep.encoder, deep.encryptor, img), ParameterError);
  // Weights with NaN, a missing tensor, a wrong shape.
  ResNetModel bad = model;
  bad.tensors["s1.b0.conv2"][4] = std::nan("");
  EXPECT_THROW(ResNetInference(deep.ctx, bad, nullptr), ParameterError);
  bad = model;
  bad.tensors.erase("fc.bias");
  EXPECT_THROW(bad.validate(), ParameterError);
  bad = model;
  bad.shapes["stem.conv"] = {2, 3, 3, 1};
  EXPECT_THROW(bad.validate(), ParameterError);
  bad = model;
  bad.act_max_inputs.clear();
  EXPECT_THROW(ResNetInference(deep.ctx, bad, nullptr), ParameterError);
  EXPECT_THROW(ResNetModel::load(THEO_SOURCE_DIR "/CMakeLists.txt"), ParameterError);
}

}  // namespace
}  // namespace theo::test
