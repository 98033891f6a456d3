#pragma once
// BConv on the CPU (Cheddar Eq. 2 with the lazy SMR accumulation of §4.2), over one tile of
// coefficients at a time so that the centered inputs of the tile stay in cache for every output.

#include <vector>

#include "theo/ring/backend.h"

namespace theo::cpu {

// The constants of one BConvTable in the form the kernel consumes.
struct BConvConsts {
  u32 src_limbs = 0;
  u32 dst_limbs = 0;
  std::vector<u32> src_q;
  std::vector<ShoupConst> src_hat_inv;
  std::vector<Modulus> dst_mod;
  // [i * src_limbs + j] = center([(Q/s_j) * 2^32]_{d_i}): the Montgomery factor lets a single SMR
  // at the end both reduce the exact sum and undo the 2^32.
  std::vector<i32> matrix;
  // Exact mode: 1/s_j for the overflow estimate, and [Q * 2^32]_{d_i} centered to subtract v*Q.
  bool exact = false;
  std::vector<double> src_inv;
  std::vector<i32> q_mod_dst;
};

BConvConsts make_bconv_consts(const BConvTable& table, const Backend& be);

inline constexpr u32 kBConvTile = 256;

// out[i][c] for c in [c0, c0 + len), len <= kBConvTile. With `apply_hat_inv` the input holds x_j,
// otherwise it already holds [x_j (Q/s_j)^-1]_{s_j} (bconv_matmul). `scratch` is reused storage.
void bconv_tile(const BConvConsts& k, ConstPolyRef in, PolyRef out, bool apply_hat_inv, u32 c0,
                u32 len, std::vector<i32>& scratch);

}  // namespace theo::cpu
