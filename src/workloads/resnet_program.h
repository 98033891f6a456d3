#pragma once
// Internal to the ResNet workload: what the model reader, the quadratic network (resnet.cpp) and
// the ReLU network (resnet_relu.cpp) share. ResNetInference holds one compiled network behind
// ResNetInference::Impl and forwards to it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "theo/workloads/resnet.h"

namespace theo {

namespace resnet_detail {

struct BlockShape {
  std::string name;  // "s1.b0"
  u32 in = 0, out = 0, stride = 1;
};
std::vector<BlockShape> block_shapes(const ResNetModel& m);

// conv + batch-norm folded: w' = w gamma / sqrt(var + eps), b' = beta - gamma mean / sqrt(...).
Conv2dWeights folded_conv(const ResNetModel& m, const std::string& conv, const std::string& bn,
                          u32 stride);

// The option-A shortcut in plaintext: subsample by `stride`, zero channels cin..cout-1.
std::vector<double> option_a_shortcut(const std::vector<double>& h, u32 cin, u32 cout, u32 size,
                                      u32 stride);

// true value = scale * ciphertext value + offset
struct Affine {
  double scale = 1;
  double offset = 0;
};

// The per-slot bias of the FC layer after pooling: fb[j] + offset * sum_c w[j][c] at every
// output slot, replicated every layout period.
std::vector<double> head_bias(const ResNetModel& m, const TensorLayout& layout, double offset,
                              u32 slots);

}  // namespace resnet_detail

// One compiled network (quadratic or ReLU).
struct ResNetInference::Impl {
  virtual ~Impl() = default;

  ContextPtr ctx;
  ResNetModel model;
  ResNetOptions options;
  const Bootstrapper* boot = nullptr;
  LevelPlan plan;  // per progress step (stem, blocks, head): levels and bootstrappings
  std::optional<ProgramPlan> program_plan;  // ReLU networks: every op
  ResNetCounts counts;
  TensorLayout input_layout;
  TensorLayout head_layout;
  u32 input_level = 0;

  // `bootstraps` (optional) counts the bootstrap calls made.
  virtual Ciphertext infer(const Evaluator& ev, const Ciphertext& ct, const BootstrappingKeys& keys,
                           const Progress& progress, u32* bootstraps) const = 0;
  virtual std::unique_ptr<ResNetGraphs> capture(const Evaluator& ev, const BootstrappingKeys& keys,
                                                const Ciphertext& example) const = 0;
  // The plaintext model with the activation the encrypted network evaluates.
  virtual std::vector<double> reference_logits(const std::vector<double>& image) const = 0;
  virtual std::string describe() const = 0;
  virtual std::string activation_name() const = 0;
};

// A network of type Net (an Impl with a compile()) over these inputs, compiled.
template <class Net>
std::unique_ptr<ResNetInference::Impl> compile_network(ContextPtr ctx, const ResNetModel& model,
                                                       const Bootstrapper* boot, u32 input_level,
                                                       const ResNetOptions& options) {
  auto net = std::make_unique<Net>();
  net->ctx = std::move(ctx);
  net->model = model;
  net->options = options;
  net->boot = boot;
  net->input_level = input_level;
  net->compile();
  return net;
}

// The ReLU network (AppReLU through CompositeSign; resnet_relu.cpp).
std::unique_ptr<ResNetInference::Impl> compile_relu_resnet(ContextPtr ctx, const ResNetModel& model,
                                                           const Bootstrapper* boot,
                                                           u32 input_level,
                                                           const ResNetOptions& options);

}  // namespace theo
