#include "math/compact_expand.h"

#include <string>

#include "theo/errors.h"

namespace theo::compact_expand {

u64 expand_limb(const Key& key, u32 rounds, u32 key_index, u32 digits, u32 q, u32 n,
                std::span<u32> out) {
  if (rounds != 8 && rounds != 12 && rounds != 20) {
    throw ParameterError("compact key expansion: " + std::to_string(rounds) +
                         " ChaCha rounds (8, 12 or 20)");
  }
  if (q < 3 || q % 2 == 0) {
    throw ParameterError("compact key expansion: modulus " + std::to_string(q) +
                         " is not an odd number >= 3");
  }
  if (digits == 0 || digits >= kSpillDigit) {
    throw ParameterError("compact key expansion: " + std::to_string(digits) +
                         " digits (1 .. 65534)");
  }
  if (n == 0 || n % kBlockWords != 0) {
    throw ParameterError("compact key expansion: limb of " + std::to_string(n) +
                         " words is not a positive multiple of 16");
  }
  if (out.size() != static_cast<std::size_t>(digits) * n) {
    throw ParameterError("compact key expansion: output of " + std::to_string(out.size()) +
                         " words for " + std::to_string(digits) + " digits of " +
                         std::to_string(n));
  }
  const Sampler s = make_sampler(q);
  u64 spills = 0;
  for (u32 b = 0; b < n / kBlockWords; ++b) {
    SpillPool pool;
    for (u32 k = 0; k < digits; ++k) {
      if (!expand_block_rounds(rounds, key, key_index, k, s, b, pool,
                               out.data() + static_cast<std::size_t>(k) * n + b * kBlockWords)) {
        throw Error("compact key expansion: block " + std::to_string(b) + " of modulus " +
                    std::to_string(q) + " needed more than " + std::to_string(kMaxSpillBlocks) +
                    " spill blocks");
      }
    }
    spills += pool.blocks;
  }
  return spills;
}

}  // namespace theo::compact_expand
