#pragma once
// Building blocks of encrypted convolutional networks on one ciphertext per feature map.
//
// Layout: the multiplexed packing of Lee et al. (ICML 2022, "Low-complexity deep CNNs on FHE
// using multiplexed parallel convolutions"). A C x H x W tensor with gap k sits on a grid of
// (H k) rows of `row` slots: element (c, y, x) at
//   slot = (c / k^2) * block + (k y + a) * row + (k x + b),   a k + b = c mod k^2,
// block = H k row. A stride-2 layer doubles k and halves H and W, so its outputs stay on the grid
// of its inputs with the freed cells holding the extra channels: no compaction, and the spatial
// neighbours of every channel are one rotation (k (dy row + dx)) away. The data (ceil(C / k^2)
// blocks) is replicated every `period` slots, so that channel shifts wrap around cyclically.
//
// Every linear layer - convolution (any odd kernel, "same" zero padding, stride 1 or 2), the
// parameter-free ResNet shortcut, the fully connected layer after average pooling - is a slot
// matrix from one layout to the next. Its generalized diagonals are few: an entry from input
// channel i to output channel o at kernel tap (dy, dx) lies on diagonal
// slot(i, y + dy, x + dx) - slot(o, y, x), which depends on (i, o, dy, dx) but not on (y, x).
// LinearTransform evaluates it with baby-step / giant-step and double hoisting: one level, about
// 2 sqrt(diagonals) key switches (most of them hoisted baby steps), one plaintext product per
// diagonal. Batch-norm and any scalar the next layer wants are folded into the weights and the
// per-slot bias, which is added after the product at no level.

#include <memory>
#include <string>
#include <vector>

#include "theo/circuits/linear_transform.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/evaluator.h"

namespace theo {

// Where a C x H x W tensor lives in the slots of one ciphertext (see above).
struct TensorLayout {
  u32 channels = 0;
  u32 height = 0;
  u32 width = 0;
  u32 gap = 1;     // k
  u32 row = 0;     // slots per grid row (power of two, >= width * gap)
  u32 slots = 0;   // ciphertext slots
  u32 period = 0;  // the data repeats every `period` slots (power of two dividing slots)

  // Gap 1, row = the next power of two >= width, period = the next power of two >= span().
  // ParameterError when the tensor does not fit `slots`.
  static TensorLayout dense(u32 channels, u32 height, u32 width, u32 slots);
  // The layout a stride-s layer with `out_channels` produces from this one: gap * s, height / s,
  // width / s, same grid, period = the next power of two >= its span (<= this period).
  TensorLayout strided(u32 stride, u32 out_channels) const;

  u32 block() const { return height * gap * row; }
  u32 groups() const { return (channels + gap * gap - 1) / (gap * gap); }
  u32 span() const { return groups() * block(); }  // slots the data occupies in one period
  u32 slot(u32 c, u32 y, u32 x) const;
  // ParameterError naming what is wrong (sizes, powers of two, fit).
  void validate() const;
  std::string describe() const;

  // A C x H x W tensor (row-major, c slowest) -> slot vector (replicated every period), and back
  // (reads the first copy).
  std::vector<double> pack(const std::vector<double>& chw) const;
  std::vector<double> unpack(const std::vector<double>& slot_values) const;
};

// A 2-D convolution with "same" zero padding ((kernel - 1) / 2 on each side), stride 1 or 2.
struct Conv2dWeights {
  u32 in_channels = 0;
  u32 out_channels = 0;
  u32 kernel = 3;  // odd
  u32 stride = 1;
  std::vector<double> weight;  // [out][in][ky][kx]
  std::vector<double> bias;    // [out] (empty: none)

