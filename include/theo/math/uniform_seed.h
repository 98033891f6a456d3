#pragma once
// A uniform polynomial given by its seed: the 32 bytes and the expansion scheme that turns them
// into words. Keys remember the seeds of their `a` polynomials so that they serialize as (b, seed),
// about half the size; the scheme id is stored with every seed so that a faster expansion can be
// added as a new id without changing the container format (docs/serialization.md).

#include <optional>
#include <string>

#include "theo/math/prng.h"

namespace theo {

enum class ExpansionScheme : u32 {
  // Backend::sample_uniform: ChaCha20 (RFC 8439) keyed by the seed, nonce = stream id || prime id,
  // 128 keystream bits per word reduced mod q (src/math/uniform_expand.h).
  kChaCha20Wide = 1,
};

struct UniformSeed {
  Prng::Seed seed{};
  ExpansionScheme scheme = ExpansionScheme::kChaCha20Wide;
  bool operator==(const UniformSeed&) const = default;
};

// The scheme for a stored id, or nullopt when this build does not know it.
std::optional<ExpansionScheme> expansion_scheme_from_id(u32 id);
// "chacha20-wide" for kChaCha20Wide; the list of known schemes for messages.
std::string expansion_scheme_name(ExpansionScheme scheme);
std::string known_expansion_schemes();

}  // namespace theo
