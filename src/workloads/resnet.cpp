#include "theo/workloads/resnet.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "theo/ckks/graph.h"
#include "theo/errors.h"
#include "theo/ring/op_scope.h"
#include "workloads/resnet_program.h"

namespace theo {

using namespace resnet_detail;

// ---- ResNetInference -----------------------------------------------------------------------

namespace {

// The fast variant: a trained quadratic activation, one level each (see resnet.h).
struct QuadraticResNet final : ResNetInference::Impl {
  struct Block {
    std::string name;
    std::unique_ptr<CnnLinearLayer> conv1, conv2, shortcut_matrix;
    double shortcut_scale = 0;  // identity shortcut: constant product
    u32 level = 0;              // level the block starts at
  };
  std::unique_ptr<CnnLinearLayer> stem;
  std::vector<Block> blocks;
  std::unique_ptr<CnnLinearLayer> fc;
  // Per plan step: the midpoint of the range the ciphertext entering it takes (u^2 of the last
  // activation before it), subtracted before a bootstrapping there and added back after.
  std::vector<double> boot_center;

  void compile();
  Ciphertext infer(const Evaluator& ev, const Ciphertext& ct, const BootstrappingKeys& keys,
                   const ResNetInference::Progress& progress, u32* bootstraps) const override;
  std::unique_ptr<ResNetGraphs> capture(const Evaluator& ev, const BootstrappingKeys& keys,
                                        const Ciphertext& example) const override;
  std::vector<double> reference_logits(const std::vector<double>& image) const override {
    return model.logits(image);
  }
  std::string describe() const override;
  std::string activation_name() const override { return "quadratic"; }
};

}  // namespace

ResNetInference::~ResNetInference() = default;

BootstrapConfig ResNetInference::bootstrap_config(const ResNetModel& model) {
  BootstrapConfig c;
  // 2^10 ~ q0 / Delta_0 of the 2^40 sets: no scale-up.
  if (model.activation == ResNetModel::Activation::kRelu) c.message_ratio_bits = 10;
  return c;
}

ResNetInference::ResNetInference(std::shared_ptr<const Context> ctx, const ResNetModel& model,
                                 const Bootstrapper* boot, std::optional<u32> input_level,
                                 ResNetOptions options) {
  model.validate();
  if (model.act_max_inputs.empty()) {
    throw ParameterError("ResNetInference: the model has no activation ranges (calibrate it)");
  }
  if (!(options.margin >= 1)) throw ParameterError("ResNetInference: margin below 1");
  if (!ctx) throw ContextError("ResNetInference: the Context is null");
  const u32 level = input_level.value_or(ctx->default_encryption_level());
  if (level > ctx->max_level()) {
    throw LevelError("ResNetInference: input level " + std::to_string(level) +
                     " above the top level " + std::to_string(ctx->max_level()));
  }
  if (boot && boot->slots() != ctx->max_slots()) {
    throw ParameterError("ResNetInference: the bootstrapper refreshes " +
                         std::to_string(boot->slots()) + " slots, the network uses " +
                         std::to_string(ctx->max_slots()));
  }
  if (model.activation == ResNetModel::Activation::kRelu) {
    impl_ = compile_relu_resnet(std::move(ctx), model, boot, level, options);
    return;
  }
  impl_ = compile_network<QuadraticResNet>(std::move(ctx), model, boot, level, options);
}

void QuadraticResNet::compile() {
  QuadraticResNet& s = *this;
  const Context& c = *s.ctx;

  // ---- levels: the planner decides where bootstrapping goes, before any encoding ----
  const std::vector<BlockShape> shapes = block_shapes(model);
  std::vector<LevelStep> steps;
  steps.push_back({"stem", 2});
  for (const BlockShape& b : shapes)
    steps.push_back({b.name, 4});
  steps.push_back({"head", 1});
  const LevelBudget budget = boot ? LevelBudget::of(*boot) : LevelBudget::without_bootstrapping();
  s.plan = budget.plan(steps, s.input_level);
  s.counts.bootstraps = s.plan.bootstraps;

  // ---- layouts and folding ----
  const u32 slots = c.max_slots();
  s.input_layout = TensorLayout::dense(model.channels, model.image, model.image, slots);
  const auto [c0, c1, c2] = model.act;
  const double beta = c1 / (2 * c2);
  const double gamma_out = c0 - c1 * c1 / (4 * c2);
  auto act_scale = [&](u32 a) {
    return 1.0 / (options.margin * (model.act_max_inputs.at(a) + std::abs(beta)));
  };
  // A squared activation u^2 = (s (z + beta))^2 over |z| <= max input lies in [lo, hi] far from 0
  // (beta = 16 for x + x^2/32): its midpoint goes out before bootstrapping (Bootstrapper::bootstrap
  // with a center). Step k >= 1 starts from the square of activation 2 (k - 1); the input image
  // (step 0) is bootstrapped as it is.
  s.boot_center.assign(s.plan.steps.size(), 0.0);
  for (std::size_t k = 1; options.center_bootstrapping && k < s.plan.steps.size(); ++k) {
    const u32 a = static_cast<u32>(2 * (k - 1));
    if (a >= model.act_max_inputs.size()) break;
    const double m = model.act_max_inputs[a];
    const double lo = act_scale(a) * (beta - m), hi = act_scale(a) * (beta + m);
    const double sq_hi = std::max(lo * lo, hi * hi);
    const double sq_lo = (lo <= 0 && hi >= 0) ? 0.0 : std::min(lo * lo, hi * hi);
    s.boot_center[k] = (sq_lo + sq_hi) / 2;
  }
  Encoder encoder(s.ctx);
  const LinearTransformOptions lt{0, options.min_keys, std::nullopt};
  std::set<int> rots;
  auto account = [&](const CnnLinearLayer& l) {
    s.counts.linear_layers += 1;
    s.counts.diagonals += l.diagonals();
    s.counts.key_switches += l.key_switches();
    const LevelData& ld = c.level(l.level());
    s.counts.plaintext_bytes +=
        static_cast<double>(l.diagonals()) * (ld.limbs + c.alpha()) * c.n() * 4.0;
    for (const int r : l.rotations())
      rots.insert(r);
  };

  u32 act_index = 0;
  // stem
  TensorLayout layout = s.input_layout.strided(1, model.widths[0]);
  {
    const Conv2dWeights w = folded_conv(model, "stem.conv", "stem.bn", 1);
    const double sc = act_scale(act_index++);
    s.stem = std::make_unique<CnnLinearLayer>(
        encoder, conv2d_matrix(s.input_layout, layout, w, sc),
        conv2d_bias(s.input_layout, layout, w, 0.0, beta, sc), s.plan.steps[0].level_in,
        linear_output_period(s.input_layout, layout), layout, lt);
    account(*s.stem);
  }
  s.counts.ciphertext_products += 1;
  Affine h{c2 / std::pow(act_scale(0), 2), gamma_out};
  for (std::size_t bi = 0; bi < shapes.size(); ++bi) {
    const BlockShape& b = shapes[bi];
    const u32 level = s.plan.steps[bi + 1].level_in;
    Block blk;
    blk.name = b.name;
    blk.level = level;
    const TensorLayout out = layout.strided(b.stride, b.out);
    // conv1 -> u1 = s1 (z1 + beta)
    const Conv2dWeights w1 = folded_conv(model, b.name + ".conv1", b.name + ".bn1", b.stride);
    const double s1 = act_scale(act_index++);
    blk.conv1 =
        std::make_unique<CnnLinearLayer>(encoder, conv2d_matrix(layout, out, w1, s1 * h.scale),
                                         conv2d_bias(layout, out, w1, h.offset, beta, s1), level,
                                         linear_output_period(layout, out), out, lt);
    account(*blk.conv1);
    const Affine h1{c2 / (s1 * s1), gamma_out};
    // conv2 + shortcut -> u2 = s2 (z2 + shortcut + beta)
    const Conv2dWeights w2 = folded_conv(model, b.name + ".conv2", b.name + ".bn2", 1);
    const double s2 = act_scale(act_index++);
    std::vector<double> bias2 = conv2d_bias(out, out, w2, h1.offset, beta, s2);
    {
      // The shortcut's constant part: s2 * h.offset on the channels it carries.
      std::vector<double> chw(static_cast<std::size_t>(b.out) * out.height * out.width, 0.0);
      for (u32 ch = 0; ch < b.in; ++ch)
        for (u32 i = 0; i < out.height * out.width; ++i)
          chw[static_cast<std::size_t>(ch) * out.height * out.width + i] = s2 * h.offset;
      TensorLayout rep = out;
      rep.period = linear_output_period(out, out);
      const std::vector<double> packed = rep.pack(chw);
      for (std::size_t i = 0; i < bias2.size(); ++i)
        bias2[i] += packed[i];
    }
    blk.conv2 =
        std::make_unique<CnnLinearLayer>(encoder, conv2d_matrix(out, out, w2, s2 * h1.scale), bias2,
                                         level - 2, linear_output_period(out, out), out, lt);
    account(*blk.conv2);
    if (b.stride == 1 && b.in == b.out) {
      blk.shortcut_scale = s2 * h.scale;
      s.counts.constant_products += 1;
    } else {
      blk.shortcut_matrix = std::make_unique<CnnLinearLayer>(
          encoder, shortcut_matrix(layout, out, s2 * h.scale), std::vector<double>{}, level,
          linear_output_period(layout, out), out, lt);
      account(*blk.shortcut_matrix);
    }
    s.counts.ciphertext_products += 2;
    h = Affine{c2 / (s2 * s2), gamma_out};
    layout = out;
    s.blocks.push_back(std::move(blk));
  }
  // head: rotate-and-sum pooling, then the FC on the sums.
  s.head_layout = layout;
  {
    const u32 hw = layout.height * layout.width;
    const auto& fw = model.tensors.at("fc.weight");
    s.fc = std::make_unique<CnnLinearLayer>(
        encoder, pooled_fc_matrix(layout, model.classes, fw, h.scale / hw),
        head_bias(model, layout, h.offset, slots), s.plan.steps.back().level_in, layout.period,
        layout, lt);
    account(*s.fc);
    for (const int r : spatial_sum_rotations(layout)) {
      rots.insert(r);
      s.counts.key_switches += 1;
    }
  }
  s.counts.rotations.assign(rots.begin(), rots.end());
}

const LevelPlan& ResNetInference::plan() const {
  return impl_->plan;
}
const ProgramPlan& ResNetInference::program_plan() const {
  static const ProgramPlan kNone;
  return impl_->program_plan ? *impl_->program_plan : kNone;
}
std::string ResNetInference::activation_name() const {
  return impl_->activation_name();
}
std::vector<double> ResNetInference::reference_logits(const std::vector<double>& image) const {
  return impl_->reference_logits(image);
}
const ResNetCounts& ResNetInference::counts() const {
  return impl_->counts;
}
const TensorLayout& ResNetInference::input_layout() const {
  return impl_->input_layout;
}
u32 ResNetInference::input_level() const {
  return impl_->input_level;
}

std::string ResNetInference::describe() const {
  return impl_->describe();
}

std::string QuadraticResNet::describe() const {
  const QuadraticResNet& s = *this;
  std::ostringstream o;
  o << "ResNet: " << s.model.channels << "x" << s.model.image << "x" << s.model.image
    << " input, widths";
  for (const u32 w : s.model.widths)
    o << " " << w;
  o << ", " << s.model.blocks_per_stage << " block(s) per stage, " << s.model.classes
    << " classes; activation " << s.model.act[0] << " + " << s.model.act[1] << " x + "
    << s.model.act[2] << " x^2\n";
  o << "layers " << s.counts.linear_layers << ", diagonals " << s.counts.diagonals
    << ", key switches (outside bootstrapping) " << s.counts.key_switches
    << ", ciphertext products " << s.counts.ciphertext_products << ", bootstrappings "
    << s.counts.bootstraps << ", distinct rotations " << s.counts.rotations.size()
    << ", encoded weights " << s.counts.plaintext_bytes / 1e9 << " GB\n";
  o << s.plan.describe();
  return o.str();
}

std::vector<double> ResNetInference::pack_image(const std::vector<double>& image) const {
  const ResNetModel& m = impl_->model;
  if (image.size() != m.input_size()) {
    throw ParameterError("ResNetInference: image of " + std::to_string(image.size()) +
                         " values, the model takes " + std::to_string(m.channels) + "x" +
                         std::to_string(m.image) + "x" + std::to_string(m.image) + " = " +
                         std::to_string(m.input_size()));
  }
  for (std::size_t i = 0; i < image.size(); ++i)
    if (!std::isfinite(image[i])) {
      throw ParameterError("ResNetInference: image value " + std::to_string(i) + " is not finite");
    }
  return impl_->input_layout.pack(image);
}

Ciphertext ResNetInference::encrypt(const Encoder& encoder, Encryptor& encryptor,
                                    const std::vector<double>& image) const {
  const std::vector<double> packed = pack_image(image);
  return encryptor.encrypt(encoder.encode(std::span<const double>(packed), impl_->input_level));
}

Ciphertext ResNetInference::infer(const Evaluator& ev, const Ciphertext& ct0,
                                  const BootstrappingKeys& keys, const Progress& progress,
                                  u32* bootstraps) const {
  if (ct0.level() < impl_->input_level) {
    throw LevelError("ResNetInference: the input is at level " + std::to_string(ct0.level()) +
                     ", the network was compiled for level " + std::to_string(impl_->input_level));
  }
  if (bootstraps) *bootstraps = 0;
  return impl_->infer(ev, ct0, keys, progress, bootstraps);
}

std::unique_ptr<ResNetGraphs> ResNetInference::capture(const Evaluator& ev,
                                                       const BootstrappingKeys& keys,
                                                       const Ciphertext& example) const {
  if (example.level() < impl_->input_level) {
    throw LevelError("ResNetInference::capture: the example is at level " +
                     std::to_string(example.level()) + ", the network was compiled for level " +
                     std::to_string(impl_->input_level));
  }
  return impl_->capture(ev, keys, example);
}

Ciphertext QuadraticResNet::infer(const Evaluator& ev, const Ciphertext& ct0,
                                  const BootstrappingKeys& keys,
                                  const ResNetInference::Progress& progress,
                                  u32* bootstraps) const {
  const QuadraticResNet& s = *this;
  const RelinKey& rlk = keys.relin;
  const GaloisKeys& gk = keys.galois;
  const u32 total = static_cast<u32>(s.plan.steps.size());
  auto refresh = [&](Ciphertext& ct, std::size_t step) {
    if (!s.plan.steps[step].bootstrap_before) return;
    const OpScope scope("Boot");
    ct = s.boot->bootstrap(ct, keys, s.boot_center[step]);
    if (bootstraps) ++*bootstraps;
  };
  auto square = [&](const Ciphertext& u) {
    const OpScope scope("Activation");
    return ev.multiply_relin_rescale(u, u, rlk);
  };
  auto linear = [&](const CnnLinearLayer& l, const Ciphertext& x) {
    const OpScope scope("Linear");
    return l.apply(ev, x, gk);
  };
  Ciphertext ct = ev.clone(ct0);
  refresh(ct, 0);
  ct = square(linear(*s.stem, ct));
  if (progress) progress("stem", 1, total);
  for (std::size_t bi = 0; bi < s.blocks.size(); ++bi) {
    const Block& b = s.blocks[bi];
    refresh(ct, bi + 1);
    Ciphertext u1 = square(linear(*b.conv1, ct));
    Ciphertext z = linear(*b.conv2, u1);
    Ciphertext sc;
    {
      const OpScope scope("Shortcut");
      if (b.shortcut_matrix) {
        sc = b.shortcut_matrix->apply(ev, ct, gk);
      } else {
        sc = ev.rescale(ev.multiply_const(ct, b.shortcut_scale));
      }
      ev.add_inplace(z, sc);
    }
    ct = square(z);
    if (progress) progress(b.name, static_cast<u32>(bi + 2), total);
  }
  refresh(ct, s.plan.steps.size() - 1);
  {
    const OpScope scope("Head");
    ct = s.fc->apply(ev, spatial_sum(ev, ct, s.head_layout, gk), gk);
  }
  if (progress) progress("head", total, total);
  return ct;
}

namespace {

// The quadratic network as one graph (its whole program is a few hundred ops).
class QuadraticGraphs final : public ResNetGraphs {
 public:
  QuadraticGraphs(const QuadraticResNet& net, const Evaluator& ev, const BootstrappingKeys& keys,
                  const Ciphertext& example)
      : net_(net), input_(ev.clone(example)) {
    graph_ = net.ctx->capture([this, &ev, &keys] {
      counted_ = 0;
      out_ = net_.infer(ev, input_, keys, {}, &counted_);
    });
    bootstraps_ = counted_;
  }
  Ciphertext run(const Ciphertext& ct) override {
    graph_.set_input(input_, ct);
    graph_.replay();
    return Evaluator(net_.ctx).clone(out_);
  }
  std::size_t units() const override { return 1; }
  std::size_t kernel_count() const override { return graph_.kernel_count(); }
  u32 bootstraps_per_run() const override { return bootstraps_; }

 private:
  const QuadraticResNet& net_;
  Ciphertext input_;
  Ciphertext out_;
  Graph graph_;
  u32 counted_ = 0;
  u32 bootstraps_ = 0;
};

}  // namespace

std::unique_ptr<ResNetGraphs> QuadraticResNet::capture(const Evaluator& ev,
                                                       const BootstrappingKeys& keys,
                                                       const Ciphertext& example) const {
  return std::make_unique<QuadraticGraphs>(*this, ev, keys, example);
}

std::vector<double> ResNetInference::logits(const std::vector<double>& slot_values) const {
  const Impl& s = *impl_;
  std::vector<double> out(s.model.classes);
  for (u32 j = 0; j < s.model.classes; ++j)
    out[j] = slot_values.at(fc_output_slot(s.head_layout, j));
  return out;
}

std::vector<double> ResNetInference::decrypt_logits(const Encoder& encoder,
                                                    const Decryptor& decryptor,
                                                    const Ciphertext& out) const {
  return logits(encoder.decode_real(decryptor.decrypt(out)));
}

}  // namespace theo
