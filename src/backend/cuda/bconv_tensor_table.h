#pragma once
// The byte-split BConv table of the tensor-core kernel (bconv_tensor.cu), built on the host.
//
// Sum_j t_j M_ij (t_j centered, M_ij = mont((Q/s_j) mod d_i)) is computed as Sum_k E_i[k] B[k]
// with 8-bit B: the canonical input word x_j = t_j + f_j s_j (f_j = 1 when x_j > s_j / 2) gives
// four bytes x_j[a], so E_i[(j, a)] = M_ij 2^(8a) mod d_i, and the flags f_j give one more byte
// each, with E_i[f_j] = -s_j M_ij mod d_i. The table entries E < d_i < 2^31 are split into four
// bytes E[b] too; the tensor cores sum the four byte matrices P_b = Sum_k E[b][k] B[k] exactly in
// 32 bits (at most 96 terms of 255 * 255 < 2^23), and the kernel adds Sum_b P_b 2^(8b) =
// Sum_k E[k] B[k] < 96 * 2^31 * 255 < 2^46 in 64 bits: congruent to the other kernels' sums, with
// no reduction between terms. One Montgomery step (the 2^32 in M) leaves the canonical word.
//
// K order: a lane c (0..3) of an mma.m16n8k32 B fragment holds 4-byte groups c and c + 4 of each
// 32-byte k-block; lane c's x words are j = c + 4r (r < r0 = ceil(src / 4)), in group 4r + c, and
// its flag word (byte a: f_{c + 4a}) in group 4 r0 + c, so each lane forms its B words from the
// inputs it loaded. Fragments are stored in the mma's A layout, one 16-byte load per lane.

#include <span>
#include <vector>

#include "theo/math/modarith.h"

namespace theo::cuda {

// Sources up to this size: three k-blocks (r0 = 4 x words and a flag word per lane).
inline constexpr u32 kBConvTensorMaxSrc = 16;

struct BConvTensorTable {
  u32 r0 = 0;       // x words per lane, ceil(src / 4); 0: no table (src > kBConvTensorMaxSrc)
  u32 kblocks = 0;  // 32-byte k-blocks, (r0 + 2) / 2
  u32 mtiles = 0;   // 16-row output tiles, ceil(dst / 16)
  // [((m * 4 + b) * kblocks + kb) * 32 + lane] x 4 words: the A fragment of byte plane b
  std::vector<u32> frags;
  // [16 mtiles] x 4 words {d, qinv, centered mont(Q mod d) (exact mode, else 0), 0}; padding
  // rows repeat the last row's modulus (never stored).
  std::vector<i32> rows;
};

// matrix: [i * src + j] centered mont((Q/s_j) mod d_i); q_mod_dst: [i] centered mont(Q mod d_i)
// or empty (not exact).
BConvTensorTable make_bconv_tensor_table(std::span<const Modulus> src, std::span<const Modulus> dst,
                                         std::span<const i32> matrix,
                                         std::span<const i32> q_mod_dst);

}  // namespace theo::cuda
