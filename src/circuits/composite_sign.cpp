#include "theo/circuits/composite_sign.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "theo/errors.h"

namespace theo {

namespace {

using ld = long double;

// T_1, T_3, ..., T_(2n-1) at x.
void odd_basis(ld x, u32 n, ld* out) {
  ld t0 = 1, t1 = x;
  out[0] = x;
  for (u32 k = 2; k < 2 * n; ++k) {
    const ld t2 = 2 * x * t1 - t0;
    t0 = t1;
    t1 = t2;
    if (k % 2 == 1) out[k / 2] = t2;
  }
}

ld eval_odd(const std::vector<ld>& c, ld x) {
  std::vector<ld> t(c.size());
  odd_basis(x, static_cast<u32>(c.size()), t.data());
  ld s = 0;
  for (std::size_t j = 0; j < c.size(); ++j)
    s += c[j] * t[j];
  return s;
}

// Gaussian elimination with partial pivoting; a is m x (m + 1) (the last column the right side).
std::vector<ld> solve(std::vector<std::vector<ld>> a) {
  const std::size_t m = a.size();
  for (std::size_t col = 0; col < m; ++col) {
    std::size_t piv = col;
    for (std::size_t r = col + 1; r < m; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[piv][col])) piv = r;
    if (a[piv][col] == 0) throw ParameterError("minimax_odd_sign: singular Remez system");
    std::swap(a[piv], a[col]);
    for (std::size_t r = col + 1; r < m; ++r) {
      const ld f = a[r][col] / a[col][col];
      for (std::size_t k = col; k <= m; ++k)
        a[r][k] -= f * a[col][k];
    }
  }
  std::vector<ld> x(m);
  for (std::size_t i = m; i-- > 0;) {
    ld s = a[i][m];
    for (std::size_t k = i + 1; k < m; ++k)
      s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

// The point of [lo, hi] where |e| is largest, e = p - 1 (golden-section search, the ends
// compared too): Remez needs the extrema themselves, not the nearest grid points.
ld refine_extremum(const std::vector<ld>& c, ld lo, ld hi) {
  auto f = [&](ld x) { return std::fabs(eval_odd(c, x) - 1); };
  const ld g = (std::sqrt(5.0L) - 1) / 2;
  ld a = lo, b = hi;
  ld x1 = b - g * (b - a), x2 = a + g * (b - a);
  ld f1 = f(x1), f2 = f(x2);
  for (int it = 0; it < 80 && b - a > 1e-18L * std::max<ld>(1, b); ++it) {
    if (f1 < f2) {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = f(x2);
    } else {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = f(x1);
    }
  }
  ld best = (a + b) / 2;
  for (const ld x : {lo, hi})
    if (f(x) > f(best)) best = x;
  return best;
}

}  // namespace

OddMinimaxFit minimax_odd_sign(u32 degree, double lower) {
  if (degree % 2 == 0 || degree > 63) {
    throw ParameterError("minimax_odd_sign: degree " + std::to_string(degree) +
                         " (odd, at most 63)");
  }
  if (!(lower > 0 && lower < 1)) {
    throw ParameterError("minimax_odd_sign: lower end " + std::to_string(lower) +
                         " outside (0, 1)");
  }
  const u32 n = (degree + 1) / 2;
  const ld r = lower;
  // Candidate grid for the extrema: geometric (they crowd near `lower`) and uniform.
  constexpr u32 kGrid = 4096;
  std::vector<ld> grid;
  grid.reserve(2 * kGrid + 2);
  for (u32 i = 0; i <= kGrid; ++i) {
    grid.push_back(r * std::pow(1 / r, static_cast<ld>(i) / kGrid));
    grid.push_back(r + (1 - r) * static_cast<ld>(i) / kGrid);
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  grid.front() = r;
  grid.back() = 1;
  std::vector<ld> basis(grid.size() * n);
  for (std::size_t i = 0; i < grid.size(); ++i)
    odd_basis(grid[i], n, &basis[i * n]);

  // Reference: Chebyshev extrema of [lower, 1].
  std::vector<ld> ref(n + 1);
  for (u32 i = 0; i <= n; ++i)
    ref[i] = r + (1 - r) * (1 - std::cos(std::numbers::pi_v<ld> * i / n)) / 2;

  OddMinimaxFit out;
  out.lower = lower;
  std::vector<ld> c(n, 0);
  ld level = 0, max_err = 0;
  bool converged = false;
  std::vector<ld> t(n);
  for (u32 it = 0; it < 100 && !converged; ++it) {
    out.iterations = it + 1;
    std::vector<std::vector<ld>> a(n + 1, std::vector<ld>(n + 2));
    for (u32 i = 0; i <= n; ++i) {
      odd_basis(ref[i], n, t.data());
      for (u32 j = 0; j < n; ++j)
        a[i][j] = t[j];
      a[i][n] = (i % 2 == 0) ? 1 : -1;
      a[i][n + 1] = 1;
    }
    const std::vector<ld> sol = solve(std::move(a));
    std::copy(sol.begin(), sol.begin() + n, c.begin());
    level = std::fabs(sol[n]);
    // Error on the grid, split into runs of one sign; the largest |e| of each run, refined.
    std::vector<ld> e(grid.size());
    for (std::size_t i = 0; i < grid.size(); ++i) {
      ld s = 0;
      for (u32 j = 0; j < n; ++j)
        s += c[j] * basis[i * n + j];
      e[i] = s - 1;
    }
    std::vector<ld> ext, ext_err;
    std::size_t start = 0;
    for (std::size_t i = 1; i <= grid.size(); ++i) {
      if (i < grid.size() && (e[i] >= 0) == (e[start] >= 0)) continue;
      std::size_t best = start;
      for (std::size_t k = start; k < i; ++k)
        if (std::fabs(e[k]) > std::fabs(e[best])) best = k;
      const ld lo = grid[best > 0 ? best - 1 : 0];
      const ld hi = grid[std::min(best + 1, grid.size() - 1)];
      const ld x = refine_extremum(c, lo, hi);
      ext.push_back(x);
      ext_err.push_back(std::fabs(eval_odd(c, x) - 1));
      start = i;
    }
    // Keep n + 1 alternating extrema: drop the smaller end while there are too many.
    std::size_t b = 0, en = ext.size();
    while (en - b > n + 1) {
      if (ext_err[b] < ext_err[en - 1]) {
        ++b;
      } else {
        --en;
      }
    }
    max_err = *std::max_element(ext_err.begin(), ext_err.end());
    if (en - b < n + 1) {
      if (max_err < 1e-16L) {
        converged = true;
        break;
      }
      throw ParameterError("minimax_odd_sign: the Remez exchange lost alternation (degree " +
                           std::to_string(degree) + ", lower " + std::to_string(lower) + ")");
    }
    for (u32 i = 0; i <= n; ++i)
      ref[i] = ext[b + i];
    converged = max_err - level <= 1e-10L * max_err;
  }
  if (!converged) {
    throw ParameterError("minimax_odd_sign: no convergence for degree " + std::to_string(degree) +
                         " on [" + std::to_string(lower) + ", 1]");
  }
  out.error = static_cast<double>(max_err);
  out.series.coeffs.assign(degree + 1, 0.0);
  for (u32 j = 0; j < n; ++j)
    out.series.coeffs[2 * j + 1] = static_cast<double>(c[j]);
  return out;
}

// ---- CompositeSign -------------------------------------------------------------------------

CompositeSign CompositeSign::fit(const std::vector<u32>& degrees, double eps) {
  if (degrees.empty() || degrees.size() > 8) {
    throw ParameterError("CompositeSign::fit: 1 to 8 components, got " +
                         std::to_string(degrees.size()));
  }
  for (const u32 d : degrees)
    if (d < 3 || d % 2 == 0 || d > 63) {
      throw ParameterError("CompositeSign::fit: component degree " + std::to_string(d) +
                           " (odd, 3..63)");
    }
  if (!(eps > 0 && eps < 1)) {
    throw ParameterError("CompositeSign::fit: eps " + std::to_string(eps) + " outside (0, 1)");
  }
  CompositeSign s;
  s.degrees_ = degrees;
  s.eps_ = eps;
  double lower = eps;
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    OddMinimaxFit f = minimax_odd_sign(degrees[i], lower);
    const double tau = f.error;
    if (i + 1 < degrees.size()) {
      for (double& c : f.series.coeffs)
        c /= 1 + tau;
    }
    s.components_.push_back(std::move(f.series));
    s.stage_errors_.push_back(tau);
    lower = (1 - tau) / (1 + tau);
    if (!(lower > 0)) {
      throw ParameterError("CompositeSign::fit: stage " + std::to_string(i + 1) +
                           " does not separate the signs");
    }
  }
  return s;
}

CompositeSign CompositeSign::alpha13() {
  return fit({15, 15, 27}, std::ldexp(1.0, -9));
}

std::vector<u32> CompositeSign::component_depths() const {
  std::vector<u32> d;
  for (const u32 deg : degrees_)
    d.push_back(PolynomialEvaluator::depth(deg));
  return d;
}

u32 CompositeSign::depth() const {
  u32 s = 0;
  for (const u32 d : component_depths())
    s += d;
  return s;
}

std::string CompositeSign::name() const {
  std::ostringstream o;
  for (std::size_t i = 0; i < degrees_.size(); ++i)
    o << (i ? "-" : "") << degrees_[i];
  return o.str();
}

double CompositeSign::operator()(double x) const {
  ld y = x;
  for (const ChebyshevSeries& c : components_)
    y = clenshaw(c.coeffs, y);
  return static_cast<double>(y);
}

ChebyshevSeries CompositeSign::gate_component() const {
  ChebyshevSeries g = components_.back();
  for (double& c : g.coeffs)
    c *= 0.5;
  g.coeffs.at(0) += 0.5;
  return g;
}

double CompositeSign::relu(double x) const {
  return x * (1 + (*this)(x)) / 2;
}

double CompositeSign::max_error(double lo, double hi, u32 samples) const {
  if (!(lo > 0 && hi > lo && hi <= 1)) {
    throw ParameterError("CompositeSign::max_error: need 0 < lo < hi <= 1");
  }
  double err = 0;
  for (u32 i = 0; i <= samples; ++i) {
    const double f = static_cast<double>(i) / samples;
    for (const double x : {lo * std::pow(hi / lo, f), lo + (hi - lo) * f})
      err = std::max({err, std::abs((*this)(x)-1), std::abs((*this)(-x) + 1)});
  }
  return err;
}

double CompositeSign::relu_max_error(double bound, u32 samples) const {
  if (!(bound > 0)) throw ParameterError("CompositeSign::relu_max_error: bound must be positive");
  double err = 0;
  for (u32 i = 0; i <= samples; ++i) {
    const double f = static_cast<double>(i) / samples;
    // Uniform over [-1, 1] and geometric towards 0 (where the error peaks, near +-eps).
    for (const double t : {-1 + 2 * f, std::pow(2.0, -30 * f), -std::pow(2.0, -30 * f)}) {
      const double x = bound * t;
      err = std::max(err, std::abs(bound * relu(t) - std::max(x, 0.0)));
    }
  }
  return err;
}

// ---- CompositeSignEvaluator ----------------------------------------------------------------

Ciphertext CompositeSignEvaluator::component(const Ciphertext& ct, u32 i, bool gate) const {
  const u32 k = static_cast<u32>(sign_.components().size());
  if (i >= k) {
    throw ParameterError("CompositeSignEvaluator: component " + std::to_string(i) + " of " +
                         std::to_string(k));
  }
  if (gate && i + 1 == k) return poly_.evaluate(ct, sign_.gate_component());
  return poly_.evaluate(ct, sign_.components()[i]);
}

Ciphertext CompositeSignEvaluator::sign(const Ciphertext& ct) const {
  Ciphertext y = component(ct, 0);
  for (u32 i = 1; i < sign_.components().size(); ++i)
    y = component(y, i);
  return y;
}

Ciphertext CompositeSignEvaluator::relu_product(const Ciphertext& x, const Ciphertext& gate) const {
  const u32 l = std::min(x.level(), gate.level());
  if (l == 0) throw LevelError("CompositeSignEvaluator: the ReLU product needs a level above 0");
  std::optional<Ciphertext> xl, gl;
  if (x.level() > l) xl = ev_.level_down(x, l);
  if (gate.level() > l) gl = ev_.level_down(gate, l);
  return ev_.multiply_relin_rescale(xl ? *xl : x, gl ? *gl : gate, rlk_);
}

Ciphertext CompositeSignEvaluator::relu(const Ciphertext& x) const {
  const u32 k = static_cast<u32>(sign_.components().size());
  Ciphertext y = component(x, 0, k == 1);
  for (u32 i = 1; i < k; ++i)
    y = component(y, i, i + 1 == k);
  return relu_product(x, y);
}

}  // namespace theo
