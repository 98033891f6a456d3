// The ReLU ResNet (the papers' workload): every value of the network is an op of one LevelProgram
// - linear layers (one level), the components of AppReLU's sign (4, 4, 5 levels for 15-15-27),
// its product with the kept input (one level), additions (none) - and the level planner decides
// every bootstrapping on it, between sign components and of side values too (resnet.h).
//
// Scales: activation a's input z is emitted as x = z / B_a by the layer before (B_a = margin x
// its calibrated max |z|), so AppReLU sees [-1, 1]; its output t (1 + sign t) / 2 lies in [0, 1]
// and stands for relu(z) / B_a. When the next block's identity shortcut adds it to x' = z' / B'
// the gate is scaled by B_a / B' (<= 1, else a constant product does it), so the addition needs
// no level.

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <set>
#include <sstream>

#include "theo/ckks/graph.h"
#include "theo/errors.h"
#include "theo/ring/op_scope.h"
#include "workloads/resnet_program.h"

namespace theo {

using namespace resnet_detail;

namespace {

// One op of the compiled program, in the planner's order (same index as the LevelProgram op).
struct Step {
  enum class Kind { kLinear, kSign, kProduct, kAdd, kScale, kHead };
  Kind kind = Kind::kLinear;
  std::vector<u32> inputs;
  std::size_t layer = 0;                    // kLinear / kHead: index into layers
  const ChebyshevSeries* series = nullptr;  // kSign
  double scale = 0;                         // kScale
  std::string progress;                     // a progress step ends here
};

struct ReluResNet final : ResNetInference::Impl {
  CompositeSign sign;                 // set by compile()
  std::vector<double> bounds;         // B_a
  std::deque<ChebyshevSeries> gates;  // per activation (stable addresses)
  std::vector<std::unique_ptr<CnnLinearLayer>> layers;
  LevelProgram program{1};
  std::vector<Step> steps;
  std::vector<long> last_use;  // per value: the last op reading it

