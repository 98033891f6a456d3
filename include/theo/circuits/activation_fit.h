#pragma once
// Least-squares polynomial fits of activation functions on an expected input range, the sigmoid
// approximations of encrypted logistic regression (Kim et al. 2018; Han et al., "Logistic
// regression on homomorphically encrypted data at scale", AAAI 2019, "HELR"): the polynomial of
// degree d minimizing the integral of (f - p)^2 over [-bound, bound]. On [-8, 8] this gives HELR's
//   sigma3(x) = 0.5 + 0.15012 x - 0.0015930 x^3                       (max error 0.114)
//   sigma5(x) = 0.5 + 0.19130 x - 0.0045960 x^3 + 4.2229e-5 x^5      (0.061)
//   sigma7(x) = 0.5 + 0.21690 x - 0.0081947 x^3 + 1.6593e-4 x^5 - 1.1965e-6 x^7   (0.032)
// and on [-16, 16] sigma3(x) = 0.5 + 0.084268 x - 0.00024736 x^3 (0.218), HELR's MNIST choice.
// A least-squares fit is better on average than a minimax one where most inputs lie near 0, as
// the inner products of a training loop do.

#include <functional>
#include <vector>

#include "theo/circuits/chebyshev.h"
#include "theo/common.h"

namespace theo {

// p(x) = sum_i coeffs[i] x^i.
struct MonomialSeries {
  std::vector<double> coeffs;
  u32 degree() const { return coeffs.empty() ? 0 : static_cast<u32>(coeffs.size() - 1); }
  double operator()(double x) const;  // Horner
  // p(scale * x): coefficients times scale^i (e.g. onto a normalized input x / bound).
  MonomialSeries composed_with_scale(double scale) const;
  // The same polynomial in the Chebyshev basis on [a, b] (exact up to rounding).
  ChebyshevSeries to_chebyshev(double a, double b) const;
};

// The continuous least-squares fit of degree `degree` to f on [a, b] (Legendre projection with
// Gauss-Legendre quadrature). ParameterError for a > = b or degree > 30.
MonomialSeries least_squares_fit(const std::function<double(double)>& f, double a, double b,
                                 u32 degree);

// HELR's sigmoid: least_squares_fit(1 / (1 + e^-x), -bound, bound, degree), degree 3, 5 or 7
// (others are allowed; those are the paper's).
MonomialSeries sigmoid_least_squares(u32 degree, double bound);

// max |f - p| on `samples` points equally spaced in [a, b].
double max_error(const std::function<double(double)>& f, const MonomialSeries& p, double a,
                 double b, u32 samples = 4096);

}  // namespace theo
