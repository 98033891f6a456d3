#include "theo/circuits/dft.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <string>

#include "theo/errors.h"

namespace theo {

namespace {

// xi_(4 len)^(5^j mod 4 len) for j < len / 2: the twiddles of the butterflies of one block.
std::vector<Complex> twiddles(u32 len) {
  const u64 m = 4ull * len;
  std::vector<Complex> w(len / 2);
  u64 p = 1;
  for (u32 j = 0; j < len / 2; ++j, p = p * 5 % m) {
    const long double ang = 2 * std::numbers::pi_v<long double> * static_cast<long double>(p) /
                            static_cast<long double>(m);
    w[j] = {static_cast<double>(std::cos(ang)), static_cast<double>(std::sin(ang))};
  }
  return w;
}

void add_to(DiagonalMatrix& m, u32 k, u32 p, Complex v) {
  auto& d = m.diagonals[k % m.slots];
  if (d.empty()) d.assign(m.slots, 0.0);
  d[p] += v;
}

// S_s (inverse = false) or S_s^-1, len = 2^s.
DiagonalMatrix stage(u32 n, u32 len, bool inverse) {
  DiagonalMatrix m;
  m.slots = n;
  const u32 h = len / 2;
  const std::vector<Complex> tw = twiddles(len);
  for (u32 p = 0; p < n; ++p) {
    const u32 j = p % len;
    if (j < h) {
      const Complex w = tw[j];
      // x' = x + w y (forward) or x = (x' + y') / 2 (inverse)
      add_to(m, 0, p, inverse ? 0.5 : 1.0);
      add_to(m, h, p, inverse ? Complex(0.5) : w);
    } else {
      const Complex w = tw[j - h];
      // y' = x - w y (forward) or y = (x' - y') / (2 w) (inverse)
      add_to(m, 0, p, inverse ? -1.0 / (2.0 * w) : -w);
      add_to(m, n - h, p, inverse ? 1.0 / (2.0 * w) : Complex(1.0));
    }
  }
  return m;
}

std::vector<DiagonalMatrix> grouped(u32 slots, u32 levels, Complex scale, bool inverse) {
  if (slots < 2 || !std::has_single_bit(slots)) {
    throw ParameterError("homomorphic DFT: slots must be a power of two >= 2");
  }
  const u32 stages = static_cast<u32>(std::countr_zero(slots));
  if (levels == 0 || levels > stages) {
    throw ParameterError("homomorphic DFT: " + std::to_string(levels) + " levels for " +
                         std::to_string(stages) + " butterfly stages");
  }
  // Application order: S_L^-1 .. S_1^-1 (CoeffToSlot) or S_1 .. S_L (SlotToCoeff).
  std::vector<u32> order;
  for (u32 s = 1; s <= stages; ++s)
    order.push_back(inverse ? stages + 1 - s : s);
  std::vector<DiagonalMatrix> out;
  u32 next = 0;
  for (u32 g = 0; g < levels; ++g) {
    const u32 count = stages / levels + (g < stages % levels ? 1 : 0);
    DiagonalMatrix acc = DiagonalMatrix::identity(slots);
    for (u32 i = 0; i < count; ++i, ++next) {
      acc = stage(slots, u32{1} << order[next], inverse).multiply(acc, 1e-300);
    }
    if (g == 0) acc.scale_by(scale);
    out.push_back(std::move(acc));
  }
  return out;
}

}  // namespace

std::vector<DiagonalMatrix> coeff_to_slot_matrices(u32 slots, u32 levels, Complex scale) {
  return grouped(slots, levels, scale, true);
}

std::vector<DiagonalMatrix> slot_to_coeff_matrices(u32 slots, u32 levels, Complex scale) {
  return grouped(slots, levels, scale, false);
}

std::vector<Complex> special_dft(const std::vector<Complex>& u) {
  const u32 n = static_cast<u32>(u.size());
  const u64 m = 4ull * n;
  std::vector<Complex> z(n, 0.0);
  u64 g = 1;  // 5^j mod 4n
  for (u32 j = 0; j < n; ++j) {
    for (u32 k = 0; k < n; ++k) {
      const long double ang = 2 * std::numbers::pi_v<long double> *
                              static_cast<long double>(g * k % m) / static_cast<long double>(m);
      z[j] +=
          u[k] * Complex(static_cast<double>(std::cos(ang)), static_cast<double>(std::sin(ang)));
    }
    g = g * 5 % m;
  }
  return z;
}

std::vector<Complex> bit_reverse(const std::vector<Complex>& v) {
  const u32 n = static_cast<u32>(v.size());
  const u32 bits = static_cast<u32>(std::countr_zero(n));
  std::vector<Complex> out(n);
  for (u32 i = 0; i < n; ++i) {
    u32 r = 0;
    for (u32 b = 0; b < bits; ++b)
      r |= ((i >> b) & 1u) << (bits - 1 - b);
    out[r] = v[i];
  }
  return out;
}

}  // namespace theo
