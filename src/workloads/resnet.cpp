#include "theo/workloads/resnet.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "theo/errors.h"
#include "theo/ring/op_scope.h"

namespace theo {

namespace {

constexpr char kMagic[8] = {'T', 'H', 'E', 'O', 'C', 'N', 'N', '1'};

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

std::string block_name(u32 stage, u32 block) {
  std::ostringstream s;
  s << 's' << stage << ".b" << block;
  return s.str();
}

struct BlockShape {
  std::string name;
  u32 in = 0, out = 0, stride = 1;
};

std::vector<BlockShape> block_shapes(const ResNetModel& m) {
  std::vector<BlockShape> v;
  u32 cin = m.widths.at(0);
  for (u32 s = 0; s < m.widths.size(); ++s)
    for (u32 b = 0; b < m.blocks_per_stage; ++b) {
      v.push_back({block_name(s, b), cin, m.widths[s], (s > 0 && b == 0) ? 2u : 1u});
      cin = m.widths[s];
    }
  return v;
}

// conv + batch-norm folded: w' = w gamma / sqrt(var + eps), b' = beta - gamma mean / sqrt(...).
Conv2dWeights folded_conv(const ResNetModel& m, const std::string& conv, const std::string& bn,
                          u32 stride) {
  const auto& shape = m.shapes.at(conv);
  Conv2dWeights c;
  c.out_channels = shape[0];
  c.in_channels = shape[1];
  c.kernel = shape[2];
  c.stride = stride;
  c.weight = m.tensors.at(conv);
  c.bias.assign(c.out_channels, 0.0);
  const auto& g = m.tensors.at(bn + ".gamma");
  const auto& be = m.tensors.at(bn + ".beta");
  const auto& mu = m.tensors.at(bn + ".mean");
  const auto& var = m.tensors.at(bn + ".var");
  const std::size_t per = static_cast<std::size_t>(c.in_channels) * c.kernel * c.kernel;
  for (u32 o = 0; o < c.out_channels; ++o) {
    const double f = g[o] / std::sqrt(var[o] + m.bn_eps);
    for (std::size_t i = 0; i < per; ++i)
      c.weight[o * per + i] *= f;
    c.bias[o] = be[o] - f * mu[o];
  }
  return c;
}

std::vector<double> option_a_shortcut(const std::vector<double>& h, u32 cin, u32 cout, u32 size,
                                      u32 stride) {
  const u32 so = size / stride;
  std::vector<double> out(static_cast<std::size_t>(cout) * so * so, 0.0);
  for (u32 c = 0; c < cin; ++c)
    for (u32 y = 0; y < so; ++y)
      for (u32 x = 0; x < so; ++x)
        out[(static_cast<std::size_t>(c) * so + y) * so + x] =
            h[(static_cast<std::size_t>(c) * size + stride * y) * size + stride * x];
  return out;
}

// true value = scale * ciphertext value + offset
struct Affine {
  double scale = 1;
  double offset = 0;
};

}  // namespace

// ---- ResNetModel ---------------------------------------------------------------------------

ResNetModel ResNetModel::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ParameterError("ResNetModel::load: cannot open " + path);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (raw.size() < 12 || std::memcmp(raw.data(), kMagic, 8) != 0) {
    throw ParameterError("ResNetModel::load: " + path + " is not a theodosian CNN model file");
  }
  std::uint32_t hl = 0;
  std::memcpy(&hl, raw.data() + 8, 4);
  if (12 + static_cast<std::size_t>(hl) > raw.size()) {
    throw ParameterError("ResNetModel::load: " + path + ": truncated header");
  }
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(std::string(raw.data() + 12, hl));
  } catch (const std::exception& e) {
    throw ParameterError("ResNetModel::load: " + path + ": bad header: " + e.what());
  }
  const std::size_t data0 = 12 + hl;
  ResNetModel m;
  try {
    if (h.at("format") != "theodosian-cnn" || h.at("arch") != "resnet") {
      throw ParameterError("ResNetModel::load: " + path + ": not a ResNet model");
    }
    m.channels = h.at("input").at(0).get<u32>();
    m.image = h.at("input").at(1).get<u32>();
    if (h.at("input").at(2).get<u32>() != m.image) {
      throw ParameterError("ResNetModel::load: " + path + ": non-square input");
    }
    m.widths = h.at("widths").get<std::vector<u32>>();
    m.blocks_per_stage = h.at("blocks_per_stage").get<u32>();
    m.classes = h.at("classes").get<u32>();
    m.bn_eps = h.value("bn_eps", 1e-5);
    if (h.value("shortcut", std::string("A")) != "A") {
      throw ParameterError("ResNetModel::load: " + path + ": only option-A shortcuts");
    }
    const auto& act = h.at("activation");
    if (act.at("kind") != "quadratic") {
      throw ParameterError("ResNetModel::load: " + path + ": activation kind " +
                           act.at("kind").dump() + " (quadratic supported)");
    }
    const auto c = act.at("coeffs").get<std::vector<double>>();
    if (c.size() != 3) throw ParameterError("ResNetModel::load: 3 activation coefficients");
    m.act = {c[0], c[1], c[2]};
    m.act_interval = act.value("interval", 0.0);
    m.act_max_error = act.value("max_error", 0.0);
    if (h.contains("act_max_inputs")) {
      m.act_max_inputs = h.at("act_max_inputs").get<std::vector<double>>();
    }
    m.dataset = h.value("dataset", std::string());
    if (h.contains("train_accuracy")) m.train_accuracy = h.at("train_accuracy").get<double>();
    if (h.contains("test_accuracy")) m.test_accuracy = h.at("test_accuracy").get<double>();
    for (const auto& t : h.at("tensors")) {
      const std::string name = t.at("name").get<std::string>();
      const auto shape = t.at("shape").get<std::vector<u32>>();
      const std::string dt = t.at("dtype").get<std::string>();
      const std::size_t off = t.at("offset").get<std::size_t>();
      std::size_t count = 1;
      for (const u32 s : shape)
        count *= s;
      const std::size_t width = dt == "f2" ? 2 : dt == "f4" ? 4 : 0;
      if (width == 0) throw ParameterError("ResNetModel::load: dtype " + dt + " of " + name);
      if (data0 + off + count * width > raw.size()) {
        throw ParameterError("ResNetModel::load: " + path + ": tensor " + name +
                             " runs past the end of the file");
      }
      std::vector<double> v(count);
      const char* p = raw.data() + data0 + off;
      for (std::size_t i = 0; i < count; ++i) {
        if (width == 2) {
          std::uint16_t x;
          std::memcpy(&x, p + 2 * i, 2);
          v[i] = half_to_double(x);
        } else {
          float x;
          std::memcpy(&x, p + 4 * i, 4);
          v[i] = x;
        }
      }
      m.tensors[name] = std::move(v);
      m.shapes[name] = shape;
    }
  } catch (const nlohmann::json::exception& e) {
    throw ParameterError("ResNetModel::load: " + path + ": " + e.what());
  }
  m.validate();
  return m;
}

