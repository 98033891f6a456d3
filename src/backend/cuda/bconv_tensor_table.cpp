#include "backend/cuda/bconv_tensor_table.h"

#include <stdexcept>

namespace theo::cuda {

BConvTensorTable make_bconv_tensor_table(std::span<const Modulus> src, std::span<const Modulus> dst,
                                         std::span<const i32> matrix,
                                         std::span<const i32> q_mod_dst) {
  const u32 ns = static_cast<u32>(src.size()), nd = static_cast<u32>(dst.size());
  BConvTensorTable t;
  if (ns == 0 || ns > kBConvTensorMaxSrc || nd == 0) return t;
  if (matrix.size() != static_cast<std::size_t>(ns) * nd ||
      (!q_mod_dst.empty() && q_mod_dst.size() != nd))
    throw std::logic_error("make_bconv_tensor_table: table sizes do not match the bases");
  t.r0 = (ns + 3) / 4;
  t.kblocks = (t.r0 + 2) / 2;
  t.mtiles = (nd + 15) / 16;

  // E_i of lane group (r, c), byte a: what multiplies byte a of lane c's B word r.
  const auto entry = [&](u32 i, u32 r, u32 c, u32 a) -> u64 {
    if (i >= nd) return 0;
    const u64 d = dst[i].q;
    const auto m_of = [&](u32 j) {
      const i64 m = matrix[static_cast<std::size_t>(i) * ns + j];
      return static_cast<u64>(m < 0 ? m + static_cast<i64>(d) : m);
    };
    if (r < t.r0) {
      const u32 j = c + 4 * r;
      return j < ns ? (m_of(j) << (8 * a)) % d : 0;
    }
    if (r == t.r0) {
      const u32 j = c + 4 * a;
      if (j >= ns) return 0;
      const u64 sm = (u64{src[j].q} % d) * m_of(j) % d;
      return (d - sm) % d;
    }
    return 0;
  };

  t.frags.assign(static_cast<std::size_t>(t.mtiles) * 4 * t.kblocks * 32 * 4, 0);
  for (u32 m = 0; m < t.mtiles; ++m)
    for (u32 b = 0; b < 4; ++b)
      for (u32 kb = 0; kb < t.kblocks; ++kb)
        for (u32 lane = 0; lane < 32; ++lane) {
          const u32 g = lane >> 2, c = lane & 3;
          const std::size_t at =
              ((((static_cast<std::size_t>(m) * 4 + b) * t.kblocks + kb) * 32) + lane) * 4;
          // a0: row g, k 4c..; a1: row g + 8; a2 / a3: the same rows at k 16 + 4c.. (lane c's
          // second B word of the k-block).
          for (u32 reg = 0; reg < 4; ++reg) {
            const u32 row = 16 * m + g + ((reg & 1) ? 8 : 0);
            const u32 r = 2 * kb + (reg >> 1);
            u32 word = 0;
            for (u32 a = 0; a < 4; ++a)
              word |= static_cast<u32>((entry(row, r, c, a) >> (8 * b)) & 0xffu) << (8 * a);
            t.frags[at + reg] = word;
          }
        }

  t.rows.assign(static_cast<std::size_t>(t.mtiles) * 16 * 4, 0);
  for (u32 i = 0; i < 16 * t.mtiles; ++i) {
    const Modulus& d = dst[i < nd ? i : nd - 1];
    t.rows[4 * i] = static_cast<i32>(d.q);
    t.rows[4 * i + 1] = d.qinv;
    t.rows[4 * i + 2] = (!q_mod_dst.empty() && i < nd) ? q_mod_dst[i] : 0;
  }
  return t;
}

}  // namespace theo::cuda
