// Seed expansion schemes (theo/math/uniform_seed.h).

#include "theo/math/uniform_seed.h"

namespace theo {

std::optional<ExpansionScheme> expansion_scheme_from_id(u32 id) {
  switch (static_cast<ExpansionScheme>(id)) {
    case ExpansionScheme::kChaCha20Wide:
      return ExpansionScheme::kChaCha20Wide;
  }
  return std::nullopt;
}

std::string expansion_scheme_name(ExpansionScheme scheme) {
  switch (scheme) {
    case ExpansionScheme::kChaCha20Wide:
      return "chacha20-wide";
  }
  return "scheme " + std::to_string(static_cast<u32>(scheme));
}

std::string known_expansion_schemes() {
  return "1 (chacha20-wide)";
}

}  // namespace theo
