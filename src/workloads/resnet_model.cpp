// The ResNet model file (theodosian.cnn writes it), validation and the plaintext reference.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "theo/errors.h"
#include "workloads/resnet_program.h"

namespace theo {

namespace resnet_detail {

namespace {

std::string block_name(u32 stage, u32 block) {
  std::ostringstream s;
  s << 's' << stage << ".b" << block;
  return s.str();
}

}  // namespace

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

std::vector<double> head_bias(const ResNetModel& m, const TensorLayout& layout, double offset,
                              u32 slots) {
  const auto& fw = m.tensors.at("fc.weight");
  const auto& fb = m.tensors.at("fc.bias");
  std::vector<double> bias(slots, 0.0);
  for (u32 j = 0; j < m.classes; ++j) {
    double v = fb[j];
    for (u32 k = 0; k < layout.channels; ++k)
      v += offset * fw[static_cast<std::size_t>(j) * layout.channels + k];
    for (u32 p = 0; p < slots; p += layout.period)
      bias[p + fc_output_slot(layout, j)] = v;
  }
  return bias;
}

}  // namespace resnet_detail

using namespace resnet_detail;

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
    if (act.at("kind") == "relu") {
      m.activation = Activation::kRelu;
    } else if (act.at("kind") == "quadratic") {
      const auto c = act.at("coeffs").get<std::vector<double>>();
      if (c.size() != 3) throw ParameterError("ResNetModel::load: 3 activation coefficients");
      m.act = {c[0], c[1], c[2]};
      m.act_interval = act.value("interval", 0.0);
      m.act_max_error = act.value("max_error", 0.0);
    } else {
      throw ParameterError("ResNetModel::load: " + path + ": activation kind " +
                           act.at("kind").dump() + " (quadratic or relu supported)");
    }
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
                                u32 classes, u64 seed, Activation activation) {
  ResNetModel m;
  m.activation = activation;
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
  if (activation == Activation::kQuadratic) {
    for (const double c : act)
      if (!std::isfinite(c)) throw ParameterError("ResNetModel: activation coefficient not finite");
    if (act[2] == 0) throw ParameterError("ResNetModel: the activation is not quadratic (c2 = 0)");
  }
  if (!std::isfinite(bn_eps) || bn_eps < 0) throw ParameterError("ResNetModel: bad bn_eps");
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
  if (activation == Activation::kRelu) {
    return logits_with(
        img, [](u32, double z) { return z > 0 ? z : 0.0; }, activation_inputs);
  }
  return logits_with(
      img, [this](u32, double z) { return act[0] + act[1] * z + act[2] * z * z; },
      activation_inputs);
}

std::vector<double> ResNetModel::logits_with(const std::vector<double>& img,
                                             const ActivationFn& act_of,
                                             std::vector<double>* activation_inputs) const {
  if (img.size() != input_size()) {
    throw ParameterError("ResNetModel::logits: image of " + std::to_string(img.size()) +
                         " values, the model takes " + std::to_string(channels) + "x" +
                         std::to_string(image) + "x" + std::to_string(image));
  }
  std::vector<double> ranges;
  auto act_fn = [&](std::vector<double>& z) {
    const u32 index = static_cast<u32>(ranges.size());
    double mx = 0;
    for (double& v : z) {
      mx = std::max(mx, std::abs(v));
      v = act_of(index, v);
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

}  // namespace theo
