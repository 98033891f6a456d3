#pragma once
// Plaintext matrix x encrypted packed vectors, through LinearTransform (diagonal method with
// baby-step/giant-step and double hoisting: about 2 sqrt(2d) rotations for a d x d block).
//
// Packing: the slots are cut into blocks of width d = next power of two >= max(rows, cols);
// block b holds a vector x_b of length cols at its slots [0, cols) (zeros, or anything, beyond:
// the matrix's padded columns are zero). The product puts y_b = M x_b at slots [0, rows) of block
// b, zeros after. With one block (d = slots) or a tiled vector this is a matrix-vector product
// (a fully connected layer); with slots / d different vectors in the blocks it is the
// matrix-matrix product M X, X's columns in the blocks. One level.

#include <span>
#include <vector>

#include "theo/circuits/linear_transform.h"

namespace theo {

// The generalized diagonals of the block-diagonal matrix diag(M, M, ...) on `slots` slots
// (row-major M, rows x cols, both <= the block width). ParameterError for bad shapes or a
// non-finite entry (naming it).
DiagonalMatrix block_diagonals(std::span<const double> matrix, u32 rows, u32 cols, u32 slots);

class PackedMatMul {
 public:
  // M encoded once for an input at `level` with `slots` slots (LinearTransform's rules).
  PackedMatMul(const Encoder& encoder, std::span<const double> matrix, u32 rows, u32 cols,
               u32 level, u32 slots, LinearTransformOptions options = {});

  // ct at level() (higher levels are brought down), default scale. Output at level() - 1.
  Ciphertext evaluate(const Evaluator& ev, const Ciphertext& ct, const GaloisKeys& keys) const;
  std::vector<int> rotations() const { return transform_.rotations(); }
  u32 level() const { return transform_.level(); }
  u32 rows() const { return rows_; }
  u32 cols() const { return cols_; }
  u32 block() const { return block_; }  // d
  // Plaintext reference on a packed slot vector.
  std::vector<Complex> apply(const std::vector<Complex>& x) const { return diagonals_.apply(x); }

 private:
  u32 rows_ = 0, cols_ = 0, block_ = 0;
  DiagonalMatrix diagonals_;
  LinearTransform transform_;
};

}  // namespace theo
