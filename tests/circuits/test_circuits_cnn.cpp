// CNN building blocks (circuits/cnn.h): the multiplexed layout, convolution / shortcut / pooled-FC
// slot matrices against the direct plaintext computation, and the same layers on encrypted data
// (precision in bits against the plaintext result).

#include <random>

#include "circuits_test_util.h"
#include "theo/circuits/cnn.h"

namespace theo::test {
namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r = [] {
    const u64 seed = std::random_device{}();
    std::printf("[seed] test_circuits_cnn %llu\n", static_cast<unsigned long long>(seed));
    return std::mt19937_64(seed);
  }();
  return r;
}

std::vector<double> random_vec(std::size_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v)
    x = u(rng());
  return v;
}

Conv2dWeights random_conv(u32 in, u32 out, u32 kernel, u32 stride) {
  Conv2dWeights c;
  c.in_channels = in;
  c.out_channels = out;
  c.kernel = kernel;
  c.stride = stride;
  c.weight = random_vec(static_cast<std::size_t>(in) * out * kernel * kernel, -0.3, 0.3);
  c.bias = random_vec(out, -0.5, 0.5);
  return c;
}

std::vector<Cplx> to_complex(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

std::vector<double> real_part(const std::vector<Cplx>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = v[i].real();
  return out;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    e = std::max(e, std::abs(a[i] - b.at(i)));
  return e;
}

// The slot matrix applied to the packed input, plus the bias, replicated down to out.period the
// way CnnLinearLayer does it.
std::vector<double> apply_layer(const DiagonalMatrix& m, const std::vector<double>& bias,
                                const std::vector<double>& x, u32 computed_period,
                                const TensorLayout& out) {
  std::vector<double> y = real_part(m.apply(to_complex(x)));
  for (std::size_t i = 0; i < y.size() && !bias.empty(); ++i)
    y[i] += bias[i];
  for (u32 p = computed_period / 2; p >= out.period; p /= 2) {
    std::vector<double> r(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      r[i] = y[i] + y[(i + p) % y.size()];
    y = r;
  }
  return y;
}

TEST(CnnLayout, PackUnpackAndStridedLayouts) {
  const TensorLayout a = TensorLayout::dense(3, 16, 16, 2048);
  EXPECT_EQ(a.row, 16u);
  EXPECT_EQ(a.block(), 256u);
  EXPECT_EQ(a.span(), 768u);
  EXPECT_EQ(a.period, 1024u);
  const auto x = random_vec(3 * 16 * 16);
  EXPECT_EQ(a.unpack(a.pack(x)), x);
  const TensorLayout b = a.strided(2, 8);  // 8 x 8 x 8, gap 2: 2 blocks of 256
  EXPECT_EQ(b.gap, 2u);
  EXPECT_EQ(b.span(), 512u);
  const TensorLayout c = b.strided(2, 16);  // 16 x 4 x 4, gap 4: one block
  EXPECT_EQ(c.span(), 256u);
  // Every element of a multiplexed layout has its own slot.
  std::vector<int> used(c.slots, 0);
  for (u32 ch = 0; ch < 16; ++ch)
    for (u32 y = 0; y < 4; ++y)
      for (u32 xx = 0; xx < 4; ++xx)
        EXPECT_EQ(used[c.slot(ch, y, xx)]++, 0);
  EXPECT_THROW(TensorLayout::dense(64, 32, 32, 2048), ParameterError);
  EXPECT_THROW(a.strided(3, 8), ParameterError);
  EXPECT_THROW(a.pack(std::vector<double>(5)), ParameterError);
}

TEST(CnnLayout, ConvolutionMatricesMatchTheDirectConvolution) {
  struct Case {
    u32 in, out, size, kernel, stride, gap_steps;
  };
  for (const Case& k :
       {Case{3, 4, 16, 3, 1, 0}, Case{4, 8, 16, 3, 2, 0}, Case{8, 8, 8, 3, 1, 1},
        Case{8, 16, 8, 3, 2, 1}, Case{4, 4, 16, 1, 1, 0}, Case{4, 6, 16, 5, 1, 0}}) {
    TensorLayout in = TensorLayout::dense(k.in, k.size << k.gap_steps, k.size << k.gap_steps, 4096);
    for (u32 g = 0; g < k.gap_steps; ++g)
      in = in.strided(2, k.in);
    const TensorLayout out = in.strided(k.stride, k.out);
    const Conv2dWeights conv = random_conv(k.in, k.out, k.kernel, k.stride);
    const auto x = random_vec(static_cast<std::size_t>(k.in) * in.height * in.width);
    const double scale = 0.75, offset = 0.3, shift = -0.2;
    // y = scale * (conv(x + offset) + bias + shift) with the input given as x.
    const DiagonalMatrix m = conv2d_matrix(in, out, conv, scale);
    const auto bias = conv2d_bias(in, out, conv, offset, shift, scale);
    const auto got =
        out.unpack(apply_layer(m, bias, in.pack(x), linear_output_period(in, out), out));
    std::vector<double> xo = x;
    for (double& v : xo)
      v += offset;
    std::vector<double> want = conv.apply(xo, in.height, in.width);
    for (u32 o = 0; o < k.out; ++o)
      for (u32 i = 0; i < out.height * out.width; ++i)
        want[o * out.height * out.width + i] =
            scale * (want[o * out.height * out.width + i] + shift);
    EXPECT_LT(max_diff(got, want), 1e-12)
        << k.in << "->" << k.out << " k" << k.kernel << " s" << k.stride;
    // The output is replicated every out.period slots and zero between copies' spans.
    const auto slots = apply_layer(m, bias, in.pack(x), linear_output_period(in, out), out);
    for (u32 p = 0; p < out.slots; ++p)
      EXPECT_NEAR(slots[p], slots[p % out.period], 1e-12);
  }
}

TEST(CnnLayout, ShortcutAndPooledFullyConnected) {
  const TensorLayout in = TensorLayout::dense(4, 8, 8, 1024);
  const TensorLayout out = in.strided(2, 8);
  const auto x = random_vec(4 * 64);
  const auto got = out.unpack(apply_layer(shortcut_matrix(in, out, 0.5), {}, in.pack(x),
                                          linear_output_period(in, out), out));
  for (u32 c = 0; c < 8; ++c)
    for (u32 y = 0; y < 4; ++y)
      for (u32 xx = 0; xx < 4; ++xx) {
        const double want = c < 4 ? 0.5 * x[c * 64 + 2 * y * 8 + 2 * xx] : 0.0;
        EXPECT_NEAR(got[c * 16 + y * 4 + xx], want, 1e-12);
      }
  // Rotate-and-sum pooling (plaintext rotations), then the FC matrix.
  const auto h = random_vec(8 * 16);
  std::vector<double> s = out.pack(h);
  for (const int r : spatial_sum_rotations(out)) {
    std::vector<double> t(s.size());
    for (std::size_t i = 0; i < s.size(); ++i)
      t[i] = s[i] + s[(i + static_cast<std::size_t>(r)) % s.size()];
    s = t;
  }
  const auto w = random_vec(3 * 8);
  const auto y = real_part(pooled_fc_matrix(out, 3, w, 1.0 / 16).apply(to_complex(s)));
  for (u32 j = 0; j < 3; ++j) {
    double want = 0;
    for (u32 c = 0; c < 8; ++c)
      for (u32 i = 0; i < 16; ++i)
        want += w[j * 8 + c] * h[c * 16 + i] / 16;
    EXPECT_NEAR(y[fc_output_slot(out, j)], want, 1e-12);
  }
}

TEST(CnnLayout, BadInputIsRejected) {
  Conv2dWeights c = random_conv(2, 2, 3, 1);
  c.weight[3] = std::nan("");
  EXPECT_THROW(c.validate("conv"), ParameterError);
  c = random_conv(2, 2, 2, 1);
  EXPECT_THROW(c.validate("conv"), ParameterError);
  c = random_conv(2, 2, 3, 1);
  c.weight.pop_back();
  EXPECT_THROW(c.validate("conv"), ParameterError);
  const TensorLayout in = TensorLayout::dense(2, 8, 8, 512);
  EXPECT_THROW(conv2d_matrix(in, in.strided(2, 2), random_conv(2, 2, 3, 1), 1.0),
               ParameterError);  // stride-1 weights, stride-2 layouts
  EXPECT_THROW(conv2d_matrix(in, in, random_conv(3, 2, 3, 1), 1.0), ParameterError);
}

// The layers on encrypted data (N = 2^12, 2048 slots).
class CnnEncrypted : public SharedEnvSuite<12, 3> {};

TEST_F(CnnEncrypted, StridedConvolutionThenConvolution) {
  Env& e = *env_;
  const u32 slots = e.ctx->max_slots();
  const TensorLayout l0 = TensorLayout::dense(3, 16, 16, slots);
  const TensorLayout l1 = l0.strided(2, 8);
  const Conv2dWeights c1 = random_conv(3, 8, 3, 2);
  const Conv2dWeights c2 = random_conv(8, 8, 3, 1);
  const u32 top = e.ctx->max_level();
  const CnnLinearLayer layer1(e.encoder, conv2d_matrix(l0, l1, c1, 1.0),
                              conv2d_bias(l0, l1, c1, 0, 0, 1.0), top, linear_output_period(l0, l1),
                              l1);
  const CnnLinearLayer layer2(e.encoder, conv2d_matrix(l1, l1, c2, 1.0),
                              conv2d_bias(l1, l1, c2, 0, 0, 1.0), top - 1, l1.period, l1);
  std::vector<int> rots = layer1.rotations();
  for (const int r : layer2.rotations())
    rots.push_back(r);
  const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, rots);
  const auto x = random_vec(3 * 16 * 16);
  const Ciphertext ct = e.encrypt(to_complex(l0.pack(x)), top);
  const Ciphertext y1 = layer1.apply(e.evaluator, ct, gk);
  const Ciphertext y2 = layer2.apply(e.evaluator, y1, gk);
  EXPECT_EQ(y2.level(), top - 2);
  const auto want1 = c1.apply(x, 16, 16);
  const auto want2 = c2.apply(want1, 8, 8);
  const double b1 = -std::log2(max_diff(l1.unpack(real_part(e.decrypt(y1))), want1));
  const double b2 = -std::log2(max_diff(l1.unpack(real_part(e.decrypt(y2))), want2));
  print_bits("strided conv 3->8 (16x16 -> 8x8, gap 2)", b1);
  print_bits("then conv 8->8", b2);
  std::printf("[cnn] diagonals %zu / %zu, key switches %u / %u\n", layer1.diagonals(),
              layer2.diagonals(), layer1.key_switches(), layer2.key_switches());
  EXPECT_GT(b1, 18);
  EXPECT_GT(b2, 16);
  // Replicated output: every copy decrypts to the same values.
  const auto slots2 = real_part(e.decrypt(y2));
  for (u32 p = 0; p < slots; ++p)
    EXPECT_NEAR(slots2[p], slots2[p % l1.period], 1e-4);
}

TEST_F(CnnEncrypted, PoolingAndFullyConnected) {
  Env& e = *env_;
  const u32 slots = e.ctx->max_slots();
  const TensorLayout l = TensorLayout::dense(8, 16, 16, slots).strided(2, 16).strided(2, 16);
  const auto h = random_vec(16 * 16);
  const auto w = random_vec(10 * 16);
  const std::vector<double> fc_bias = random_vec(10);
  std::vector<double> bias(slots, 0.0);
  for (u32 j = 0; j < 10; ++j)
    for (u32 p = 0; p < slots; p += l.period)
      bias[p + fc_output_slot(l, j)] = fc_bias[j];
  const u32 top = e.ctx->max_level();
  const CnnLinearLayer fc(e.encoder, pooled_fc_matrix(l, 10, w, 1.0 / 16), bias, top, l.period, l);
  std::vector<int> rots = fc.rotations();
  for (const int r : spatial_sum_rotations(l))
    rots.push_back(r);
  const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, rots);
  const Ciphertext ct = e.encrypt(to_complex(l.pack(h)), top);
  const Ciphertext y = fc.apply(e.evaluator, spatial_sum(e.evaluator, ct, l, gk), gk);
  const auto dec = real_part(e.decrypt(y));
  double err = 0;
  for (u32 j = 0; j < 10; ++j) {
    double want = fc_bias[j];
    for (u32 c = 0; c < 16; ++c)
      for (u32 i = 0; i < 16; ++i)
        want += w[j * 16 + c] * h[c * 16 + i] / 16;
    err = std::max(err, std::abs(dec[fc_output_slot(l, j)] - want));
  }
  print_bits("average pooling + FC 16 -> 10", -std::log2(err));
  EXPECT_GT(-std::log2(err), 18);
}

}  // namespace
}  // namespace theo::test
