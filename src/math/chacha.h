#pragma once
// The ChaCha block function (RFC 8439 section 2.3) with 8, 12 or 20 rounds (the round count the
// only change), on the host and on the GPU: the PRF of both seed expansions, uniform_expand.h
// (ChaCha20, Backend::sample_uniform) and compact_expand.h (a compact key's uniform half).

#include "theo/common.h"

namespace theo::chacha {

inline constexpr u32 kBlockWords = 16;  // 32-bit words of one block

// The seed as eight little-endian 32-bit words (the ChaCha key).
struct Key {
  u32 w[8];
};

template <typename Bytes>
inline Key make_key(const Bytes& seed) {
  Key k{};
  for (u32 i = 0; i < 8; ++i) {
    k.w[i] = static_cast<u32>(seed[4 * i]) | (static_cast<u32>(seed[4 * i + 1]) << 8) |
             (static_cast<u32>(seed[4 * i + 2]) << 16) | (static_cast<u32>(seed[4 * i + 3]) << 24);
  }
  return k;
}

THEO_HD u32 rotl(u32 x, int r) {
  return (x << r) | (x >> (32 - r));
}

#define THEO_CHACHA_QR(a, b, c, d) \
  a += b;                          \
  d = rotl(d ^ a, 16);             \
  c += d;                          \
  b = rotl(b ^ c, 12);             \
  a += b;                          \
  d = rotl(d ^ a, 8);              \
  c += d;                          \
  b = rotl(b ^ c, 7)

// out = kRounds rounds of the state + the state, the state being the constants, the key and the
// words 12..15 (w12 .. w15: block counter and nonce, laid out by the caller). Named scalars, not an
// array, so that the GPU keeps the state in registers. On the GPU the double rounds are unrolled
// kUnroll at a time: all of them where the block sits in KeyMult's inner loop (compact keys), one
// (a loop) in the sampler's kernel.
template <int kRounds, int kUnroll = kRounds / 2>
THEO_HD void block(const Key& key, u32 w12, u32 w13, u32 w14, u32 w15, u32 out[kBlockWords]) {
  static_assert(kRounds == 8 || kRounds == 12 || kRounds == 20, "ChaCha8, 12 or 20");
  const u32 s0 = 0x61707865u, s1 = 0x3320646eu, s2 = 0x79622d32u, s3 = 0x6b206574u;
  u32 x0 = s0, x1 = s1, x2 = s2, x3 = s3;
  u32 x4 = key.w[0], x5 = key.w[1], x6 = key.w[2], x7 = key.w[3];
  u32 x8 = key.w[4], x9 = key.w[5], x10 = key.w[6], x11 = key.w[7];
  u32 x12 = w12, x13 = w13, x14 = w14, x15 = w15;
#if defined(__CUDA_ARCH__)
#pragma unroll kUnroll
#endif
  for (int round = 0; round < kRounds / 2; ++round) {
    THEO_CHACHA_QR(x0, x4, x8, x12);  // column round
    THEO_CHACHA_QR(x1, x5, x9, x13);
    THEO_CHACHA_QR(x2, x6, x10, x14);
    THEO_CHACHA_QR(x3, x7, x11, x15);
    THEO_CHACHA_QR(x0, x5, x10, x15);  // diagonal round
    THEO_CHACHA_QR(x1, x6, x11, x12);
    THEO_CHACHA_QR(x2, x7, x8, x13);
    THEO_CHACHA_QR(x3, x4, x9, x14);
  }
  out[0] = x0 + s0;
  out[1] = x1 + s1;
  out[2] = x2 + s2;
  out[3] = x3 + s3;
  out[4] = x4 + key.w[0];
  out[5] = x5 + key.w[1];
  out[6] = x6 + key.w[2];
  out[7] = x7 + key.w[3];
  out[8] = x8 + key.w[4];
  out[9] = x9 + key.w[5];
  out[10] = x10 + key.w[6];
  out[11] = x11 + key.w[7];
  out[12] = x12 + w12;
  out[13] = x13 + w13;
  out[14] = x14 + w14;
  out[15] = x15 + w15;
}

#undef THEO_CHACHA_QR

}  // namespace theo::chacha
