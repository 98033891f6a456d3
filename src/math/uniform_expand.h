#pragma once
// Counter-based expansion of a 32-byte seed into uniform residues (Backend::sample_uniform), shared
// by the CPU backend, the CUDA kernel and the tests so that every backend computes the same words.
//
// Word i of the limb over prime id p (modulus q) is the ChaCha20 block (RFC 8439) keyed by the
// seed, block counter i / 4, nonce = stream_id (8 bytes little endian) || p (4 bytes little
// endian); its words 4 (i % 4) .. 4 (i % 4) + 3, as a little-endian 128-bit integer V, give
// V mod q. V is uniform on [0, 2^128), so the result is within statistical distance q / 2^128 of
// uniform on [0, q) per word (< 2^-96 for q < 2^32): no rejection, a fixed amount of work per word.

#include "math/chacha.h"
#include "theo/common.h"

namespace theo::uniform_expand {

inline constexpr u32 kBlockWords = chacha::kBlockWords;  // 32-bit words of one ChaCha20 block
inline constexpr u32 kWordsPerValue = 4;                 // 128 bits of keystream per residue
inline constexpr u32 kValuesPerBlock = kBlockWords / kWordsPerValue;

// The seed as eight little-endian 32-bit key words (chacha::make_key).
using Key = chacha::Key;
using chacha::make_key;

// The ChaCha20 block function of RFC 8439 section 2.3: out = 20 rounds of the state + the state.
THEO_HD void chacha20_block(const Key& key, u32 counter, u32 nonce0, u32 nonce1, u32 nonce2,
                            u32 out[kBlockWords]) {
  chacha::block<20, 1>(key, counter, nonce0, nonce1, nonce2, out);
}

// floor(x / 2^64 * y): the high word of the 128-bit product.
THEO_HD u64 mulhi64(u64 x, u64 y) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(x, y);
#else
  __extension__ using U128 = unsigned __int128;
  return static_cast<u64>((static_cast<U128>(x) * y) >> 64);
#endif
}

// Barrett constant of q for reduce_u128: floor((2^64 - 1) / q) (= floor(2^64 / q), q odd > 1).
THEO_HD u64 barrett64(u32 q) {
  return ~u64{0} / q;
}

// x mod q for any x < 2^64: the Barrett quotient is floor(x / q) or one less (x mu / 2^64 >
// x / q - x / 2^64 > x / q - 1), so one conditional subtraction makes the remainder exact.
THEO_HD u32 reduce_u64(u64 x, u32 q, u64 mu) {
  const u64 r = x - mulhi64(x, mu) * q;
  return static_cast<u32>(r >= q ? r - q : r);
}

// (w3 2^96 + w2 2^64 + w1 2^32 + w0) mod q by Horner's rule on exact 64-bit remainders.
THEO_HD u32 reduce_u128(u32 w0, u32 w1, u32 w2, u32 w3, u32 q, u64 mu) {
  u64 r = reduce_u64(w3, q, mu);
  r = reduce_u64((r << 32) | w2, q, mu);
  r = reduce_u64((r << 32) | w1, q, mu);
  return reduce_u64((r << 32) | w0, q, mu);
}

// The kValuesPerBlock residues of one keystream block (16 words, as produced by chacha20_block).
THEO_HD void reduce_block(const u32 ks[kBlockWords], u32 q, u64 mu, u32 out[kValuesPerBlock]) {
  for (u32 j = 0; j < kValuesPerBlock; ++j) {
    const u32* v = ks + j * kWordsPerValue;
    out[j] = reduce_u128(v[0], v[1], v[2], v[3], q, mu);
  }
}

// The kValuesPerBlock residues of block `block` of the limb over `prime`: words
// block * kValuesPerBlock + j, j < kValuesPerBlock. mu = barrett64(q).
THEO_HD void expand_block(const Key& key, u64 stream_id, u32 prime, u32 block, u32 q, u64 mu,
                          u32 out[kValuesPerBlock]) {
  u32 ks[kBlockWords];
  chacha20_block(key, block, static_cast<u32>(stream_id), static_cast<u32>(stream_id >> 32), prime,
                 ks);
  reduce_block(ks, q, mu, out);
}

}  // namespace theo::uniform_expand
