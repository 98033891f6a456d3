#pragma once
// Ciphertext serialization, a simple little-endian binary format:
//
//   offset  size  field
//   0       8     magic "THEOCTX1"
//   8       4     u32 log_n
//   12      4     u32 level
//   16      4     u32 number of polynomials (2 or 3)
//   20      4     u32 flags (bit 0: seeded)
//   24      4     u32 slots
//   28      4     u32 number of limbs of the level
//   32      8     f64 scale, high part
//   40      8     f64 scale, low part (scale = high + low exactly for a long double scale)
//   48      8     u64 fingerprint of the Context's prime table (FNV-1a over the primes)
//   56      32    seed (only when seeded)
//   ...           words: polynomial 0 (and 1, 2 when not seeded), limb-major, NTT domain, u32 each
//
// A seeded ciphertext (fresh, secret-key encrypted) stores c0 and the 32-byte seed of c1 only,
// about half the size of the unseeded form; deserialization expands c1 from the seed.

#include <cstdint>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"

namespace theo {

std::vector<std::uint8_t> serialize(const Context& ctx, const Ciphertext& ct);
// Throws ParameterError on malformed data and ContextError when the data was written by a Context
// with a different prime table.
Ciphertext deserialize_ciphertext(const std::shared_ptr<const Context>& ctx,
                                  const std::vector<std::uint8_t>& bytes);
// FNV-1a over log_n and the prime table.
u64 context_fingerprint(const Context& ctx);

}  // namespace theo
