#include <span>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"

namespace theo::cpu {

namespace {

// canon() and mul_mod_nb() without a data-dependent branch: on random residues a branch mispredicts
// half the time, which made a plain mul several times slower than the memory traffic.
inline u32 canon_nb(i32 y, u32 q) {
  return static_cast<u32>(y) + (static_cast<u32>(y >> 31) & q);
}
inline u32 mul_mod_nb(u32 a, u32 b, const Modulus& m) {
  const i32 t = smr(static_cast<i64>(a) * b, m);
  return canon_nb(smr(static_cast<i64>(t) * m.r2_mod, m), m.q);
}

}  // namespace

template <void (CpuBackend::*One)(ConstPolyRef, ConstPolyRef, PolyRef)>
void CpuBackend::binary_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                              std::span<const PolyRef> out) {
  if (deferred([this, a = owned(a), b = owned(b), o = owned(out)] { binary_batch<One>(a, b, o); }))
    return;
  for (std::size_t k = 0; k < a.size(); ++k)
    (this->*One)(a[k], b[k], out[k]);
}

void CpuBackend::do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                              std::span<const PolyRef> out) {
  binary_batch<&CpuBackend::do_add>(a, b, out);
}

void CpuBackend::do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                              std::span<const PolyRef> out) {
  binary_batch<&CpuBackend::do_sub>(a, b, out);
}

// Every op here is per limb and per word; aliasing an output with an input of the same shape is
// safe because each word is read before it is written.

template <u32 (*Op)(u32, u32, u32)>
void CpuBackend::binary_mod(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  if (deferred([this, a, b, out] { binary_mod<Op>(a, b, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const u32 *x = a.limb(l), *y = b.limb(l);
    return [=](u32 c) { return Op(x[c], y[c], q); };
  });
}

void CpuBackend::do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  binary_mod<add_mod>(a, b, out);
}

void CpuBackend::do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  binary_mod<sub_mod>(a, b, out);
}

void CpuBackend::do_neg(ConstPolyRef a, PolyRef out) {
  if (deferred([this, a, out] { do_neg(a, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const u32* x = a.limb(l);
    return [=](u32 c) { return neg_mod(x[c], q); };
  });
}

void CpuBackend::do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  if (deferred([this, a, b, out] { do_mul(a, b, out); })) return;
  map_words(out, [&](u32 l) {
    const Modulus m = modulus(a.basis[l]);
    const u32 *x = a.limb(l), *y = b.limb(l);
    return [=](u32 c) { return mul_mod_nb(x[c], y[c], m); };
  });
}

void CpuBackend::do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) {
  if (deferred([this, a, b, c, out] { do_mul_add(a, b, c, out); })) return;
  map_words(out, [&](u32 l) {
    const Modulus m = modulus(a.basis[l]);
    const u32 *x = a.limb(l), *y = b.limb(l), *w = c.limb(l);
    return [=](u32 i) { return add_mod(mul_mod_nb(x[i], y[i], m), w[i], m.q); };
  });
}

void CpuBackend::do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  if (deferred([this, a, s = owned(s), out] { do_mul_scalar(a, s, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const ShoupConst w = make_shoup(s[l], q);
    const u32* x = a.limb(l);
    return [=](u32 c) { return shoup_mul(x[c], w, q); };
  });
}

void CpuBackend::do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  if (deferred([this, a, s = owned(s), out] { do_add_scalar(a, s, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const u32 v = s[l];
    const u32* x = a.limb(l);
    return [=](u32 c) { return add_mod(x[c], v, q); };
  });
}

void CpuBackend::do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                                   PolyRef out) {
  if (deferred([this, a, s = owned(s), b, out] { do_mul_scalar_add(a, s, b, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const ShoupConst w = make_shoup(s[l], q);
    const u32 *x = a.limb(l), *y = b.limb(l);
    return [=](u32 c) { return add_mod(shoup_mul(x[c], w, q), y[c], q); };
  });
}

void CpuBackend::do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                                   PolyRef out) {
  if (deferred([this, a, b, s = owned(s), out] { do_sub_mul_scalar(a, b, s, out); })) return;
  map_words(out, [&](u32 l) {
    const u32 q = modulus(a.basis[l]).q;
    const ShoupConst w = make_shoup(s[l], q);
    const u32 *x = a.limb(l), *y = b.limb(l);
    return [=](u32 c) { return shoup_mul(sub_mod(x[c], y[c], q), w, q); };
  });
}

void CpuBackend::do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                           PolyRef d0, PolyRef d1, PolyRef d2) {
  if (deferred([=, this] { do_tensor(a0, a1, b0, b1, d0, d1, d2); })) return;
  for_limbs(a0.limbs(), [&](u32 l) {
    const u32 n = a0.n;  // a local bound, so stores cannot alias it
    const Modulus m = modulus(a0.basis[l]);
    const u32 *x0 = a0.limb(l), *x1 = a1.limb(l), *y0 = b0.limb(l), *y1 = b1.limb(l);
    u32 *z0 = d0.limb(l), *z1 = d1.limb(l), *z2 = d2.limb(l);
    for (u32 c = 0; c < n; ++c) {
      const u32 u0 = x0[c], u1 = x1[c], v0 = y0[c], v1 = y1[c];
      z0[c] = mul_mod_nb(u0, v0, m);
      z1[c] = add_mod(mul_mod_nb(u0, v1, m), mul_mod_nb(u1, v0, m), m.q);
      z2[c] = mul_mod_nb(u1, v1, m);
    }
  });
}

void CpuBackend::do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                                   PolyRef out) {
  if (deferred([this, a = owned(a), s = owned(s), out] { do_mul_scalar_sum(a, s, out); })) return;
  const u32 limbs = out.limbs();
  for_limbs(limbs, [&](u32 l) {
    const u32 n = out.n;  // a local bound, so stores cannot alias it
    const u32 q = modulus(out.basis[l]).q;
    u32* z = out.limb(l);
    for (std::size_t k = 0; k < a.size(); ++k) {
      const ShoupConst w = make_shoup(s[k * limbs + l], q);
      const u32* x = a[k].limb(l);
      if (k == 0) {
        for (u32 c = 0; c < n; ++c)
          z[c] = shoup_mul(x[c], w, q);
      } else {
        for (u32 c = 0; c < n; ++c)
          z[c] = add_mod(z[c], shoup_mul(x[c], w, q), q);
      }
    }
  });
}

