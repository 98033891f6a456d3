#include "theo/circuits/cnn.h"

#include <bit>
#include <cmath>
#include <map>
#include <sstream>

#include "theo/errors.h"

namespace theo {

namespace {

bool pow2(u32 v) {
  return v != 0 && std::has_single_bit(v);
}

// Diagonals of a map from a layout repeating every `in_period` slots to one repeating every
// `out_period` (one of them divides the other): an entry
// from input slot q to output slot p lies on diagonal (q - p) mod in_period, because the input
// holds the same value at every q + m in_period; its values repeat every out_period slots.
class DiagonalBuilder {
 public:
  DiagonalBuilder(u32 slots, u32 in_period, u32 out_period)
      : slots_(slots), in_period_(in_period), out_period_(out_period) {}
  void add(u32 out_slot, u32 in_slot, double w) {
    if (w == 0) return;
    const u32 k = (in_slot % in_period_ + in_period_ - out_slot % in_period_) % in_period_;
    auto& d = diags_[k];
    if (d.empty()) d.assign(out_period_, 0.0);
    d[out_slot % out_period_] += w;
  }
  DiagonalMatrix build() const {
    DiagonalMatrix m;
    m.slots = slots_;
    for (const auto& [k, d] : diags_) {
      std::vector<Complex> full(slots_);
      for (u32 p = 0; p < slots_; ++p)
        full[p] = d[p % out_period_];
      m.diagonals.emplace(k, std::move(full));
    }
    if (m.diagonals.empty()) m.diagonals.emplace(0, std::vector<Complex>(slots_, 0.0));
    return m;
  }