  void compile();
  Ciphertext infer(const Evaluator& ev, const Ciphertext& ct, const BootstrappingKeys& keys,
                   const ResNetInference::Progress& progress, u32* bootstraps) const override;
  void run_ops(u32 k0, u32 k1, std::vector<std::optional<Ciphertext>>& val, const Evaluator& ev,
               const BootstrappingKeys& keys, const ResNetInference::Progress& progress, u32& done,
               u32* bootstraps) const;
  std::unique_ptr<ResNetGraphs> capture(const Evaluator& ev, const BootstrappingKeys& keys,
                                        const Ciphertext& example) const override;
  std::vector<double> reference_logits(const std::vector<double>& image) const override {
    return model.logits_with(
        image, [this](u32 a, double z) { return bounds[a] * sign.relu(z / bounds[a]); });
  }
  std::string describe() const override;
  std::string activation_name() const override { return "appRelu-" + sign.name(); }
};

void ReluResNet::compile() {
  sign = options.sign ? *options.sign : CompositeSign::alpha13();
  const Context& c = *ctx;
  const u32 slots = c.max_slots();
  for (const double m : model.act_max_inputs)
    bounds.push_back(options.margin * (m > 0 ? m : 1.0));
  const std::vector<BlockShape> shapes = block_shapes(model);
  const std::vector<u32> comps = sign.component_depths();
  const u32 k_sign = static_cast<u32>(comps.size());

  // Scale of each ReLU's output (relu(z) = scale * ciphertext): B_a divided by the gate factor
  // that lets the next identity shortcut add it without a level.
  auto second_act = [](std::size_t block) { return static_cast<u32>(2 + 2 * block); };
  auto gate_factor = [&](u32 act, std::size_t next_block) {
    if (next_block >= shapes.size()) return 1.0;
    const BlockShape& nb = shapes[next_block];
    if (nb.stride != 1 || nb.in != nb.out) return 1.0;
    return std::min(1.0, bounds[act] / bounds[second_act(next_block)]);
  };

  // ---- pass 1: the program (levels unknown yet) and what each op will be ----
  using Factory = std::function<std::unique_ptr<CnnLinearLayer>(u32 level)>;
  std::vector<Factory> factories;
  auto linear = [&](const std::string& name, u32 in, Factory f, Step::Kind kind) {
    const u32 v = program.add(name, {in}, 1);
    Step st;
    st.kind = kind;
    st.inputs = {in};
    st.layer = factories.size();
    factories.push_back(std::move(f));
    steps.push_back(std::move(st));
    return v;
  };
  auto relu = [&](const std::string& name, u32 x, u32 act, double factor) {
    ChebyshevSeries g = sign.gate_component();
    for (double& co : g.coeffs)
      co *= factor;
    gates.push_back(std::move(g));
    u32 chain = x;
    for (u32 i = 0; i < k_sign; ++i) {
      chain = program.add(name + ".sign" + std::to_string(i + 1), {chain}, comps[i]);
      Step st;
      st.kind = Step::Kind::kSign;
      st.inputs = program.ops().back().inputs;
      st.series = i + 1 < k_sign ? &sign.components()[i] : &gates.back();
      steps.push_back(std::move(st));
    }
    const u32 out = program.add(name + ".product", {x, chain}, 1);
    Step st;
    st.kind = Step::Kind::kProduct;
    st.inputs = {x, chain};
    steps.push_back(std::move(st));
    (void)act;
    counts.ciphertext_products += 1;
    return out;
  };

  input_layout = TensorLayout::dense(model.channels, model.image, model.image, slots);
  TensorLayout layout = input_layout.strided(1, model.widths[0]);
  const LinearTransformOptions lt{0, options.min_keys, std::nullopt};
  // A convolution with its folded batch norm as a linear step from value x: conv(in -> out) of
  // the weights times `scale`, its bias times `bias_scale`.
  auto conv = [&](const std::string& name, u32 x, const TensorLayout& in, const TensorLayout& out,
                  const Conv2dWeights& w, double scale, double bias_scale) {
    return linear(
        name, x,
        [&, w, scale, bias_scale, in, out](u32 level) {
          Encoder enc(ctx);
          return std::make_unique<CnnLinearLayer>(enc, conv2d_matrix(in, out, w, scale),
                                                  conv2d_bias(in, out, w, 0.0, 0.0, bias_scale),
                                                  level, linear_output_period(in, out), out, lt);
        },
        Step::Kind::kLinear);
  };
  // stem
  u32 h;
  double h_scale;
  {
    const Conv2dWeights w = folded_conv(model, "stem.conv", "stem.bn", 1);
    const double s0 = 1 / bounds[0];
    const u32 x0 = conv("stem.conv", 0, input_layout, layout, w, s0, s0);
    const double f = gate_factor(0, 0);
    h = relu("stem.relu", x0, 0, f);
    h_scale = bounds[0] / f;
    steps.back().progress = "stem";
  }
  for (std::size_t bi = 0; bi < shapes.size(); ++bi) {
    const BlockShape& b = shapes[bi];
    const u32 a1 = static_cast<u32>(1 + 2 * bi), a2 = a1 + 1;
    const TensorLayout in = layout, out = layout.strided(b.stride, b.out);
    const Conv2dWeights w1 = folded_conv(model, b.name + ".conv1", b.name + ".bn1", b.stride);
    const double s1 = h_scale / bounds[a1], inv1 = 1 / bounds[a1];
    const u32 x1 = conv(b.name + ".conv1", h, in, out, w1, s1, inv1);
    const u32 y = relu(b.name + ".relu1", x1, a1, 1.0);
    const Conv2dWeights w2 = folded_conv(model, b.name + ".conv2", b.name + ".bn2", 1);
    const double s2 = bounds[a1] / bounds[a2], inv2 = 1 / bounds[a2];
    const u32 z = conv(b.name + ".conv2", y, out, out, w2, s2, inv2);
    const double sc = h_scale / bounds[a2];  // shortcut: x2 gets sc * h
    u32 shortcut = h;
    if (b.stride != 1 || b.in != b.out) {
      shortcut = linear(
          b.name + ".shortcut", h,
          [&, sc, in, out](u32 level) {
            Encoder enc(ctx);
            return std::make_unique<CnnLinearLayer>(enc, shortcut_matrix(in, out, sc),
                                                    std::vector<double>{}, level,
                                                    linear_output_period(in, out), out, lt);
          },
          Step::Kind::kLinear);
    } else if (std::abs(sc - 1) > 1e-12) {
      shortcut = program.add(b.name + ".shortcut", {h}, 1);
      Step st;
      st.kind = Step::Kind::kScale;
      st.inputs = {h};
      st.scale = sc;
      steps.push_back(std::move(st));
      counts.constant_products += 1;
    }
    const u32 x2 = program.add(b.name + ".add", {z, shortcut}, 0);
    {
      Step st;
      st.kind = Step::Kind::kAdd;
      st.inputs = {z, shortcut};
      steps.push_back(std::move(st));
    }
    const double f = gate_factor(a2, bi + 1);
    h = relu(b.name + ".relu2", x2, a2, f);
    h_scale = bounds[a2] / f;
    steps.back().progress = b.name;
    layout = out;
  }
  head_layout = layout;
  {
    const u32 hw = layout.height * layout.width;
    const TensorLayout hl = layout;
    const double hs = h_scale;
    linear(
        "head", h,
        [&, hl, hs, hw, slots](u32 level) {
          Encoder enc(ctx);
          return std::make_unique<CnnLinearLayer>(
              enc, pooled_fc_matrix(hl, model.classes, model.tensors.at("fc.weight"), hs / hw),
              head_bias(model, hl, 0.0, slots), level, hl.period, hl, lt);
        },
        Step::Kind::kHead);
    steps.back().progress = "head";
  }

  // ---- the plan: every bootstrapping, before any encoding ----
  const LevelBudget budget = boot ? LevelBudget::of(*boot) : LevelBudget::without_bootstrapping();
  const std::vector<u32> start{input_level};
  program_plan = budget.plan(program, start);
  counts.bootstraps = program_plan->bootstraps;
  last_use.assign(program.values(), -1);
  for (std::size_t k = 0; k < program.ops().size(); ++k)
    for (const u32 v : program.ops()[k].inputs)
      last_use[v] = static_cast<long>(k);

  // Progress steps as a LevelPlan (levels in and out, bootstrapping anywhere inside).
  {
    plan = LevelPlan{};
    plan.start_level = input_level;
    plan.refreshed_level = budget.refreshed_level();
    plan.bootstraps = program_plan->bootstraps;
    LevelPlan::Entry e;
    bool open = false;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const ProgramPlan::Entry& pe = program_plan->ops[k];
      if (!open) {
        e = LevelPlan::Entry{};
        e.level_in = pe.input_levels.front();
        open = true;
      }
      e.depth += pe.depth;
      if (!pe.bootstrap_before.empty()) e.bootstrap_before = true;
      if (!steps[k].progress.empty()) {
        e.name = steps[k].progress;
        e.level_out = pe.level_out;
        plan.steps.push_back(e);
        open = false;
      }
    }
  }

