#pragma once
// The fingerprint of a parameter set: BLAKE2b-256 over a canonical binary encoding of every field
// that changes what a serialized object means (ring degree, scale, prime lists in order, level
// layout, secret weights, bootstrapping levels, default encryption level). The informational
// fields `name` and `comment` are left out, so a renamed copy of a set has the same fingerprint.
// Serialized objects carry it, and a reader refuses data made for another fingerprint.

#include <array>
#include <cstdint>
#include <string>

#include "theo/math/params.h"

namespace theo {

using Fingerprint = std::array<std::uint8_t, 32>;

Fingerprint parameter_fingerprint(const ParameterSet& p);
// Lower-case hexadecimal, 64 characters.
std::string fingerprint_hex(const Fingerprint& f);

}  // namespace theo