ResNetModel ResNetModel::random(u32 channels, u32 image, std::vector<u32> widths, u32 blocks,
                                u32 classes, u64 seed) {
  ResNetModel m;
  m.channels = channels;
  m.image = image;
  m.widths = std::move(widths);
  m.blocks_per_stage = blocks;
  m.classes = classes;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, 1);
  std::uniform_real_distribution<double> ud(0.5, 1.5);
  auto conv = [&](const std::string& name, u32 o, u32 i) {
    std::vector<double> w(static_cast<std::size_t>(o) * i * 9);
    for (auto& x : w)
      x = nd(rng) * std::sqrt(2.0 / (9.0 * i));
    m.tensors[name] = w;
    m.shapes[name] = {o, i, 3, 3};
  };
  auto bn = [&](const std::string& name, u32 c) {
    std::vector<double> g(c), b(c), mu(c), var(c);
    for (u32 k = 0; k < c; ++k) {
      g[k] = ud(rng);
      b[k] = 0.2 * nd(rng);
      mu[k] = 0.2 * nd(rng);
      var[k] = ud(rng);
    }
    m.tensors[name + ".gamma"] = g;
    m.tensors[name + ".beta"] = b;
    m.tensors[name + ".mean"] = mu;
    m.tensors[name + ".var"] = var;
    for (const char* s : {".gamma", ".beta", ".mean", ".var"})
      m.shapes[name + s] = {c};
  };
  conv("stem.conv", m.widths.at(0), channels);
  bn("stem.bn", m.widths[0]);
  for (const BlockShape& b : block_shapes(m)) {
    conv(b.name + ".conv1", b.out, b.in);
    bn(b.name + ".bn1", b.out);
    conv(b.name + ".conv2", b.out, b.out);
    bn(b.name + ".bn2", b.out);
  }
  std::vector<double> fw(static_cast<std::size_t>(classes) * m.widths.back()), fb(classes);
  for (auto& x : fw)
    x = nd(rng) / std::sqrt(static_cast<double>(m.widths.back()));
  for (auto& x : fb)
    x = 0.1 * nd(rng);
  m.tensors["fc.weight"] = fw;
  m.shapes["fc.weight"] = {classes, m.widths.back()};
  m.tensors["fc.bias"] = fb;
  m.shapes["fc.bias"] = {classes};
  m.dataset = "random";
  std::uniform_real_distribution<double> px(0, 1);
  std::vector<std::vector<double>> imgs(8, std::vector<double>(m.input_size()));
  for (auto& img : imgs)
    for (auto& x : img)
      x = px(rng);
  m.calibrate(imgs);
  return m;
}