  // ---- pass 2: encode every linear layer at its planned level ----
  std::set<int> rots;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    Step& st = steps[k];
    if (st.kind != Step::Kind::kLinear && st.kind != Step::Kind::kHead) continue;
    const u32 level = program_plan->ops[k].input_levels.front();
    layers.push_back(factories[st.layer](level));
    st.layer = layers.size() - 1;
    const CnnLinearLayer& l = *layers.back();
    counts.linear_layers += 1;
    counts.diagonals += l.diagonals();
    counts.key_switches += l.key_switches();
    const LevelData& ld = c.level(l.level());
    counts.plaintext_bytes += static_cast<double>(l.diagonals()) *
                              (ld.limbs + (options.min_keys ? 0 : c.alpha())) * c.n() * 4.0;
    for (const int r : l.rotations())
      rots.insert(r);
  }
  for (const int r : spatial_sum_rotations(head_layout)) {
    rots.insert(r);
    counts.key_switches += 1;
  }
  counts.rotations.assign(rots.begin(), rots.end());
}

// Runs ops [k0, k1) on `val` (value id -> ciphertext), bootstrapping as the plan says; frees
// every value after its last use. `done` counts the progress steps reported.
void ReluResNet::run_ops(u32 k0, u32 k1, std::vector<std::optional<Ciphertext>>& val,
                         const Evaluator& ev, const BootstrappingKeys& keys,
                         const ResNetInference::Progress& progress, u32& done,
                         u32* bootstraps) const {
  const RelinKey& rlk = keys.relin;
  const GaloisKeys& gk = keys.galois;
  const PolynomialEvaluator poly(ev, rlk);
  const u32 total = static_cast<u32>(plan.steps.size());
  auto matched = [&](const Ciphertext& a, const Ciphertext& b,
                     std::optional<Ciphertext>& tmp) -> const Ciphertext& {
    if (a.level() <= b.level()) return a;
    tmp = ev.level_down(a, b.level());
    return *tmp;
  };
  for (u32 k = k0; k < k1; ++k) {
    const Step& st = steps[k];
    for (const u32 v : program_plan->ops[k].bootstrap_before) {
      const OpScope scope("Boot");
      val[v] = boot->bootstrap(*val[v], keys);
      if (bootstraps) ++*bootstraps;
      // The refreshed scale misses the level's default by ~2^-42 (rounding in the
      // bootstrapper's long double constants); a sign component would take that for a foreign
      // scale and spend a level on an affine map, and the composite's squarings multiply the
      // deviation past PolynomialEvaluator's 2^-40 tolerance. Relabelling it changes the message
      // by that 2^-42, far below the noise.
      const long double want = ctx->default_scale(val[v]->level());
      if (std::fabs(val[v]->scale() / want - 1) < 0x1p-30L) val[v]->set_scale(want);
    }
    const Ciphertext& x = *val[st.inputs[0]];
    Ciphertext out;
    switch (st.kind) {
      case Step::Kind::kLinear: {
        const OpScope scope("Linear");
        out = layers[st.layer]->apply(ev, x, gk);
        break;
      }
      case Step::Kind::kSign: {
        const OpScope scope("Activation");
        out = poly.evaluate(x, *st.series);
        break;
      }
      case Step::Kind::kProduct: {
        const OpScope scope("Activation");
        const Ciphertext& g = *val[st.inputs[1]];
        std::optional<Ciphertext> ta, tb;
        out = ev.multiply_relin_rescale(matched(x, g, ta), matched(g, x, tb), rlk);
        break;
      }
      case Step::Kind::kAdd: {
        const OpScope scope("Shortcut");
        const Ciphertext& y = *val[st.inputs[1]];
        std::optional<Ciphertext> ta, tb;
        out = ev.add(matched(x, y, ta), matched(y, x, tb));
        break;
      }
      case Step::Kind::kScale: {
        const OpScope scope("Shortcut");
        out = ev.rescale(ev.multiply_const(x, st.scale));
        break;
      }
      case Step::Kind::kHead: {
        const OpScope scope("Head");
        out = layers[st.layer]->apply(ev, spatial_sum(ev, x, head_layout, gk), gk);
        break;
      }
    }
    if (out.level() != program_plan->ops[k].level_out) {
      throw LevelError("ResNetInference: op '" + program.ops()[k].name + "' ended at level " +
                       std::to_string(out.level()) + ", the plan says " +
                       std::to_string(program_plan->ops[k].level_out));
    }
    val[program.inputs() + k] = std::move(out);
    for (const u32 v : program.ops()[k].inputs)
      if (last_use[v] == static_cast<long>(k)) val[v].reset();
    if (!st.progress.empty() && progress) progress(st.progress, ++done, total);
  }
}

