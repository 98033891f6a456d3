#include "backend/cpu/bconv_kernels.h"

#include <cmath>

namespace theo::cpu {

BConvConsts make_bconv_consts(const BConvTable& table, const Backend& be) {
  BConvConsts k;
  k.src_limbs = table.src.size;
  k.dst_limbs = table.dst.size;
  for (u32 j = 0; j < k.src_limbs; ++j) {
    const u32 q = be.modulus(table.src[j]).q;
    k.src_q.push_back(q);
    k.src_hat_inv.push_back(make_shoup(table.src_hat_inv[j], q));
  }
  k.matrix.resize(table.matrix.size());
  for (u32 i = 0; i < k.dst_limbs; ++i) {
    const Modulus& m = be.modulus(table.dst[i]);
    k.dst_mod.push_back(m);
    for (u32 j = 0; j < k.src_limbs; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * k.src_limbs + j;
      k.matrix[at] = center(to_mont(table.matrix[at], m), m.q);
    }
  }
  k.exact = table.exact;
  if (k.exact) {
    k.src_inv = table.src_inv;
    for (u32 i = 0; i < k.dst_limbs; ++i)
      k.q_mod_dst.push_back(center(to_mont(table.q_mod_dst[i], k.dst_mod[i]), k.dst_mod[i].q));
  }
  return k;
}

namespace {

// Each product |t_j * m_ij| < 2^30 * p/2 = 2^29 p, so four of them added to a value in
// [-2^31 p, 2^31 p) stay inside (-2^32 p, 2^32 p) < 2^63; one conditional +-2^32 p (a multiple of
// p) brings the sum back to [-2^31 p, 2^31 p), which is also SMR's input range.
constexpr u32 kProductsPerFold = 4;

inline void fold(i64* acc, u32 len, i64 lim, i64 wrap) {
  for (u32 c = 0; c < len; ++c) {
    i64 a = acc[c];
    a -= (a >= lim) ? wrap : 0;
    a += (a < -lim) ? wrap : 0;
    acc[c] = a;
  }
}

}  // namespace

void bconv_tile(const BConvConsts& k, ConstPolyRef in, PolyRef out, bool apply_hat_inv, u32 c0,
                u32 len, std::vector<i32>& scratch) {
  const u32 s_limbs = k.src_limbs;
  scratch.resize(static_cast<std::size_t>(s_limbs) * len);
  for (u32 j = 0; j < s_limbs; ++j) {
    const u32* x = in.limb(j) + c0;
    i32* t = scratch.data() + static_cast<std::size_t>(j) * len;
    const u32 q = k.src_q[j];
    if (apply_hat_inv) {
      const ShoupConst w = k.src_hat_inv[j];
      for (u32 c = 0; c < len; ++c)
        t[c] = center(shoup_mul(x[c], w, q), q);
    } else {
      for (u32 c = 0; c < len; ++c)
        t[c] = center(x[c], q);
    }
  }

  // Exact mode: v = round(sum_j t_j / s_j), summed in j order in double as the contract fixes.
  i64 overflow[kBConvTile];
  if (k.exact) {
    for (u32 c = 0; c < len; ++c) {
      double a = 0.0;
      for (u32 j = 0; j < s_limbs; ++j)
        a = a + static_cast<double>(scratch[static_cast<std::size_t>(j) * len + c]) * k.src_inv[j];
      overflow[c] = static_cast<i64>(std::floor(a + 0.5));
    }
  }

  i64 acc[kBConvTile];
  for (u32 i = 0; i < k.dst_limbs; ++i) {
    const Modulus& p = k.dst_mod[i];
    const i64 lim = static_cast<i64>(p.q) << 31;
    const i64 wrap = static_cast<i64>(p.q) << 32;
    const i32* row = k.matrix.data() + static_cast<std::size_t>(i) * s_limbs;
    for (u32 c = 0; c < len; ++c)
      acc[c] = 0;
    for (u32 j = 0; j < s_limbs; ++j) {
      const i64 m = row[j];
      const i32* t = scratch.data() + static_cast<std::size_t>(j) * len;
      for (u32 c = 0; c < len; ++c)
        acc[c] += t[c] * m;
      if (j % kProductsPerFold == kProductsPerFold - 1) fold(acc, len, lim, wrap);
    }
    if (k.exact) {
      const i64 qm = k.q_mod_dst[i];
      for (u32 c = 0; c < len; ++c)
        acc[c] -= overflow[c] * qm;
    }
    fold(acc, len, lim, wrap);
    u32* y = out.limb(i) + c0;
    for (u32 c = 0; c < len; ++c)
      y[c] = canon(smr(acc[c], p), p.q);
  }
}

}  // namespace theo::cpu