 private:
  u32 slots_;
  u32 in_period_;
  u32 out_period_;
  std::map<u32, std::vector<double>> diags_;
};

void check_pair(const TensorLayout& in, const TensorLayout& out, u32 stride, const char* what) {
  in.validate();
  out.validate();
  if (in.slots != out.slots || in.row != out.row || out.gap != in.gap * stride ||
      in.height != out.height * stride || in.width != out.width * stride) {
    throw ParameterError(std::string(what) + ": output layout " + out.describe() +
                         " is not the stride-" + std::to_string(stride) + " layout of " +
                         in.describe());
  }
}

}  // namespace

u32 linear_output_period(const TensorLayout& in, const TensorLayout& out) {
  return std::max(in.period, out.period);
}

// ---- TensorLayout --------------------------------------------------------------------------

TensorLayout TensorLayout::dense(u32 channels, u32 height, u32 width, u32 slots) {
  TensorLayout l;
  l.channels = channels;
  l.height = height;
  l.width = width;
  l.gap = 1;
  l.row = width == 0 ? 0 : std::bit_ceil(width);
  l.slots = slots;
  l.period = l.span() == 0 ? 0 : std::bit_ceil(l.span());
  l.validate();
  return l;
}

TensorLayout TensorLayout::strided(u32 stride, u32 out_channels) const {
  if (stride == 0 || height % stride != 0 || width % stride != 0) {
    throw ParameterError("TensorLayout: stride " + std::to_string(stride) +
                         " does not divide the " + std::to_string(height) + "x" +
                         std::to_string(width) + " feature map");
  }
  TensorLayout l = *this;
  l.channels = out_channels;
  l.height = height / stride;
  l.width = width / stride;
  l.gap = gap * stride;
  l.period = l.span() == 0 ? 0 : std::bit_ceil(l.span());
  l.validate();
  return l;
}

u32 TensorLayout::slot(u32 c, u32 y, u32 x) const {
  const u32 kk = gap * gap;
  const u32 r = c % kk;
  return (c / kk) * block() + (gap * y + r / gap) * row + gap * x + r % gap;
}

void TensorLayout::validate() const {
  if (channels == 0 || height == 0 || width == 0 || gap == 0) {
    throw ParameterError("TensorLayout: empty tensor " + describe());
  }
  if (!pow2(slots) || !pow2(row) || !pow2(period) || period > slots) {
    throw ParameterError(
        "TensorLayout: slots, row and period must be powers of two with "
        "period <= slots: " +
        describe());
  }
  if (row < width * gap) {
    throw ParameterError("TensorLayout: a grid row of " + std::to_string(row) +
                         " slots cannot hold width " + std::to_string(width) + " at gap " +
                         std::to_string(gap));
  }
  if (span() > period) {
    throw ParameterError("TensorLayout: " + describe() + " needs " + std::to_string(span()) +
                         " slots, more than its period");
  }
}

std::string TensorLayout::describe() const {
  std::ostringstream s;
  s << channels << "x" << height << "x" << width << " gap " << gap << " row " << row << " ("
    << groups() << " block(s) of " << block() << ", period " << period << " of " << slots
    << " slots)";
  return s.str();
}

std::vector<double> TensorLayout::pack(const std::vector<double>& chw) const {
  validate();
  if (chw.size() != static_cast<std::size_t>(channels) * height * width) {
    throw ParameterError("TensorLayout::pack: got " + std::to_string(chw.size()) +
                         " values for a " + std::to_string(channels) + "x" +
                         std::to_string(height) + "x" + std::to_string(width) + " tensor");
  }
  std::vector<double> out(slots, 0.0);
  for (u32 c = 0; c < channels; ++c)
    for (u32 y = 0; y < height; ++y)
      for (u32 x = 0; x < width; ++x) {
        const double v = chw[(static_cast<std::size_t>(c) * height + y) * width + x];
        for (u32 base = 0; base < slots; base += period)
          out[base + slot(c, y, x)] = v;
      }
  return out;
}

std::vector<double> TensorLayout::unpack(const std::vector<double>& slot_values) const {
  if (slot_values.size() < span()) {
    throw ParameterError("TensorLayout::unpack: " + std::to_string(slot_values.size()) +
                         " slots, the layout spans " + std::to_string(span()));
  }
  std::vector<double> out(static_cast<std::size_t>(channels) * height * width);
  for (u32 c = 0; c < channels; ++c)
    for (u32 y = 0; y < height; ++y)
      for (u32 x = 0; x < width; ++x)
        out[(static_cast<std::size_t>(c) * height + y) * width + x] = slot_values[slot(c, y, x)];
  return out;
}

// ---- Conv2dWeights -------------------------------------------------------------------------

void Conv2dWeights::validate(const std::string& name) const {
  if (in_channels == 0 || out_channels == 0) throw ParameterError(name + ": no channels");
  if (kernel % 2 == 0) {
    throw ParameterError(name + ": kernel " + std::to_string(kernel) +
                         " is even ('same' "
                         "padding needs it odd)");
  }
  if (stride != 1 && stride != 2) {
    throw ParameterError(name + ": stride " + std::to_string(stride) + " (1 or 2 supported)");
  }
  const std::size_t want = static_cast<std::size_t>(out_channels) * in_channels * kernel * kernel;
  if (weight.size() != want) {
    throw ParameterError(name + ": " + std::to_string(weight.size()) + " weights, the shape " +
                         std::to_string(out_channels) + "x" + std::to_string(in_channels) + "x" +
                         std::to_string(kernel) + "x" + std::to_string(kernel) + " has " +
                         std::to_string(want));
  }
  if (!bias.empty() && bias.size() != out_channels) {
    throw ParameterError(name + ": " + std::to_string(bias.size()) + " biases for " +
                         std::to_string(out_channels) + " output channels");
  }
  for (std::size_t i = 0; i < weight.size(); ++i)
    if (!std::isfinite(weight[i])) {
      throw ParameterError(name + ": weight " + std::to_string(i) + " is not finite");
    }
  for (std::size_t i = 0; i < bias.size(); ++i)
    if (!std::isfinite(bias[i])) {
      throw ParameterError(name + ": bias " + std::to_string(i) + " is not finite");
    }
}

std::vector<double> Conv2dWeights::apply(const std::vector<double>& chw, u32 height,
                                         u32 width) const {
  validate("Conv2dWeights::apply");
  if (chw.size() != static_cast<std::size_t>(in_channels) * height * width) {
    throw ParameterError("Conv2dWeights::apply: input size does not match the shape");
  }
  const u32 ho = height / stride, wo = width / stride;
  const int pad = static_cast<int>(kernel - 1) / 2;
  std::vector<double> out(static_cast<std::size_t>(out_channels) * ho * wo, 0.0);
  for (u32 o = 0; o < out_channels; ++o)
    for (u32 y = 0; y < ho; ++y)
      for (u32 x = 0; x < wo; ++x) {
        double acc = bias.empty() ? 0.0 : bias[o];
        for (u32 i = 0; i < in_channels; ++i)
          for (u32 ky = 0; ky < kernel; ++ky)
            for (u32 kx = 0; kx < kernel; ++kx) {
              const int iy = static_cast<int>(stride * y + ky) - pad;
              const int ix = static_cast<int>(stride * x + kx) - pad;
              if (iy < 0 || ix < 0 || iy >= static_cast<int>(height) ||
                  ix >= static_cast<int>(width))
                continue;
              acc +=
                  weight[((static_cast<std::size_t>(o) * in_channels + i) * kernel + ky) * kernel +
                         kx] *
                  chw[(static_cast<std::size_t>(i) * height + static_cast<u32>(iy)) * width +
                      static_cast<u32>(ix)];
            }
        out[(static_cast<std::size_t>(o) * ho + y) * wo + x] = acc;
      }
  return out;
}

// ---- slot matrices -------------------------------------------------------------------------

DiagonalMatrix conv2d_matrix(const TensorLayout& in, const TensorLayout& out,
                             const Conv2dWeights& conv, double weight_scale) {
  conv.validate("conv2d_matrix");
  check_pair(in, out, conv.stride, "conv2d_matrix");
  if (conv.in_channels != in.channels || conv.out_channels != out.channels) {
    throw ParameterError("conv2d_matrix: the convolution maps " + std::to_string(conv.in_channels) +
                         " -> " + std::to_string(conv.out_channels) + " channels, the layouts " +
                         std::to_string(in.channels) + " -> " + std::to_string(out.channels));
  }
  DiagonalBuilder b(in.slots, in.period, linear_output_period(in, out));
  const int pad = static_cast<int>(conv.kernel - 1) / 2;
  const u32 k = conv.kernel;
  for (u32 o = 0; o < out.channels; ++o)
    for (u32 i = 0; i < in.channels; ++i)
      for (u32 ky = 0; ky < k; ++ky)
        for (u32 kx = 0; kx < k; ++kx) {
          const double w =
              conv.weight[((static_cast<std::size_t>(o) * in.channels + i) * k + ky) * k + kx] *
              weight_scale;
          if (w == 0) continue;
          for (u32 y = 0; y < out.height; ++y)
            for (u32 x = 0; x < out.width; ++x) {
              const int iy = static_cast<int>(conv.stride * y + ky) - pad;
              const int ix = static_cast<int>(conv.stride * x + kx) - pad;
              if (iy < 0 || ix < 0 || iy >= static_cast<int>(in.height) ||
                  ix >= static_cast<int>(in.width))
                continue;
              b.add(out.slot(o, y, x), in.slot(i, static_cast<u32>(iy), static_cast<u32>(ix)), w);
            }
        }
  return b.build();
}

std::vector<double> conv2d_bias(const TensorLayout& in, const TensorLayout& out,
                                const Conv2dWeights& conv, double input_offset, double shift,
                                double scale) {
  conv.validate("conv2d_bias");
  check_pair(in, out, conv.stride, "conv2d_bias");
  std::vector<double> ones(static_cast<std::size_t>(in.channels) * in.height * in.width,
                           input_offset);
  Conv2dWeights c = conv;
  c.bias.assign(conv.out_channels, 0.0);
  for (u32 o = 0; o < conv.out_channels; ++o)
    c.bias[o] = (conv.bias.empty() ? 0.0 : conv.bias[o]) + shift;
  std::vector<double> chw = c.apply(ones, in.height, in.width);
  for (double& v : chw)
    v *= scale;
  TensorLayout rep = out;
  rep.period = linear_output_period(in, out);
  return rep.pack(chw);
}

DiagonalMatrix shortcut_matrix(const TensorLayout& in, const TensorLayout& out, double weight) {
  const u32 stride = in.gap == 0 ? 0 : out.gap / in.gap;
  check_pair(in, out, stride, "shortcut_matrix");
  if (out.channels < in.channels) {
    throw ParameterError("shortcut_matrix: the shortcut cannot drop channels");
  }
  DiagonalBuilder b(in.slots, in.period, linear_output_period(in, out));
  for (u32 c = 0; c < in.channels; ++c)
    for (u32 y = 0; y < out.height; ++y)
      for (u32 x = 0; x < out.width; ++x)
        b.add(out.slot(c, y, x), in.slot(c, stride * y, stride * x), weight);
  return b.build();
}

u32 fc_output_slot(const TensorLayout& layout, u32 j) {
  if (j >= layout.channels) {
    throw ParameterError("fc_output_slot: output " + std::to_string(j) + " of a layer on " +
                         std::to_string(layout.channels) +
                         " channels (at most one output per "
                         "channel)");
  }
  return layout.slot(j, 0, 0);
}

DiagonalMatrix pooled_fc_matrix(const TensorLayout& layout, u32 outputs,
                                const std::vector<double>& weight, double scale) {
  layout.validate();
  if (weight.size() != static_cast<std::size_t>(outputs) * layout.channels) {
    throw ParameterError("pooled_fc_matrix: " + std::to_string(weight.size()) + " weights for " +
                         std::to_string(outputs) + "x" + std::to_string(layout.channels));
  }
  for (std::size_t i = 0; i < weight.size(); ++i)
    if (!std::isfinite(weight[i])) {
      throw ParameterError("pooled_fc_matrix: weight " + std::to_string(i) + " is not finite");
    }
  DiagonalBuilder b(layout.slots, layout.period, layout.period);
  for (u32 j = 0; j < outputs; ++j)
    for (u32 c = 0; c < layout.channels; ++c)
      b.add(fc_output_slot(layout, j), layout.slot(c, 0, 0),
            weight[static_cast<std::size_t>(j) * layout.channels + c] * scale);
  return b.build();
}

// ---- pooling -------------------------------------------------------------------------------

std::vector<int> spatial_sum_rotations(const TensorLayout& layout) {
  layout.validate();
  if (!pow2(layout.width) || !pow2(layout.height)) {
    throw ParameterError("spatial_sum: height and width must be powers of two: " +
                         layout.describe());
  }
  std::vector<int> r;
  for (u32 s = 1; s < layout.width; s <<= 1)
    r.push_back(static_cast<int>(layout.gap * s));
  for (u32 s = 1; s < layout.height; s <<= 1)
    r.push_back(static_cast<int>(layout.gap * layout.row * s));
  return r;
}

Ciphertext spatial_sum(const Evaluator& ev, const Ciphertext& ct, const TensorLayout& layout,
                       const GaloisKeys& keys) {
  Ciphertext acc = ev.clone(ct);
  for (const int r : spatial_sum_rotations(layout))
    ev.add_inplace(acc, ev.rotate(acc, r, keys));
  return acc;
}

// ---- CnnLinearLayer ------------------------------------------------------------------------

CnnLinearLayer::CnnLinearLayer(const Encoder& encoder, const DiagonalMatrix& matrix,
                               const std::vector<double>& bias, u32 level, u32 computed_period,
                               const TensorLayout& out, LinearTransformOptions options)
    : transform_(encoder, matrix, level, std::nullopt, options), out_(out) {
  out.validate();
  if (matrix.slots != out.slots) {
    throw ParameterError("CnnLinearLayer: the matrix has " + std::to_string(matrix.slots) +
                         " slots, the output layout " + std::to_string(out.slots));
  }
  if (!pow2(computed_period) || computed_period < out.period || computed_period > out.slots) {
    throw ParameterError("CnnLinearLayer: computed period " + std::to_string(computed_period) +
                         " below the output period " + std::to_string(out.period));
  }
  if (!bias.empty()) {
    if (bias.size() != out.slots) {
      throw ParameterError("CnnLinearLayer: bias of " + std::to_string(bias.size()) +
                           " values for " + std::to_string(out.slots) + " slots");
    }
    for (const double v : bias)
      if (!std::isfinite(v)) throw ParameterError("CnnLinearLayer: bias is not finite");
    bias_ = encoder.encode(std::span<const double>(bias), level - 1);
  }
  for (u32 p = computed_period / 2; p >= out.period && p > 0; p /= 2)
    replicate_.push_back(static_cast<int>(p));
}

Ciphertext CnnLinearLayer::apply(const Evaluator& ev, const Ciphertext& ct,
                                 const GaloisKeys& keys) const {
  Ciphertext y = transform_.evaluate(ev, ct, keys);
  if (bias_) ev.add_plain_inplace(y, *bias_);
  for (const int r : replicate_)
    ev.add_inplace(y, min_keys() ? rotate_pow2(ev, y, r, out_.slots, keys) : ev.rotate(y, r, keys));
  return y;
}

std::vector<int> CnnLinearLayer::rotations() const {
  std::vector<int> r = transform_.rotations();
  r.insert(r.end(), replicate_.begin(), replicate_.end());
  return r;
}

u32 CnnLinearLayer::key_switches() const {
  // Min-keys mode composes each rotation of several key switches; rotations() lists the keys.
  if (min_keys()) return 0;
  return static_cast<u32>(transform_.rotations().size() + replicate_.size());
}

}  // namespace theo