Ciphertext ReluResNet::infer(const Evaluator& ev, const Ciphertext& ct0,
                             const BootstrappingKeys& keys,
                             const ResNetInference::Progress& progress, u32* bootstraps) const {
  std::vector<std::optional<Ciphertext>> val(program.values());
  val[0] = ct0.level() > input_level ? ev.level_down(ct0, input_level) : ev.clone(ct0);
  u32 done = 0;
  run_ops(0, static_cast<u32>(steps.size()), val, ev, keys, progress, done, bootstraps);
  return std::move(*val.back());
}

// One Graph per progress unit (stem, each block, head), captured in order on persistent values:
// a unit's graph reads the outputs of the graphs before it. The units form one CaptureSequence:
// run() replays them in capture order and copies the head's output before the next run, so they
// share one unit's worth of scratch instead of holding every unit's.
class ReluGraphs final : public ResNetGraphs {
 public:
  ReluGraphs(const ReluResNet& net, const Evaluator& ev, const BootstrappingKeys& keys,
             const Ciphertext& example)
      : net_(net), input_(ev.clone(example)), val_(net.program.values()), sequence_(net.ctx) {
    u32 k0 = 0;
    for (u32 k = 0; k < net.steps.size(); ++k) {
      if (net.steps[k].progress.empty()) continue;
      const u32 a = k0, b = k + 1;
      // Everything the function reads lives in this object or outlives it (the graph may run it
      // again op by op when graphs are off).
      graphs_.push_back(sequence_.capture([this, &ev, &keys, a, b] {
        if (a == 0) {
          val_[0] = input_.level() > net_.input_level ? ev.level_down(input_, net_.input_level)
                                                      : ev.clone(input_);
        }
        net_.run_ops(a, b, val_, ev, keys, none_, done_, &counted_);
      }));
      k0 = b;
    }
    bootstraps_ = counted_;
  }
  Ciphertext run(const Ciphertext& ct) override {
    graphs_.front().set_input(input_, ct);
    for (Graph& g : graphs_)
      g.replay();
    return Evaluator(net_.ctx).clone(*val_.back());
  }
  std::size_t units() const override { return graphs_.size(); }
  std::size_t kernel_count() const override {
    std::size_t n = 0;
    for (const Graph& g : graphs_)
      n += g.kernel_count();
    return n;
  }
  u32 bootstraps_per_run() const override { return bootstraps_; }
  std::size_t workspace_bytes() const override { return sequence_.workspace_bytes(); }

