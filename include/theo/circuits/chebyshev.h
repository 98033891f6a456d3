#pragma once
// Chebyshev series on an interval [a, b]: p(x) = sum_i c_i T_i(y), y = (2x - a - b) / (b - a).
// The Chebyshev basis keeps coefficients small and well conditioned for the functions CKKS
// circuits need (sine/cosine, sigmoid, arcsine), unlike the monomial basis.

#include <functional>
#include <vector>

#include "theo/common.h"

namespace theo {

struct ChebyshevSeries {
  double a = -1;
  double b = 1;
  std::vector<double> coeffs;  // c_0 .. c_d

  u32 degree() const { return coeffs.empty() ? 0 : static_cast<u32>(coeffs.size() - 1); }
  // Plaintext evaluation (Clenshaw), the reference the homomorphic result is compared with.
  double operator()(double x) const;
};

// sum_k c_k T_k(y) for y in [-1, 1] by Clenshaw's recurrence, in the arithmetic of T (double, or
// long double where a fit needs the extra bits).
template <typename T>
T clenshaw(const std::vector<double>& c, T y) {
  if (c.empty()) return 0;
  // b_k = c_k + 2y b_{k+1} - b_{k+2}; p = c_0 + y b_1 - b_2.
  T b1 = 0, b2 = 0;
  for (std::size_t k = c.size() - 1; k >= 1; --k) {
    const T t = c[k] + 2 * y * b1 - b2;
    b2 = b1;
    b1 = t;
  }
  return c[0] + y * b1 - b2;
}

// Interpolant of f at the d + 1 Chebyshev nodes of [a, b] (near-minimax; error close to the best
// degree-d approximation for smooth f).
ChebyshevSeries chebyshev_fit(const std::function<double(double)>& f, double a, double b,
                              u32 degree);

// max |f - p| over `samples` points equally spaced in [a, b].
double chebyshev_max_error(const std::function<double(double)>& f, const ChebyshevSeries& p,
                           u32 samples = 4096);

}  // namespace theo