  // ParameterError naming the problem: shapes, even kernel, stride, non-finite values.
  void validate(const std::string& name) const;
  // Plaintext reference on a C x H x W tensor (row-major): out_channels x H/s x W/s.
  std::vector<double> apply(const std::vector<double>& chw, u32 height, u32 width) const;
};

// A linear layer on one ciphertext: slot matrix (one level) + per-slot bias (no level) + the
// rotations that replicate its output down to the output layout's period.
class CnnLinearLayer {
 public:
  // diagonals at `level` (input at the level's default scale), output at level - 1. `bias` has
  // the ciphertext's slot count (empty: none). The matrix's output repeats every
  // `computed_period` slots; when that is above out.period, rotations by out.period,
  // 2 out.period, ... fill the copies in between (no level).
  // options.min_keys: rotations composed of +-2^k (about 2 log2(slots) keys shared by every
  // layer instead of ~2 sqrt(diagonals) per layer, diagonals kept over Q_l only: far less key
  // and weight memory, more key switches).
  CnnLinearLayer(const Encoder& encoder, const DiagonalMatrix& matrix,
                 const std::vector<double>& bias, u32 level, u32 computed_period,
                 const TensorLayout& out, LinearTransformOptions options = {});

  Ciphertext apply(const Evaluator& ev, const Ciphertext& ct, const GaloisKeys& keys) const;
  // Left rotations apply() needs keys for.
  std::vector<int> rotations() const;
  u32 level() const { return transform_.level(); }
  const TensorLayout& output_layout() const { return out_; }
  std::size_t diagonals() const { return transform_.diagonal_count(); }
  bool min_keys() const { return transform_.min_keys(); }
  // Key switches per apply(): the transform's distinct rotations plus the replication ones (0 in
  // min-keys mode, where rotations are composed and not counted here).
  u32 key_switches() const;

 private:
  LinearTransform transform_;
  std::optional<Plaintext> bias_;
  std::vector<int> replicate_;
  TensorLayout out_;
};

// The period the matrices below give their output: max(in.period, out.period). An entry from
// input slot q to output slot p sits on diagonal (q - p) mod in.period (the input repeats every
// in.period slots, so every copy of q serves), which keeps the diagonals few when a layer
// widens the data (3 -> 16 channels: 4 channel offsets instead of 16).
u32 linear_output_period(const TensorLayout& in, const TensorLayout& out);
// Slot matrix of a convolution from `in` to `out` (out = in.strided(stride, out_channels)),
// every weight multiplied by `weight_scale`; its output repeats every
// linear_output_period(in, out) slots (CnnLinearLayer replicates it down to out.period).
DiagonalMatrix conv2d_matrix(const TensorLayout& in, const TensorLayout& out,
                             const Conv2dWeights& conv, double weight_scale);
// The per-slot bias of that convolution's output for an input whose every valid element is
// `input_offset` (the constant part of an affine representation value = scale * ct + offset;
// zero padding stays zero, so border outputs see fewer taps), plus conv.bias, plus `shift`, all
// times `scale`: scale * (conv(offset) + bias + shift), repeating like the matrix's output.
std::vector<double> conv2d_bias(const TensorLayout& in, const TensorLayout& out,
                                const Conv2dWeights& conv, double input_offset, double shift,
                                double scale);
// The ResNet "option A" shortcut as a slot matrix: out(c, y, x) = weight * in(c, s y, s x) for
// c < in.channels, 0 for the new channels (out = in.strided(stride, out_channels)).
DiagonalMatrix shortcut_matrix(const TensorLayout& in, const TensorLayout& out, double weight);

// Global average pooling, step 1: rotate-and-sum over the spatial grid (log2 H + log2 W
// rotations, no level); slot(c, 0, 0) then holds the sum over (y, x) of channel c. H and W
// powers of two.
Ciphertext spatial_sum(const Evaluator& ev, const Ciphertext& ct, const TensorLayout& layout,
                       const GaloisKeys& keys);
std::vector<int> spatial_sum_rotations(const TensorLayout& layout);
// Step 2: the fully connected layer on those sums as a slot matrix: output j at
// fc_output_slot(layout, j) = sum_c weight[j][c] * scale * slot(c, 0, 0).
DiagonalMatrix pooled_fc_matrix(const TensorLayout& layout, u32 outputs,
                                const std::vector<double>& weight, double scale);
u32 fc_output_slot(const TensorLayout& layout, u32 j);

}  // namespace theo
