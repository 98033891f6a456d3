// CpuBackend::sample_uniform: the expansion of math/uniform_expand.h, limb- and chunk-parallel.
// The keystream comes from libsodium's IETF ChaCha20 (vectorized; the same blocks as
// uniform_expand::chacha20_block, which the CUDA kernel runs and tests/math checks against it).

#include <sodium.h>

#include <algorithm>
#include <array>

#include "backend/cpu/cpu_backend.h"
#include "math/uniform_expand.h"
#include "theo/errors.h"

namespace theo::cpu {

namespace {

namespace ue = uniform_expand;

// Words per job: 1024 words = 256 ChaCha20 blocks = 16 KB of keystream on the stack.
constexpr u32 kChunkWords = 1024;
constexpr u32 kChunkBlocks = kChunkWords / ue::kValuesPerBlock;
static_assert(kChunkWords % ue::kValuesPerBlock == 0);

void ensure_sodium() {
  static const int rc = sodium_init();  // thread-safe one-time initialization
  if (rc < 0) throw Error("libsodium: sodium_init() failed");
}

u32 load_le32(const std::uint8_t* p) {
  return static_cast<u32>(p[0]) | (static_cast<u32>(p[1]) << 8) | (static_cast<u32>(p[2]) << 16) |
         (static_cast<u32>(p[3]) << 24);
}

}  // namespace

void CpuBackend::do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                                   PolyRef out) {
  static_assert(crypto_stream_chacha20_ietf_KEYBYTES == 32);
  static_assert(crypto_stream_chacha20_ietf_NONCEBYTES == 12);
  ensure_sodium();
  const u32 n = out.n;
  const u32 chunks = (n + kChunkWords - 1) / kChunkWords;
  pool_.run(static_cast<std::size_t>(out.limbs()) * chunks, [&](std::size_t job) {
    const u32 l = static_cast<u32>(job / chunks);
    const u32 begin = static_cast<u32>(job % chunks) * kChunkWords;
    const u32 words = std::min(n - begin, kChunkWords);
    const u32 blocks = (words + ue::kValuesPerBlock - 1) / ue::kValuesPerBlock;
    const PrimeId p = out.basis[l];
    const u32 q = moduli_[p].q;
    const u64 mu = ue::barrett64(q);
    std::array<std::uint8_t, 12> nonce{};
    for (u32 i = 0; i < 8; ++i)
      nonce[i] = static_cast<std::uint8_t>(stream_id >> (8 * i));
    nonce[8] = p;  // the prime id as a 4-byte little-endian word (ids are 8-bit)
    // The raw keystream of blocks begin / 4 .. : XOR over zeros, in place.
    std::array<std::uint8_t, kChunkBlocks * ue::kBlockWords * 4> ks{};
    crypto_stream_chacha20_ietf_xor_ic(ks.data(), ks.data(), blocks * ue::kBlockWords * 4,
                                       nonce.data(), begin / ue::kValuesPerBlock, seed.data());
    u32* row = out.limb(l) + begin;
    for (u32 b = 0; b < blocks; ++b) {
      u32 block[ue::kBlockWords];
      for (u32 w = 0; w < ue::kBlockWords; ++w)
        block[w] = load_le32(ks.data() + (b * ue::kBlockWords + w) * 4);
      u32 vals[ue::kValuesPerBlock];
      ue::reduce_block(block, q, mu, vals);
      for (u32 j = 0; j < ue::kValuesPerBlock && b * ue::kValuesPerBlock + j < words; ++j)
        row[b * ue::kValuesPerBlock + j] = vals[j];
    }
  });
}

}  // namespace theo::cpu