void ResNetModel::validate() const {
  if (channels == 0 || image == 0 || widths.empty() || blocks_per_stage == 0 || classes == 0) {
    throw ParameterError("ResNetModel: empty architecture");
  }
  if (image % (1u << (widths.size() - 1)) != 0) {
    throw ParameterError("ResNetModel: image size " + std::to_string(image) +
                         " is not divisible by the stages' strides");
  }
  for (const double c : act)
    if (!std::isfinite(c)) throw ParameterError("ResNetModel: activation coefficient not finite");
  if (act[2] == 0) throw ParameterError("ResNetModel: the activation is not quadratic (c2 = 0)");
  auto need = [&](const std::string& name, const std::vector<u32>& shape) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) throw ParameterError("ResNetModel: missing tensor " + name);
    if (shapes.at(name) != shape) {
      std::string got, want;
      for (const u32 s : shapes.at(name))
        got += std::to_string(s) + " ";
      for (const u32 s : shape)
        want += std::to_string(s) + " ";
      throw ParameterError("ResNetModel: tensor " + name + " has shape [ " + got +
                           "], expected [ " + want + "]");
    }
    for (std::size_t i = 0; i < it->second.size(); ++i)
      if (!std::isfinite(it->second[i])) {
        throw ParameterError("ResNetModel: tensor " + name + " has a non-finite value at " +
                             std::to_string(i));
      }
  };
  auto need_bn = [&](const std::string& name, u32 c) {
    for (const char* s : {".gamma", ".beta", ".mean", ".var"})
      need(name + s, {c});
    for (const double v : tensors.at(name + ".var"))
      if (v < 0) throw ParameterError("ResNetModel: negative variance in " + name);
  };
  need("stem.conv", {widths[0], channels, 3, 3});
  need_bn("stem.bn", widths[0]);
  for (const BlockShape& b : block_shapes(*this)) {
    need(b.name + ".conv1", {b.out, b.in, 3, 3});
    need_bn(b.name + ".bn1", b.out);
    need(b.name + ".conv2", {b.out, b.out, 3, 3});
    need_bn(b.name + ".bn2", b.out);
    if (b.out < b.in) throw ParameterError("ResNetModel: block " + b.name + " narrows");
  }
  need("fc.weight", {classes, widths.back()});
  need("fc.bias", {classes});
  if (!act_max_inputs.empty()) {
    if (act_max_inputs.size() != activations()) {
      throw ParameterError("ResNetModel: " + std::to_string(act_max_inputs.size()) +
                           " activation ranges for " + std::to_string(activations()) +
                           " activations");
    }
    for (const double v : act_max_inputs)
      if (!std::isfinite(v) || v < 0) throw ParameterError("ResNetModel: bad activation range");
  }
}

std::vector<double> ResNetModel::logits(const std::vector<double>& img,
                                        std::vector<double>* activation_inputs) const {
  if (img.size() != input_size()) {
    throw ParameterError("ResNetModel::logits: image of " + std::to_string(img.size()) +
                         " values, the model takes " + std::to_string(channels) + "x" +
                         std::to_string(image) + "x" + std::to_string(image));
  }
  std::vector<double> ranges;
  auto act_fn = [&](std::vector<double>& z) {
    double mx = 0;
    for (double& v : z) {
      mx = std::max(mx, std::abs(v));
      v = act[0] + act[1] * v + act[2] * v * v;
    }
    ranges.push_back(mx);
  };
  u32 size = image;
  std::vector<double> h = folded_conv(*this, "stem.conv", "stem.bn", 1).apply(img, size, size);
  act_fn(h);
  for (const BlockShape& b : block_shapes(*this)) {
    std::vector<double> y =
        folded_conv(*this, b.name + ".conv1", b.name + ".bn1", b.stride).apply(h, size, size);
    act_fn(y);
    const u32 so = size / b.stride;
    y = folded_conv(*this, b.name + ".conv2", b.name + ".bn2", 1).apply(y, so, so);
    const std::vector<double> sc =
        b.stride == 1 && b.in == b.out ? h : option_a_shortcut(h, b.in, b.out, size, b.stride);
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] += sc[i];
    act_fn(y);
    h = std::move(y);
    size = so;
  }
  const u32 c = widths.back();
  const auto& w = tensors.at("fc.weight");
  const auto& fb = tensors.at("fc.bias");
  std::vector<double> out(classes);
  for (u32 j = 0; j < classes; ++j) {
    double acc = fb[j];
    for (u32 k = 0; k < c; ++k) {
      double mean = 0;
      for (u32 i = 0; i < size * size; ++i)
        mean += h[static_cast<std::size_t>(k) * size * size + i];
      acc += w[static_cast<std::size_t>(j) * c + k] * mean / (size * size);
    }
    out[j] = acc;
  }
  if (activation_inputs) *activation_inputs = ranges;
  return out;
}

