#pragma once
// Expansion of a compact switching key's uniform half `a` from a 32-byte seed, shared by the CPU
// reference, CUDA kernels and the tests so that every backend computes the same words
// (docs/compact-keys.md has the reasoning: PRF and round count, nonce layout, sampling, cost).
//
// Word i of digit k of the limb over prime q of key `key_index`, i in [0, N), N a multiple of 16:
//   - ChaCha with kRounds rounds (8, 12 or 20; the RFC 8439 block function, the round count the
//     only change), keyed by the seed; state words 12..15 ("nonce") from nonce_words():
//       w12 = counter, w13 = key_index, w14 = kDomain << 24 | stream << 16 | digit, w15 = q.
//   - Primary candidate: word i % 16 of the block (counter i / 16, digit k, stream 0).
//   - Lemire's exact rejection (Lemire, ACM TOMACS 2019): c -> floor(c q / 2^32), accepted iff
//     (c q) mod 2^32 >= 2^32 mod q. Every residue has exactly floor(2^32 / q) accepted
//     candidates, so an accepted word is exactly uniform on [0, q): no modulo bias.
//   - Spill pool of block b (positions 16 b .. 16 b + 15) of a key's limb: the blocks (counter b,
//     digit kSpillDigit, stream 1, 2, ...). The rejected positions of block b of every digit, in
//     digit order and then position order, take the pool's accepted words in order. One pool per
//     16 positions serves all the key's digits, so a kernel that walks a key's digits in order
//     (KeyMult) needs about one spill block per key and 16 positions instead of one per digit;
//     digit k depends only on digits < k, so the digits a lower level uses are a prefix.
// The words are in the NTT (evaluation) domain as the key stores them: a uniform polynomial is
// uniform in either representation.

#include <cstdint>
#include <span>

#include "math/chacha.h"
#include "theo/common.h"

