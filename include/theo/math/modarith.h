#pragma once
// 32-bit modular arithmetic for primes q < 2^31, shared by host and device code.
//
// Stored data is always canonical: residues in [0, q). Inside a computation values may be signed
// and lazily reduced; signed Montgomery reduction (SMR, Cheddar Alg. 2) is the workhorse:
//   smr(x) = x * 2^-32 mod q, for x in [-q*2^31, q*2^31), result in (-q, q).
// A constant c is multiplied as smr(a * mont(c)) with mont(c) = c * 2^32 mod q, so no conversion
// into or out of Montgomery form is ever needed for data.

#include "theo/common.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace theo {

// Upper 32 bits of the signed 64-bit product.
THEO_HD i32 mulhi_s32(i32 a, i32 b) {
#if defined(__CUDA_ARCH__)
  return __mulhi(a, b);
#else
  return static_cast<i32>((static_cast<i64>(a) * static_cast<i64>(b)) >> 32);
#endif
}

// Per-prime constants for signed Montgomery arithmetic.
struct Modulus {
  u32 q = 0;       // the prime, < 2^31
  i32 qinv = 0;    // q^-1 mod 2^32, as a signed word (Cheddar's m_i)
  u32 r_mod = 0;   // 2^32 mod q (Montgomery form of 1)
  u32 r2_mod = 0;  // 2^64 mod q (mont(x) = smr(x * r2))
};

// q^-1 mod 2^32 by Newton iteration (q odd).
constexpr u32 inverse_mod_2_32(u32 q) {
  u32 x = q;  // correct to 3 bits for odd q
  for (int i = 0; i < 5; ++i)
    x *= 2u - q * x;
  return x;
}

constexpr Modulus make_modulus(u32 q) {
  Modulus m;
  m.q = q;
  m.qinv = static_cast<i32>(inverse_mod_2_32(q));
  const u64 r = (u64{1} << 32) % q;
  m.r_mod = static_cast<u32>(r);
  m.r2_mod = static_cast<u32>((r * r) % q);
  return m;
}

// Signed Montgomery reduction (Cheddar Alg. 2). x in [-q*2^31, q*2^31) -> x*2^-32 mod q in (-q, q).
THEO_HD i32 smr(i64 x, u32 q, i32 qinv) {
  const u32 xlo = static_cast<u32>(static_cast<u64>(x));
  const i32 xhi = static_cast<i32>(x >> 32);
  const i32 z = static_cast<i32>(xlo * static_cast<u32>(qinv));
  return xhi - mulhi_s32(z, static_cast<i32>(q));
}
THEO_HD i32 smr(i64 x, const Modulus& m) {
  return smr(x, m.q, m.qinv);
}

// (-q, q) -> [0, q)
THEO_HD u32 canon(i32 y, u32 q) {
  return static_cast<u32>(y) + ((y < 0) ? q : 0u);
}

// [0, 2q) -> [0, q)
THEO_HD u32 reduce_once(u32 x, u32 q) {
  return x >= q ? x - q : x;
}

// Centered representative of a canonical residue: [0, q) -> (-q/2, q/2].
THEO_HD i32 center(u32 x, u32 q) {
  return static_cast<i32>(x) - ((x > (q >> 1)) ? static_cast<i32>(q) : 0);
}

THEO_HD u32 add_mod(u32 a, u32 b, u32 q) {
  return reduce_once(a + b, q);
}
THEO_HD u32 sub_mod(u32 a, u32 b, u32 q) {
  return a >= b ? a - b : a + q - b;
}
THEO_HD u32 neg_mod(u32 a, u32 q) {
  return a == 0 ? 0u : q - a;
}

// a * b * 2^-32 mod q, canonical. a, b in [0, q) (or any signed values with |a*b| < q*2^31).
THEO_HD u32 mont_mul(i64 a, i64 b, const Modulus& m) {
  return canon(smr(a * b, m), m.q);
}

// a * b mod q for canonical a, b: two reductions (the second folds in 2^64 mod q).
THEO_HD u32 mul_mod(u32 a, u32 b, const Modulus& m) {
  const i32 t = smr(static_cast<i64>(a) * b, m);
  return canon(smr(static_cast<i64>(t) * m.r2_mod, m), m.q);
}

// Montgomery form of a canonical constant: c * 2^32 mod q.
THEO_HD u32 to_mont(u32 c, const Modulus& m) {
  return canon(smr(static_cast<i64>(c) * m.r2_mod, m), m.q);
}
THEO_HD u32 from_mont(u32 c, const Modulus& m) {
  return canon(smr(static_cast<i64>(c), m), m.q);
}

// Shoup multiplication by a fixed constant w: w_shoup = floor(w * 2^32 / q). Result in [0, q).
struct ShoupConst {
  u32 w = 0;
  u32 w_shoup = 0;
};
constexpr ShoupConst make_shoup(u32 w, u32 q) {
  return ShoupConst{w, static_cast<u32>((static_cast<u64>(w) << 32) / q)};
}
THEO_HD u32 shoup_mul(u32 a, ShoupConst c, u32 q) {
  const u32 hi = static_cast<u32>((static_cast<u64>(a) * c.w_shoup) >> 32);
  const u32 r = a * c.w - hi * q;  // in [0, 2q)
  return reduce_once(r, q);
}
// Lazy variant: result in [0, 2q), input may be any u32.
THEO_HD u32 shoup_mul_lazy(u32 a, ShoupConst c, u32 q) {
  const u32 hi = static_cast<u32>((static_cast<u64>(a) * c.w_shoup) >> 32);
  return a * c.w - hi * q;
}

// Plain reference arithmetic (64-bit %), for tables and tests; not for hot loops.
constexpr u32 mul_mod_ref(u32 a, u32 b, u32 q) {
  return static_cast<u32>((static_cast<u64>(a) * b) % q);
}
constexpr u32 pow_mod(u32 base, u64 e, u32 q) {
  u64 r = 1 % q, b = base % q;
  while (e) {
    if (e & 1) r = (r * b) % q;
    b = (b * b) % q;
    e >>= 1;
  }
  return static_cast<u32>(r);
}
// Inverse modulo a prime q (Fermat). inv_mod(0) is 0.
constexpr u32 inv_mod(u32 a, u32 q) {
  return pow_mod(a, q - 2, q);
}

}  // namespace theo
