#include "theo/circuits/activation_fit.h"

#include <cmath>
#include <numbers>
#include <string>

#include "theo/errors.h"

namespace theo {

namespace {

// Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n from the Chebyshev guesses).
void gauss_legendre(u32 n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(n, 0);
  w.assign(n, 0);
  for (u32 i = 0; i < n; ++i) {
    double z = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5));
    double dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;
      for (u32 k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1) * z * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[i] = z;
    w[i] = 2 / ((1 - z * z) * dp * dp);
  }
}

// Monomial coefficients of the Legendre polynomials P_0..P_d (rows).
std::vector<std::vector<double>> legendre_monomials(u32 d) {
  std::vector<std::vector<double>> p(d + 1, std::vector<double>(d + 1, 0));
  p[0][0] = 1;
  if (d >= 1) p[1][1] = 1;
  for (u32 k = 2; k <= d; ++k) {
    for (u32 i = 0; i <= d; ++i) {
      double v = -(k - 1.0) * p[k - 2][i];
      if (i >= 1) v += (2.0 * k - 1) * p[k - 1][i - 1];
      p[k][i] = v / k;
    }
  }
  return p;
}

double binomial(u32 n, u32 k) {
  double r = 1;
  for (u32 i = 1; i <= k; ++i)
    r = r * (n - k + i) / i;
  return r;
}

}  // namespace

double MonomialSeries::operator()(double x) const {
  double r = 0;
  for (std::size_t i = coeffs.size(); i-- > 0;)
    r = r * x + coeffs[i];
  return r;
}

MonomialSeries MonomialSeries::composed_with_scale(double scale) const {
  MonomialSeries out = *this;
  double s = 1;
  for (double& c : out.coeffs) {
    c *= s;
    s *= scale;
  }
  return out;
}

ChebyshevSeries MonomialSeries::to_chebyshev(double a, double b) const {
  // x = m + h y, y in [-1, 1]: the polynomial in y, then y^i in the Chebyshev basis.
  const double m = (a + b) / 2, h = (b - a) / 2;
  const u32 d = degree();
  std::vector<double> in_y(d + 1, 0);
  for (u32 i = 0; i <= d && i < coeffs.size(); ++i) {
    // coeffs[i] (m + h y)^i
    for (u32 k = 0; k <= i; ++k)
      in_y[k] += coeffs[i] * binomial(i, k) * std::pow(m, i - k) * std::pow(h, k);
  }
  // y^k = 2^(1-k) sum_{j} binom(k, j) T_{k - 2j} (halved for the T_0 term).
  ChebyshevSeries out;
  out.a = a;
  out.b = b;
  out.coeffs.assign(d + 1, 0);
  for (u32 k = 0; k <= d; ++k) {
    if (in_y[k] == 0) continue;
    if (k == 0) {
      out.coeffs[0] += in_y[0];
      continue;
    }
    const double f = std::ldexp(1.0, 1 - static_cast<int>(k));
    for (u32 j = 0; 2 * j <= k; ++j) {
      const u32 t = k - 2 * j;
      const double c = binomial(k, j) * f * (t == 0 ? 0.5 : 1.0);
      out.coeffs[t] += in_y[k] * c;
    }
  }
  return out;
}

MonomialSeries least_squares_fit(const std::function<double(double)>& f, double a, double b,
                                 u32 degree) {
  if (!(a < b) || !std::isfinite(a) || !std::isfinite(b)) {
    throw ParameterError("least_squares_fit: the interval [" + std::to_string(a) + ", " +
                         std::to_string(b) + "] is empty or not finite");
  }
  if (degree > 30) {
    throw ParameterError("least_squares_fit: degree " + std::to_string(degree) + " > 30");
  }
  std::vector<double> x, w;
  gauss_legendre(256, x, w);
  const double m = (a + b) / 2, h = (b - a) / 2;
  const auto p = legendre_monomials(degree);
  // c_k = (2k + 1) / 2 * integral f(m + h y) P_k(y) dy; p(y) = sum c_k P_k(y).
  std::vector<double> in_y(degree + 1, 0);
  for (u32 k = 0; k <= degree; ++k) {
    double c = 0;
    for (std::size_t q = 0; q < x.size(); ++q) {
      double pk = 0;
      for (u32 i = k + 1; i-- > 0;)
        pk = pk * x[q] + p[k][i];
      c += w[q] * f(m + h * x[q]) * pk;
    }
    c *= (2.0 * k + 1) / 2;
    for (u32 i = 0; i <= k; ++i)
      in_y[i] += c * p[k][i];
  }
  // y = (x - m) / h back to x.
  MonomialSeries out;
  out.coeffs.assign(degree + 1, 0);
  for (u32 i = 0; i <= degree; ++i) {
    const double ci = in_y[i] / std::pow(h, i);  // coefficient of (x - m)^i
    for (u32 k = 0; k <= i; ++k)
      out.coeffs[k] += ci * binomial(i, k) * std::pow(-m, i - k);
  }
  return out;
}

MonomialSeries sigmoid_least_squares(u32 degree, double bound) {
  if (!(bound > 0) || !std::isfinite(bound)) {
    throw ParameterError("sigmoid_least_squares: bound " + std::to_string(bound) +
                         " is not a positive number");
  }
  MonomialSeries s =
      least_squares_fit([](double v) { return 1 / (1 + std::exp(-v)); }, -bound, bound, degree);
  // The sigmoid minus 1/2 is odd: the even coefficients above 0 vanish (exactly, not to rounding).
  for (u32 i = 2; i < s.coeffs.size(); i += 2)
    s.coeffs[i] = 0;
  return s;
}

double max_error(const std::function<double(double)>& f, const MonomialSeries& p, double a,
                 double b, u32 samples) {
  double e = 0;
  for (u32 i = 0; i < samples; ++i) {
    const double x = a + (b - a) * i / (samples - 1);
    e = std::max(e, std::abs(f(x) - p(x)));
  }
  return e;
}

}  // namespace theo
