#include "backend/cpu/ntt_kernels.h"

namespace theo::cpu {

// Values stay canonical between stages: with q up to 2^31 a lazy [0, 4q) range would not fit
// in 32 bits, and a canonical Shoup butterfly is only two conditional subtractions more.
namespace {

inline void ct_butterfly(u32* x, u32* y, u32 len, ShoupConst w, u32 q) {
  for (u32 j = 0; j < len; ++j) {
    const u32 u = x[j];
    const u32 v = shoup_mul(y[j], w, q);
    x[j] = add_mod(u, v, q);
    y[j] = sub_mod(u, v, q);
  }
}

inline void gs_butterfly(u32* x, u32* y, u32 len, ShoupConst w, u32 q) {
  for (u32 j = 0; j < len; ++j) {
    const u32 u = x[j];
    const u32 v = y[j];
    x[j] = add_mod(u, v, q);
    y[j] = shoup_mul(sub_mod(u, v, q), w, q);
  }
}

}  // namespace

void ntt_limb(u32* a, const NttTable& t, const u32* c) {
  const u32 q = t.q;
  const u32 n = u32{1} << t.log_n;
  u32 half = n / 2;
  // First stage (one group, twiddle psi^brev(1)) with the constant folded into both operands.
  if (c != nullptr) {
    const ShoupConst cu = make_shoup(*c, q);
    const ShoupConst cv = make_shoup(mul_mod_ref(*c, t.fwd[1].w, q), q);
    for (u32 j = 0; j < half; ++j) {
      const u32 u = shoup_mul(a[j], cu, q);
      const u32 v = shoup_mul(a[j + half], cv, q);
      a[j] = add_mod(u, v, q);
      a[j + half] = sub_mod(u, v, q);
    }
  } else {
    ct_butterfly(a, a + half, half, t.fwd[1], q);
  }
  for (u32 m = 2; m < n; m <<= 1) {
    half >>= 1;
    for (u32 i = 0; i < m; ++i) {
      u32* x = a + 2 * i * half;
      ct_butterfly(x, x + half, half, t.fwd[m + i], q);
    }
  }
}

void intt_limb(u32* a, const NttTable& t, const u32* c) {
  const u32 q = t.q;
  const u32 n = u32{1} << t.log_n;
  u32 half = 1;
  for (u32 m = n / 2; m > 1; m >>= 1) {
    for (u32 i = 0; i < m; ++i) {
      u32* x = a + 2 * i * half;
      gs_butterfly(x, x + half, half, t.inv[m + i], q);
    }
    half <<= 1;
  }
  // Last stage (one group, twiddle psi^-brev(1)) with N^-1 and the constant folded in.
  const u32 scale = c != nullptr ? mul_mod_ref(t.n_inv.w, *c, q) : t.n_inv.w;
  const ShoupConst cu = make_shoup(scale, q);
  const ShoupConst cv = make_shoup(mul_mod_ref(scale, t.inv[1].w, q), q);
  for (u32 j = 0; j < half; ++j) {
    const u32 u = a[j];
    const u32 v = a[j + half];
    a[j] = shoup_mul(add_mod(u, v, q), cu, q);
    a[j + half] = shoup_mul(sub_mod(u, v, q), cv, q);
  }
}

}  // namespace theo::cpu