namespace theo::compact_expand {

inline constexpr u32 kBlockWords = chacha::kBlockWords;
// Top byte of w14: keeps these streams apart from any other ChaCha use of the same seed.
inline constexpr u32 kDomain = 0xC1u;
// The digit field of the spill blocks (a key's digits are below it).
inline constexpr u32 kSpillDigit = 0xFFFFu;
// Spill blocks one pool may use (stream < 256). Each block accepts more than half of its 16 words
// (q < 2^31) or at least one (q < 2^32); 254 blocks is unreachable in practice for any digit
// count a key has, and exceeding it is an error.
inline constexpr u32 kMaxSpillBlocks = 254;

// The scheme ids a serialized compact key names. They continue the ids of serialized seeds, whose
// 1 is the ChaCha20 expansion with a 128-bit reduction per word (uniform_expand.h).
enum class Scheme : std::uint8_t {
  kChaCha8Rej32 = 2,
  kChaCha12Rej32 = 3,
  kChaCha20Rej32 = 4,
};

THEO_HD u32 scheme_rounds(Scheme s) {
  return s == Scheme::kChaCha8Rej32 ? 8u : s == Scheme::kChaCha12Rej32 ? 12u : 20u;
}

// The seed as eight little-endian 32-bit words (the ChaCha key; chacha::make_key).
using Key = chacha::Key;
using chacha::make_key;

// State words 12..15 of one block. Injective in (counter, key_index, digit < 2^16, stream < 2^8,
// q): every field has bits of its own.
struct Nonce {
  u32 w12, w13, w14, w15;
};

THEO_HD Nonce nonce_words(u32 counter, u32 key_index, u32 digit, u32 stream, u32 q) {
  return {counter, key_index, (kDomain << 24) | ((stream & 0xFFu) << 16) | (digit & 0xFFFFu), q};
}

// Index of the lowest set bit of x != 0.
THEO_HD u32 lowest_bit(u32 x) {
#if defined(__CUDA_ARCH__)
  return static_cast<u32>(__ffs(static_cast<int>(x)) - 1);
#else
  return static_cast<u32>(__builtin_ctz(x));
#endif
}

// The ChaCha block function with kRounds rounds (chacha::block) on one block's state words 12..15.
template <int kRounds>
THEO_HD void chacha_block(const Key& key, const Nonce& nc, u32 out[kBlockWords]) {
  chacha::block<kRounds>(key, nc.w12, nc.w13, nc.w14, nc.w15, out);
}

// Per-prime constants of the sampler.
struct Sampler {
  u32 q;
  u32 t;  // 2^32 mod q: the number of rejected 32-bit candidates
};

// q odd, 3 <= q < 2^32.
THEO_HD Sampler make_sampler(u32 q) {
  return {q, (0u - q) % q};
}

// Lemire's multiply-and-compare: writes floor(c q / 2^32) to v and returns whether it is accepted.
THEO_HD bool sample(const Sampler& s, u32 c, u32& v) {
  const u64 m = static_cast<u64>(c) * s.q;
  v = static_cast<u32>(m >> 32);
  return static_cast<u32>(m) >= s.t;
}

// The spill pool of one 16-position block of a key's limb (see the top of the file), consumed in
// digit order.
struct SpillPool {
  u32 words[kBlockWords];
  u32 next = kBlockWords;  // next unused word of `words`
  u32 blocks = 0;          // spill blocks computed so far
};

// Computes the pool's next spill block; false when kMaxSpillBlocks are used.
template <int kRounds>
THEO_HD bool refill(const Key& key, u32 key_index, const Sampler& s, u32 block, SpillPool& p) {
  if (p.blocks == kMaxSpillBlocks) return false;
  ++p.blocks;
  chacha_block<kRounds>(key, nonce_words(block, key_index, kSpillDigit, p.blocks, s.q), p.words);
  p.next = 0;
  return true;
}

// The 16 words of digit `digit` of block `block` (positions 16 block .. 16 block + 15): called
// for digits 0, 1, ... in turn with the same pool. False in the (never observed) case that the
// pool runs out of blocks; the words are then not defined.
template <int kRounds>
THEO_HD bool expand_block(const Key& key, u32 key_index, u32 digit, const Sampler& s, u32 block,
                          SpillPool& pool, u32 out[kBlockWords]) {
  u32 c[kBlockWords];
  chacha_block<kRounds>(key, nonce_words(block, key_index, digit, 0, s.q), c);
  u32 rejected = 0;  // bit j: position j rejected
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (u32 j = 0; j < kBlockWords; ++j) {
    if (!sample(s, c[j], out[j])) rejected |= 1u << j;
  }
  while (rejected != 0) {
    const u32 j = lowest_bit(rejected);
    rejected &= rejected - 1;
    u32 v = 0;
    for (;;) {
      if (pool.next == kBlockWords && !refill<kRounds>(key, key_index, s, block, pool)) {
        return false;
      }
      if (sample(s, pool.words[pool.next++], v)) break;
    }
    // A select per word rather than out[j]: a dynamic index would move `out` (the caller's
    // registers) to local memory on the GPU.
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (u32 i = 0; i < kBlockWords; ++i)
      out[i] = i == j ? v : out[i];
  }
  return true;
}

// Runtime round count (8, 12 or 20) for host code.
THEO_HD bool expand_block_rounds(u32 rounds, const Key& key, u32 key_index, u32 digit,
                                 const Sampler& s, u32 block, SpillPool& pool,
                                 u32 out[kBlockWords]) {
  if (rounds == 8) return expand_block<8>(key, key_index, digit, s, block, pool, out);
  if (rounds == 12) return expand_block<12>(key, key_index, digit, s, block, pool, out);
  return expand_block<20>(key, key_index, digit, s, block, pool, out);
}

// The CPU reference: every word of digits 0 .. digits - 1 of one limb of a key, out = digits
// limbs of n words each (digit k at out[k n]), n a multiple of 16. Returns the spill blocks used.
// Throws ParameterError for an unsupported round count, q, digit count or size, and Error in the
// (never observed) case that a pool needs more than kMaxSpillBlocks blocks.
u64 expand_limb(const Key& key, u32 rounds, u32 key_index, u32 digits, u32 q, u32 n,
                std::span<u32> out);

}  // namespace theo::compact_expand
