#include "theo/circuits/chebyshev.h"

#include <cmath>
#include <numbers>

#include "theo/errors.h"

namespace theo {

double ChebyshevSeries::operator()(double x) const {
  return clenshaw(coeffs, (2 * x - a - b) / (b - a));
}

ChebyshevSeries chebyshev_fit(const std::function<double(double)>& f, double a, double b,
                              u32 degree) {
  if (!(b > a)) throw ParameterError("chebyshev_fit: the interval must have b > a");
  const u32 m = degree + 1;
  // Nodes and sums in long double: high degrees (63+) lose bits to cancellation otherwise.
  std::vector<long double> fx(m);
  const long double pi = std::numbers::pi_v<long double>;
  for (u32 j = 0; j < m; ++j) {
    const long double y = std::cos(pi * (j + 0.5L) / m);
    fx[j] = f(static_cast<double>(0.5L * (b - a) * y + 0.5L * (a + b)));
  }
  ChebyshevSeries s;
  s.a = a;
  s.b = b;
  s.coeffs.resize(m);
  for (u32 k = 0; k < m; ++k) {
    long double acc = 0;
    for (u32 j = 0; j < m; ++j)
      acc += fx[j] * std::cos(pi * k * (j + 0.5L) / m);
    s.coeffs[k] = static_cast<double>(acc * (k == 0 ? 1.0L : 2.0L) / m);
  }
  return s;
}

double chebyshev_max_error(const std::function<double(double)>& f, const ChebyshevSeries& p,
                           u32 samples) {
  double err = 0;
  for (u32 i = 0; i <= samples; ++i) {
    const double x = p.a + (p.b - p.a) * i / samples;
    err = std::max(err, std::abs(f(x) - p(x)));
  }
  return err;
}

}  // namespace theo
