#pragma once
// An RNS basis: an ordered list of prime ids into the ring's prime table.
//
// The ring (see RingParams) numbers all primes of a Context once; a polynomial's limbs follow the
// order of its Basis. With the inverted-terminal layout (Cheddar §3.3) the Context orders its prime
// table as [tau_{T-1} .. tau_0, q_0 .. q_{M-1}, p_0 .. p_{alpha-1}], so every level's basis is a
// contiguous range of ids, and limb views are plain pointer offsets.
//
// Basis is a fixed-capacity value type so that it can be passed by value to GPU kernels.

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "theo/common.h"
#include "theo/errors.h"

namespace theo {

using PrimeId = std::uint8_t;
inline constexpr u32 kMaxLimbs = 255;  // limbs of one polynomial view (ids are 8-bit)

struct Basis {
  u32 size = 0;
  std::array<PrimeId, kMaxLimbs> ids{};

  Basis() = default;
  explicit Basis(std::span<const PrimeId> list) {
    if (list.size() > kMaxLimbs) throw ParameterError("Basis: more than 255 limbs");
    size = static_cast<u32>(list.size());
    for (u32 i = 0; i < size; ++i)
      ids[i] = list[i];
  }
  Basis(std::initializer_list<PrimeId> list)
      : Basis(std::span<const PrimeId>(list.begin(), list.size())) {}

  // Contiguous id range [first, first + count).
  static Basis range(u32 first, u32 count) {
    if (count > kMaxLimbs || first + count > 256)
      throw ParameterError("Basis::range: too many limbs");
    Basis b;
    b.size = count;
    for (u32 i = 0; i < count; ++i)
      b.ids[i] = static_cast<PrimeId>(first + i);
    return b;
  }

  PrimeId operator[](u32 i) const { return ids[i]; }
  bool empty() const { return size == 0; }

  // Limbs [start, start + count) of this basis.
  Basis slice(u32 start, u32 count) const {
    if (start + count > size) throw ParameterError("Basis::slice: range exceeds basis size");
    Basis b;
    b.size = count;
    for (u32 i = 0; i < count; ++i)
      b.ids[i] = ids[start + i];
    return b;
  }

  // This basis followed by `other`.
  Basis concat(const Basis& other) const {
    if (size + other.size > kMaxLimbs) throw ParameterError("Basis::concat: more than 255 limbs");
    Basis b = *this;
    for (u32 i = 0; i < other.size; ++i)
      b.ids[size + i] = other.ids[i];
    b.size = size + other.size;
    return b;
  }

  // Position of `id` in this basis, or -1.
  int find(PrimeId id) const {
    for (u32 i = 0; i < size; ++i)
      if (ids[i] == id) return static_cast<int>(i);
    return -1;
  }

  std::vector<PrimeId> to_vector() const { return {ids.begin(), ids.begin() + size}; }

  friend bool operator==(const Basis& a, const Basis& b) {
    if (a.size != b.size) return false;
    for (u32 i = 0; i < a.size; ++i)
      if (a.ids[i] != b.ids[i]) return false;
    return true;
  }
};

std::string to_string(const Basis& b);

}  // namespace theo
