#pragma once
// Helpers shared by the Evaluator's source files.

#include <optional>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"

namespace theo::detail {

std::vector<ConstPolyRef> refs_of(const Ciphertext& ct);

// ct moved to `level` (value kept; scale -> target_scale or Delta_level).
Ciphertext lower_ciphertext(const Context& ctx, const Ciphertext& ct, u32 level,
                            std::optional<long double> target_scale);
Plaintext lower_plaintext(const Context& ctx, const Plaintext& pt, u32 level,
                          std::optional<long double> target_scale);

// The key for Galois element g, or MissingKeyError saying how to generate it (naming the
// rotation when given).
const SwitchingKey& find_galois_key(const Context& ctx, const GaloisKeys& keys, u32 g,
                                    std::optional<int> rotation);

}  // namespace theo::detail
