#include "ckks/special_fft.h"

#include <bit>
#include <cmath>
#include <numbers>

#include "theo/ring/automorphism.h"

namespace theo::detail {

namespace {

void bit_reverse_permute(std::vector<SpecialFft::Complex>& v) {
  const u32 n = static_cast<u32>(v.size());
  const u32 log_n = static_cast<u32>(std::countr_zero(n));
  for (u32 i = 0; i < n; ++i) {
    const u32 r = bit_reverse(i, log_n);
    if (i < r) std::swap(v[i], v[r]);
  }
}

}  // namespace

SpecialFft::SpecialFft(u32 log_n) : two_n_(2u << log_n), roots_(two_n_) {
  const long double step = 2.0L * std::numbers::pi_v<long double> / two_n_;
  for (u32 k = 0; k < two_n_; ++k) {
    roots_[k] = Complex(std::cos(step * k), std::sin(step * k));
  }
}

void SpecialFft::forward(std::vector<Complex>& v) const {
  const u32 n = static_cast<u32>(v.size());
  bit_reverse_permute(v);
  for (u32 len = 2; len <= n; len *= 2) {
    const u32 half = len / 2;
    const u32 m = 4 * len;
    u32 five_pow = 1;
    for (u32 j = 0; j < half; ++j) {
      const Complex w = roots_[static_cast<std::size_t>(five_pow) * (two_n_ / m)];
      for (u32 i = 0; i < n; i += len) {
        const Complex x = v[i + j];
        const Complex y = v[i + j + half] * w;
        v[i + j] = x + y;
        v[i + j + half] = x - y;
      }
      five_pow = (five_pow * 5) % m;
    }
  }
}

void SpecialFft::inverse(std::vector<Complex>& v) const {
  const u32 n = static_cast<u32>(v.size());
  for (u32 len = n; len >= 2; len /= 2) {
    const u32 half = len / 2;
    const u32 m = 4 * len;
    u32 five_pow = 1;
    for (u32 j = 0; j < half; ++j) {
      const Complex w_conj = std::conj(roots_[static_cast<std::size_t>(five_pow) * (two_n_ / m)]);
      for (u32 i = 0; i < n; i += len) {
        const Complex x = v[i + j];
        const Complex y = v[i + j + half];
        v[i + j] = (x + y) * 0.5L;
        v[i + j + half] = (x - y) * w_conj * 0.5L;
      }
      five_pow = (five_pow * 5) % m;
    }
  }
  bit_reverse_permute(v);
}

}  // namespace theo::detail
