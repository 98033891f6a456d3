#pragma once
// Encrypted inference of a CIFAR-style ResNet (ResNet-20: 32x32x3 input, 3 stages of 3 basic
// blocks at 16 / 32 / 64 channels, global average pooling, a 10-way fully connected layer) on one
// ciphertext per image (python/theodosian/cnn.py writes the model file). Two networks:
//
//   * ReLU (the papers' workload): trained with exact ReLU, evaluated with AppReLU
//     relu(z) ~ B t (1 + sign(t)) / 2, t = z / B (circuits/composite_sign.h: degrees 15, 15, 27,
//     13 levels + 1 for the product), B = margin x the calibrated max |z| of that activation,
//     folded into the layer before. Every value of the network is a LevelProgram op (convs, sign
//     components, products, additions) and the level planner places every bootstrapping, between
//     the components of a sign too, refreshing whichever live value needs it (a ReLU's input kept
//     for its product, a block's input kept for the shortcut). An identity shortcut costs no
//     level: the ReLU that makes the block input emits it at the scale the addition wants (its
//     gate polynomial scaled), whenever that keeps it in [-1, 1].
//   * Quadratic (the library's fast variant, not a ReLU network): act(z) = c0 + c1 z + c2 z^2
//     trained with the network, one level per activation; described below.
//
// The quadratic program (circuits/cnn.h does the layers):
//   * every feature map is one ciphertext in the multiplexed layout of Lee et al. (ICML 2022);
//     convolutions, the strided ones and the parameter-free "option A" shortcut are slot matrices
//     evaluated with BSGS and double hoisting, one level each;
//   * act(z) = c0 + c1 z + c2 z^2 costs one ciphertext product: the layers that produce z emit
//     u = s (z + c1 / 2 c2) instead (the scale s and the shift folded into their weights and
//     bias, batch-norm too), the activation squares u, and act(z) = (c2 / s^2) u^2 + c0 - c1^2 /
//     4 c2 is carried as an affine representation (scale, offset) that the next layers fold in
//     turn. s puts |u| <= 1 / margin over the calibration images, so every ciphertext stays in
//     [-1, 1] (what bootstrapping needs) without spending a level on it;
//   * the shortcut of a block takes its scalar by a constant product (one level) or its matrix,
//     off the critical path, and meets the main branch at its level;
//   * depth: stem 2, basic block 4, pooling + FC 1 (ResNet-20: 39 levels). The level planner
//     (circuits/level_planner.h) places the bootstrappings between steps: with bootparam_40
//     (16 levels fresh, 13 after each bootstrapping) 2 for ResNet-20.

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "theo/circuits/bootstrapper.h"
#include "theo/circuits/cnn.h"
#include "theo/circuits/composite_sign.h"
#include "theo/circuits/level_planner.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/encryptor.h"
#include "theo/ckks/evaluator.h"

namespace theo {

// The trained network (weights as stored; batch-norm unfolded).
struct ResNetModel {
  enum class Activation { kQuadratic, kRelu };
  Activation activation = Activation::kQuadratic;
  u32 channels = 3;
  u32 image = 32;
  std::vector<u32> widths{16, 32, 64};
  u32 blocks_per_stage = 3;
  u32 classes = 10;
  std::array<double, 3> act{0.25, 0.5, 0.125};  // c0, c1, c2 (quadratic networks)
  double act_interval = 4;                      // the fit's interval [-B, B]
  double act_max_error = 0.25;                  // its max error against ReLU there
  double bn_eps = 1e-5;
  std::map<std::string, std::vector<double>> tensors;
  std::map<std::string, std::vector<u32>> shapes;
  // Max |input| of every activation (stem, then two per block) over the calibration images.
  std::vector<double> act_max_inputs;
  std::string dataset;
  std::optional<double> train_accuracy;
  std::optional<double> test_accuracy;

  // The model file of theodosian.cnn (ParameterError naming what is wrong: magic, header,
  // truncated data, missing tensors, shapes, non-finite values).
  static ResNetModel load(const std::string& path);
  // A model with random weights and batch-norm statistics (tests), calibrated on random images.
  static ResNetModel random(u32 channels, u32 image, std::vector<u32> widths, u32 blocks,
                            u32 classes, u64 seed, Activation activation = Activation::kQuadratic);

  u32 activations() const { return 1 + 2 * blocks(); }
  u32 blocks() const { return static_cast<u32>(widths.size()) * blocks_per_stage; }
  std::size_t input_size() const { return static_cast<std::size_t>(channels) * image * image; }
  // Every tensor present with its shape, finite values, activation ranges (ParameterError).
  void validate() const;

