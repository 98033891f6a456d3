#include "theo/circuits/packed_matmul.h"

#include <bit>
#include <cmath>
#include <string>

#include "theo/errors.h"

namespace theo {

namespace {

u32 block_width(u32 rows, u32 cols) {
  return std::bit_ceil(std::max(rows, cols));
}

}  // namespace

DiagonalMatrix block_diagonals(std::span<const double> matrix, u32 rows, u32 cols, u32 slots) {
  if (rows == 0 || cols == 0) throw ParameterError("block_diagonals: an empty matrix");
  if (matrix.size() != static_cast<std::size_t>(rows) * cols) {
    throw ParameterError("block_diagonals: " + std::to_string(matrix.size()) + " entries for a " +
                         std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
  }
  if (slots == 0 || !std::has_single_bit(slots)) {
    throw ParameterError("block_diagonals: " + std::to_string(slots) +
                         " slots is not a power of two");
  }
  const u32 d = block_width(rows, cols);
  if (d > slots) {
    throw ParameterError("block_diagonals: a " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix needs blocks of " + std::to_string(d) +
                         " slots, the ciphertext has " + std::to_string(slots));
  }
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    if (!std::isfinite(matrix[i])) {
      throw ParameterError("block_diagonals: entry (" + std::to_string(i / cols) + ", " +
                           std::to_string(i % cols) + ") is not finite");
    }
  }
  // (y)_(b d + i) = sum_j M[i][j] x_(b d + j) = sum_k diag_k[p] x_(p + k), k = j - i.
  DiagonalMatrix out;
  out.slots = slots;
  for (u32 i = 0; i < rows; ++i) {
    for (u32 j = 0; j < cols; ++j) {
      const double v = matrix[static_cast<std::size_t>(i) * cols + j];
      if (v == 0) continue;
      const i64 k = static_cast<i64>(j) - static_cast<i64>(i);
      const u32 key = static_cast<u32>(((k % slots) + slots) % slots);
      auto& diag = out.diagonals[key];
      if (diag.empty()) diag.assign(slots, 0);
      for (u32 b = 0; b < slots / d; ++b)
        diag[static_cast<std::size_t>(b) * d + i] += v;
    }
  }
  if (out.diagonals.empty()) out.diagonals[0].assign(slots, 0);
  return out;
}

PackedMatMul::PackedMatMul(const Encoder& encoder, std::span<const double> matrix, u32 rows,
                           u32 cols, u32 level, u32 slots, LinearTransformOptions options)
    : rows_(rows),
      cols_(cols),
      block_(block_width(rows, cols)),
      diagonals_(block_diagonals(matrix, rows, cols, slots)),
      transform_(encoder, diagonals_, level, std::nullopt, options) {}

Ciphertext PackedMatMul::evaluate(const Evaluator& ev, const Ciphertext& ct,
                                  const GaloisKeys& keys) const {
  return transform_.evaluate(ev, ct, keys);
}

}  // namespace theo