void ResNetModel::calibrate(const std::vector<std::vector<double>>& images) {
  std::vector<double> mx(activations(), 0.0);
  for (const auto& img : images) {
    std::vector<double> r;
    logits(img, &r);
    for (std::size_t i = 0; i < r.size(); ++i)
      mx[i] = std::max(mx[i], r[i]);
  }
  act_max_inputs = mx;
}

// ---- ResNetInference -----------------------------------------------------------------------

struct ResNetInference::Impl {
  ContextPtr ctx;
  ResNetModel model;
  ResNetOptions options;
  const Bootstrapper* boot = nullptr;
  LevelPlan plan;
  ResNetCounts counts;
  TensorLayout input_layout;
  u32 input_level = 0;

  struct Block {
    std::string name;
    std::unique_ptr<CnnLinearLayer> conv1, conv2, shortcut_matrix;
    double shortcut_scale = 0;  // identity shortcut: constant product
    u32 level = 0;              // level the block starts at
  };
  std::unique_ptr<CnnLinearLayer> stem;
  std::vector<Block> blocks;
  std::unique_ptr<CnnLinearLayer> fc;
  TensorLayout head_layout;
  // Per plan step: the midpoint of the range the ciphertext entering it takes (u^2 of the last
  // activation before it), subtracted before a bootstrapping there and added back after.
  std::vector<double> boot_center;
};

ResNetInference::~ResNetInference() = default;

ResNetInference::ResNetInference(std::shared_ptr<const Context> ctx, const ResNetModel& model,
                                 const Bootstrapper* boot, std::optional<u32> input_level,
                                 ResNetOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.ctx = std::move(ctx);
  s.model = model;
  s.options = options;
  s.boot = boot;
  model.validate();
  if (model.act_max_inputs.empty()) {
    throw ParameterError("ResNetInference: the model has no activation ranges (calibrate it)");
  }
  if (!(options.margin >= 1)) throw ParameterError("ResNetInference: margin below 1");
  const Context& c = *s.ctx;
  s.input_level = input_level.value_or(c.default_encryption_level());
  if (s.input_level > c.max_level()) {
    throw LevelError("ResNetInference: input level " + std::to_string(s.input_level) +
                     " above the top level " + std::to_string(c.max_level()));
  }

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
  if (boot && boot->slots() != c.max_slots()) {
    throw ParameterError("ResNetInference: the bootstrapper refreshes " +
                         std::to_string(boot->slots()) + " slots, the network uses " +
                         std::to_string(c.max_slots()));
  }

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
    Impl::Block blk;
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
    const auto& fb = model.tensors.at("fc.bias");
    std::vector<double> bias(slots, 0.0);
    for (u32 j = 0; j < model.classes; ++j) {
      double v = fb[j];
      for (u32 k = 0; k < layout.channels; ++k)
        v += h.offset * fw[static_cast<std::size_t>(j) * layout.channels + k];
      for (u32 p = 0; p < slots; p += layout.period)
        bias[p + fc_output_slot(layout, j)] = v;
    }
    s.fc = std::make_unique<CnnLinearLayer>(
        encoder, pooled_fc_matrix(layout, model.classes, fw, h.scale / hw), bias,
        s.plan.steps.back().level_in, layout.period, layout, lt);
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
  const Impl& s = *impl_;
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
                                  const BootstrappingKeys& keys, const Progress& progress) const {
  const Impl& s = *impl_;
  if (ct0.level() < s.input_level) {
    throw LevelError("ResNetInference: the input is at level " + std::to_string(ct0.level()) +
                     ", the network was compiled for level " + std::to_string(s.input_level));
  }
  const RelinKey& rlk = keys.relin;
  const GaloisKeys& gk = keys.galois;
  const u32 total = static_cast<u32>(s.plan.steps.size());
  auto refresh = [&](Ciphertext& ct, std::size_t step) {
    if (!s.plan.steps[step].bootstrap_before) return;
    const OpScope scope("Boot");
    ct = s.boot->bootstrap(ct, keys, s.boot_center[step]);
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
    const Impl::Block& b = s.blocks[bi];
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