 private:
  const ReluResNet& net_;
  Ciphertext input_;
  std::vector<std::optional<Ciphertext>> val_;
  CaptureSequence sequence_;
  std::vector<Graph> graphs_;
  const ResNetInference::Progress none_;
  u32 done_ = 0;
  u32 counted_ = 0;     // bootstrap calls the functions made (again at every eager replay)
  u32 bootstraps_ = 0;  // those of the capture: what each run replays
};

std::unique_ptr<ResNetGraphs> ReluResNet::capture(const Evaluator& ev,
                                                  const BootstrappingKeys& keys,
                                                  const Ciphertext& example) const {
  return std::make_unique<ReluGraphs>(*this, ev, keys, example);
}

std::string ReluResNet::describe() const {
  std::ostringstream o;
  o << "ResNet: " << model.channels << "x" << model.image << "x" << model.image << " input, widths";
  for (const u32 w : model.widths)
    o << " " << w;
  o << ", " << model.blocks_per_stage << " block(s) per stage, " << model.classes
    << " classes; activation " << activation_name() << " (sign error 2^" << std::log2(sign.error())
    << " for |x| >= 2^" << std::log2(sign.eps()) << ", depth " << sign.depth() << " + 1)\n";
  o << "layers " << counts.linear_layers << ", diagonals " << counts.diagonals
    << ", key switches (layers, outside bootstrapping) " << counts.key_switches << ", ReLUs "
    << counts.ciphertext_products << ", bootstrappings " << counts.bootstraps << " ("
    << program_plan->side_bootstraps << " of a side value), distinct rotations "
    << counts.rotations.size() << ", encoded weights " << counts.plaintext_bytes / 1e9 << " GB\n";
  o << program_plan->describe(program);
  return o.str();
}

}  // namespace

std::unique_ptr<ResNetInference::Impl> compile_relu_resnet(ContextPtr ctx, const ResNetModel& model,
                                                           const Bootstrapper* boot,
                                                           u32 input_level,
                                                           const ResNetOptions& options) {
  return compile_network<ReluResNet>(std::move(ctx), model, boot, input_level, options);
}

}  // namespace theo
