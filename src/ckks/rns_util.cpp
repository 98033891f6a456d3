#include "ckks/rns_util.h"

#include <cmath>
#include <cstdio>

namespace theo::detail {

u32 reduce_long_double(long double v, u32 q) {
  if (std::fabs(v) < 0x1p62L) return reduce_i64(static_cast<i64>(v), q);
  // |v| = mag * 2^shift with mag < 2^64 holding every mantissa bit (v is integral, so a negative
  // shift only drops zero bits).
  int exponent = 0;
  const long double frac = std::frexp(std::fabs(v), &exponent);  // in [0.5, 1)
  u64 mag = static_cast<u64>(std::ldexp(frac, 64));
  int shift = exponent - 64;
  if (shift < 0) {
    mag >>= -shift;
    shift = 0;
  }
  const u32 m = static_cast<u32>(mag % q);
  const u32 r = mul_mod_ref(m, pow_mod(2, static_cast<u64>(shift), q), q);
  return v < 0 ? neg_mod(r, q) : r;
}

std::vector<u32> residues_of(long double v, const Context& ctx, const Basis& basis) {
  const long double r = std::round(v);
  std::vector<u32> out(basis.size);
  for (u32 i = 0; i < basis.size; ++i)
    out[i] = reduce_long_double(r, ctx.prime(basis[i]));
  return out;
}

u32 product_mod(const Context& ctx, std::span<const PrimeId> ids, u32 q) {
  u32 acc = 1 % q;
  for (const PrimeId id : ids)
    acc = mul_mod_ref(acc, ctx.prime(id) % q, q);
  return acc;
}

template <typename Int>
static void upload_signed_impl(const Context& ctx, std::span<const Int> coeffs, PolyRef dst) {
  const u32 n = dst.n;
  std::vector<u32> host(static_cast<std::size_t>(dst.limbs()) * n);
  for (u32 l = 0; l < dst.limbs(); ++l) {
    const u32 q = ctx.prime(dst.basis[l]);
    u32* row = host.data() + static_cast<std::size_t>(l) * n;
    for (u32 i = 0; i < n; ++i)
      row[i] = reduce_i64(static_cast<i64>(coeffs[i]), q);
  }
  ctx.backend().upload(host.data(), dst);
}

void upload_signed(const Context& ctx, std::span<const i32> coeffs, PolyRef dst) {
  upload_signed_impl(ctx, coeffs, dst);
}
void upload_signed(const Context& ctx, std::span<const i64> coeffs, PolyRef dst) {
  upload_signed_impl(ctx, coeffs, dst);
}

RnsPoly sample_uniform(const Context& ctx, Prng& prng, const Basis& basis) {
  Backend& be = ctx.backend();
  RnsPoly poly = be.make_poly(basis);
  const u32 n = ctx.n();
  std::vector<u32> host(static_cast<std::size_t>(basis.size) * n);
  for (u32 l = 0; l < basis.size; ++l) {
    const u32 q = ctx.prime(basis[l]);
    u32* row = host.data() + static_cast<std::size_t>(l) * n;
    for (u32 i = 0; i < n; ++i)
      row[i] = prng.uniform(q);
  }
  be.upload(host.data(), poly.ref());
  return poly;
}

RnsPoly small_poly_ntt(const Context& ctx, std::span<const i32> coeffs, const Basis& basis) {
  Backend& be = ctx.backend();
  RnsPoly poly = be.make_poly(basis);
  upload_signed(ctx, coeffs, poly.ref());
  const PolyRef refs[] = {poly.ref()};
  be.ntt(refs);
  return poly;
}

std::string scale_string(long double scale) {
  char buf[64];
  if (!(scale > 0)) {
    std::snprintf(buf, sizeof buf, "%Lg", scale);
  } else {
    std::snprintf(buf, sizeof buf, "2^%.6f", static_cast<double>(std::log2(scale)));
  }
  return buf;
}

}  // namespace theo::detail