  // Plaintext reference in double precision, eval-mode batch-norm: the logits of one image
  // (C x H x W, row-major) with the model's activation (the quadratic, or exact ReLU).
  // `activation_inputs` (optional) receives max |input| per activation.
  std::vector<double> logits(const std::vector<double>& image,
                             std::vector<double>* activation_inputs = nullptr) const;
  // The same network with activation `act(index, z)` (index: stem 0, then two per block).
  using ActivationFn = std::function<double(u32 index, double z)>;
  std::vector<double> logits_with(const std::vector<double>& image, const ActivationFn& act,
                                  std::vector<double>* activation_inputs = nullptr) const;
  // Sets act_max_inputs to the max over `images` (each C x H x W).
  void calibrate(const std::vector<std::vector<double>>& images);
};

struct ResNetOptions {
  // Activation inputs are scaled to |u| <= 1 / margin over the calibration images.
  double margin = 1.25;
  // Linear layers in min-keys mode (CnnLinearLayer): ~30 shared rotation keys instead of one per
  // distinct BSGS step and weights over Q_l only, for GPUs whose memory does not hold the keys
  // and double-hoisted weights of ResNet-20 (about 50 GB of weights at N = 2^16).
  bool min_keys = false;
  // Take the midpoint of each bootstrapped activation's range out before bootstrapping and put it
  // back after (Bootstrapper::bootstrap with a center). Off only to measure what it buys.
  bool center_bootstrapping = true;
  // ReLU networks: the sign AppReLU is built on (empty: CompositeSign::alpha13()).
  std::optional<CompositeSign> sign;
};

// Counts of one inference.
struct ResNetCounts {
  u32 bootstraps = 0;
  u32 linear_layers = 0;
  u64 diagonals = 0;     // plaintext products in the linear layers
  u32 key_switches = 0;  // rotations outside bootstrapping (baby + giant + replication + pool)
  u32 ciphertext_products = 0;  // quadratic: the activations; ReLU: the AppReLU products
  u32 constant_products = 0;    // identity-shortcut scalings
  double plaintext_bytes = 0;   // the encoded weights (Q_l u P, min-keys: Q_l) at their levels
  std::vector<int> rotations;   // distinct left rotations the layers need keys for
};

// A compiled network captured for replay (ResNetInference::capture): one Graph per static unit
// (ReLU networks: the stem, every block, the head; the quadratic network: one graph), each
// reading the outputs of the ones before. Keeps references to the network, the evaluator and the
// keys, which must outlive it.
class ResNetGraphs {
 public:
  virtual ~ResNetGraphs() = default;
  // Writes `ct` (an encrypted image at the network's input level and scale) into the captured
  // input, replays every graph in order and returns a copy of the output.
  virtual Ciphertext run(const Ciphertext& ct) = 0;
  virtual std::size_t units() const = 0;
  // Kernels one run launches (CUDA kernel nodes; CPU: recorded backend calls).
  virtual std::size_t kernel_count() const = 0;
  // Bootstrappings one run replays (counted as the capture issued them).
  virtual u32 bootstraps_per_run() const = 0;
  // Backend memory the graphs hold (their outputs and shared scratch, CaptureSequence), 0 where
  // not tracked (one graph alone, graphs off).
  virtual std::size_t workspace_bytes() const { return 0; }
};

class ResNetInference {
 public:
  // Compiles the model for `ctx`: plans the levels from `input_level` (default: the context's
  // encryption level), placing bootstrappings with the level planner (`boot` may be null when the
  // parameters hold the whole network), folds every scalar into the layers and encodes them at
  // their levels. ParameterError / LevelError before any encryption work when the model is
  // invalid or deeper than the parameters and bootstrapping can provide.
  ResNetInference(std::shared_ptr<const Context> ctx, const ResNetModel& model,
                  const Bootstrapper* boot, std::optional<u32> input_level = std::nullopt,
                  ResNetOptions options = {});
  ~ResNetInference();

  // The bootstrapping configuration a network of this model wants. ReLU networks bootstrap
  // uncentred values (AppReLU outputs >= 0, the sign's partial results near +-1): without the
  // message scale-up (message_ratio_bits 10, ~q0 / Delta_0 of the 2^40 sets, instead of 7 at
  // 2^15 slots) their constant part keeps ~17 bits instead of ~11
  // (BootstrapConfig::message_ratio_bits); with bootparam_40's primes at N = 2^12 the narrow ReLU
  // network's logits go from 8.0 to 14.0 bits. Quadratic networks centre their bootstrapped
  // values and keep the default.
  static BootstrapConfig bootstrap_config(const ResNetModel& model);

  // Per progress step (stem, each block, head): levels and whether a bootstrapping happens in it.
  const LevelPlan& plan() const;
  // ReLU networks: the planner's program plan (every op, every bootstrapped value); empty
  // otherwise.
  const ProgramPlan& program_plan() const;
  const ResNetCounts& counts() const;
  // "quadratic" or "appRelu-15-15-27".
  std::string activation_name() const;
  // The plaintext model with the activation the encrypted network evaluates (the quadratic, or
  // AppReLU with this network's scales): the exact reference of infer().
  std::vector<double> reference_logits(const std::vector<double>& image) const;
  const TensorLayout& input_layout() const;
  u32 input_level() const;
  std::string describe() const;
  // Left rotations the layers need keys for (add them to the bootstrapping keys).
  std::vector<int> rotations() const { return counts().rotations; }

  // The image (C x H x W) packed in the input layout: ParameterError on a wrong size or a
  // non-finite value.
  std::vector<double> pack_image(const std::vector<double>& image) const;
  Ciphertext encrypt(const Encoder& encoder, Encryptor& encryptor,
                     const std::vector<double>& image) const;

  // The whole network on an encrypted image. `keys`: relinearization and Galois keys for
  // rotations() (and the bootstrapping ones when the plan bootstraps). `progress(step, done,
  // total)` after every planned step (stem, blocks, head).
  // `bootstraps` (optional) receives the bootstrap calls made, counted as they are issued.
  using Progress = std::function<void(const std::string& step, u32 done, u32 total)>;
  Ciphertext infer(const Evaluator& ev, const Ciphertext& ct, const BootstrappingKeys& keys,
                   const Progress& progress = {}, u32* bootstraps = nullptr) const;
  // The network captured as graphs (ResNetGraphs), for images like `example` (same level and
  // scale). Runs nothing; the first run() does the work.
  std::unique_ptr<ResNetGraphs> capture(const Evaluator& ev, const BootstrappingKeys& keys,
                                        const Ciphertext& example) const;
  // Logits from the decrypted output slots.
  std::vector<double> logits(const std::vector<double>& output_slots) const;
  std::vector<double> decrypt_logits(const Encoder& encoder, const Decryptor& decryptor,
                                     const Ciphertext& out) const;

  // The compiled network (defined in src/workloads: one per activation kind).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace theo