void CpuBackend::do_key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                             std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) {
  if (deferred([this, d = owned(digits), b = owned(kb), a = owned(ka), out0, out1] {
        do_key_mult(d, b, a, out0, out1);
      }))
    return;
  key_mult_rows(digits, nullptr, kb, ka, out0, out1);
}

void CpuBackend::do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                                         std::span<const ConstPolyRef> kb,
                                         std::span<const ConstPolyRef> ka, PolyRef out0,
                                         PolyRef out1, ConstPolyRef add0) {
  if (deferred([this, d = owned(digits), g, b = owned(kb), a = owned(ka), out0, out1, add0] {
        do_key_mult_automorphed(d, g, b, a, out0, out1, add0);
      }))
    return;
  const std::vector<u32> map = automorphism_map(g);
  key_mult_rows(digits, map.data(), kb, ka, out0, out1);
  if (add0.words() == 0) return;
  for_limbs(out0.limbs(), [&](u32 l) {
    const u32 q = modulus(out0.basis[l]).q;
    const u32* x = add0.limb(l);
    u32* z = out0.limb(l);
    for (u32 c = 0; c < out0.n; ++c)
      z[c] = add_mod(z[c], x[map[c]], q);
  });
}

void CpuBackend::key_mult_rows(std::span<const ConstPolyRef> digits, const u32* map,
                               std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                               PolyRef out0, PolyRef out1) {
  const std::size_t dnum = digits.size();
  for_limbs(out0.limbs(), [&](u32 l) {
    const u32 n = out0.n;  // a local bound, so stores cannot alias it
    const Modulus m = modulus(out0.basis[l]);
    // Each SMR term d*k*2^-32 lies in (-q, q), so the plain i64 sum s (|s| < dnum q) is still in
    // SMR's input range: smr(s) = s 2^-32, and smr(smr(s) * 2^96) = s 2^32 = sum of d*k.
    const i64 r3 = mul_mod_ref(m.r2_mod, m.r_mod, m.q);
    std::vector<const u32*> dp(dnum), bp(dnum), ap(dnum);
    for (std::size_t k = 0; k < dnum; ++k) {
      dp[k] = digits[k].limb(l);
      bp[k] = kb[k].limb(l);
      ap[k] = ka[k].limb(l);
    }
    u32 *z0 = out0.limb(l), *z1 = out1.limb(l);
    for (u32 c = 0; c < n; ++c) {
      const u32 src = map ? map[c] : c;  // the digits' word phi_g reads (identity: c)
      i64 s0 = 0, s1 = 0;
      for (std::size_t k = 0; k < dnum; ++k) {
        const i64 d = dp[k][src];
        s0 += smr(d * bp[k][c], m);
        s1 += smr(d * ap[k][c], m);
      }
      z0[c] = canon_nb(smr(smr(s0, m) * r3, m), m.q);
      z1[c] = canon_nb(smr(smr(s1, m) * r3, m), m.q);
    }
  });
}

void CpuBackend::do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) {
  if (deferred([this, a, k, out] { do_mul_monomial(a, k, out); })) return;
  // Evaluation i sits at psi^(2 brev(i) + 1), where X^k evaluates to psi^((2 brev(i) + 1) k).
  const i64 two_n = i64{2} << ring_.log_n;
  const u64 kk = static_cast<u64>(((k % two_n) + two_n) % two_n);
  const u32 nn = n();
  // Per evaluation: index into the forward table (fwd[brev(j)] = psi^j) and whether psi^N = -1
  // flips the sign.
  std::vector<u32> at(nn);
  std::vector<std::uint8_t> flip(nn);
  for (u32 i = 0; i < nn; ++i) {
    const u32 e =
        static_cast<u32>((static_cast<u64>(2 * brev_[i] + 1) * kk) % static_cast<u64>(two_n));
    flip[i] = e >= nn;
    at[i] = brev_[e >= nn ? e - nn : e];
  }
  std::vector<const NttTable*> tables(a.limbs());
  for (u32 l = 0; l < a.limbs(); ++l)
    tables[l] = &ntt_table(a.basis[l]);
  for_limbs(a.limbs(), [&](u32 l) {
    const NttTable& t = *tables[l];
    const u32 q = t.q;
    const u32* x = a.limb(l);
    u32* z = out.limb(l);
    for (u32 i = 0; i < nn; ++i) {
      const u32 v = shoup_mul(x[i], t.fwd[at[i]], q);
      z[i] = flip[i] ? neg_mod(v, q) : v;
    }
  });
}

}  // namespace theo::cpu
