#include "theo/circuits/mod1.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "circuits/ciphertext_group.h"
#include "theo/errors.h"

namespace theo {

namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

// cos(2 pi (x - 1/4) / 2^r) is even in v = (x - 1/4) / (K + 1/4), so it is a function of
// z = T_2(v) = 2 v^2 - 1: its Chebyshev series in v has only even terms, and T_2k(v) = T_k(z). The
// interpolant in z of degree (degree - 1) / 2 is the even degree-(degree - 1) interpolant in v, at
// half the products of a full degree-`degree` series.
ChebyshevSeries cosine_series(u32 k, u32 r, u32 degree) {
  const double kk = k + 0.25, scale = std::ldexp(1.0, -static_cast<int>(r));
  return chebyshev_fit(
      [=](double z) {
        const double v = std::sqrt(std::max(0.0, (z + 1) / 2));
        return std::cos(kTwoPi * kk * v * scale);
      },
      -1, 1, (degree - 1) / 2);
}

// The shift that turns the input y = x / (K + 1/4) into v = y - 1 / (4 K + 1).
double input_shift(u32 k) {
  return -1.0 / (4.0 * k + 1.0);
}

double cosine_at(const ChebyshevSeries& q, u32 k, double y) {
  const double v = y + input_shift(k);
  return q(2 * v * v - 1);
}

// Taylor series of arcsin up to odd `degree`, rewritten in the Chebyshev basis on [-1, 1]
// (exact: x^m is a finite Chebyshev sum), so it needs no affine map.
ChebyshevSeries arcsine_series(u32 degree) {
  std::vector<double> mono(degree + 1, 0.0);
  double c = 1;  // (2j)! / (4^j (j!)^2 (2j + 1))
  for (u32 j = 0; 2 * j + 1 <= degree; ++j) {
    mono[2 * j + 1] = c / (2 * j + 1);
    c *= (2.0 * j + 1) / (2.0 * j + 2);
  }
  // x^m = 2^(1-m) sum_{i} binom(m, i) T_(m-2i) (halved for the T_0 term).
  ChebyshevSeries s;
  s.coeffs.assign(degree + 1, 0.0);
  for (u32 m = 0; m <= degree; ++m) {
    if (mono[m] == 0) continue;
    double binom = 1;
    for (u32 i = 0; 2 * i <= m; ++i) {
      const u32 t = m - 2 * i;
      const double w = std::ldexp(binom, 1 - static_cast<int>(m)) * (t == 0 ? 0.5 : 1.0);
      s.coeffs[t] += mono[m] * w;
      binom = binom * (m - i) / (i + 1);
    }
  }
  return s;
}

u32 ceil_log2(u32 x) {
  return x <= 1 ? 0 : 32u - static_cast<u32>(__builtin_clz(x - 1));
}

}  // namespace

u32 EvalModParams::depth() const {
  return PolynomialEvaluator::depth(degree) + double_angles +
         (arcsine_degree ? PolynomialEvaluator::depth(arcsine_degree) : 0);
}

u32 EvalModParams::bound_for(u32 hamming_weight, u32 log_n, u32 level0_limbs) {
  const double sigma = std::sqrt((hamming_weight + 1.0) * level0_limbs / 12.0);
  // Two-sided Gaussian tail: N erfc(z / sqrt 2) <= 2^-20.
  double z = 1;
  while (std::ldexp(std::erfc(z / std::sqrt(2.0)), static_cast<int>(log_n)) > 0x1p-20)
    z += 0.01;
  return static_cast<u32>(std::floor(z * sigma)) + 1;
}

EvalModParams EvalModParams::derive(u32 hamming_weight, u32 log_n, u32 level0_limbs,
                                    u32 depth_budget, u32 arcsine_degree) {
  const u32 k = bound_for(hamming_weight, log_n, level0_limbs);
  const u32 arc = arcsine_degree ? ceil_log2(arcsine_degree + 1) : 0;
  if (depth_budget < arc + 3) {
    throw ParameterError("EvalModParams::derive: a depth budget of " +
                         std::to_string(depth_budget) + " levels is too small");
  }
  struct Candidate {
    u32 r, degree;
    double error;
  };
  std::vector<Candidate> cands;
  for (u32 r = 0; r + 2 + arc <= depth_budget; ++r) {
    for (u32 depth = 2; depth + r + arc <= depth_budget && depth <= 7; ++depth) {
      const u32 d = (1u << depth) - 1;
      const ChebyshevSeries p = cosine_series(k, r, d);
      // Error at the points that matter: x = I + eps near the integers.
      double err = 0;
      for (int i = -static_cast<int>(k) + 1; i < static_cast<int>(k); ++i) {
        for (double eps = -1.0 / 64; eps <= 1.0 / 64; eps += 1.0 / 512) {
          const double x = i + eps;
          double c = cosine_at(p, k, x / (k + 0.25));
          for (u32 j = 0; j < r; ++j)
            c = 2 * c * c - 1;
          err = std::max(err, std::abs(c - std::sin(kTwoPi * x)));
        }
      }
      // Rounding and key-switching noise, ~2^-42 of the values (what Bootstrapper::diagnose
      // measures inside EvalMod at N = 2^16, Delta ~ 2^58): the input's grows by 2 pi K whatever r
      // is (the derivative of sin(2 pi x) in y = x / K), the interpolant's own by up to 4 per
      // double angle.
      const double noise = 0x1p-42 * (kTwoPi * k + std::ldexp(1.0, 2 * static_cast<int>(r)));
      cands.push_back({r, d, err + noise});
    }
  }
  double best_error = 1e300;
  for (const Candidate& c : cands)
    best_error = std::min(best_error, c.error);
  // Within a factor 2 of the most accurate choice, the cheapest: about degree / 2 + 2 sqrt(degree)
  // ciphertext products for the interpolant, one per double angle.
  EvalModParams best;
  double best_cost = 1e300;
  for (const Candidate& c : cands) {
    const double cost = c.degree / 2.0 + 2 * std::sqrt(c.degree + 1.0) + c.r;
    if (c.error <= 2 * best_error && cost < best_cost) {
      best_cost = cost;
      best.k_bound = k;
      best.double_angles = c.r;
      best.degree = c.degree;
      best.estimated_error = c.error;
    }
  }
  best.arcsine_degree = arcsine_degree;
  return best;
}

EvalMod::EvalMod(const EvalModParams& params) : params_(params) {
  if (params.k_bound == 0) throw ParameterError("EvalMod: K must be positive");
  if (params.degree < 3 || params.degree % 2 == 0) {
    throw ParameterError("EvalModParams.degree: " + std::to_string(params.degree) +
                         " is not an odd degree >= 3 (the cosine is evaluated as an even "
                         "polynomial of degree - 1 in the shifted input)");
  }
  if (params.arcsine_degree != 0 && params.arcsine_degree % 2 == 0) {
    throw ParameterError("EvalMod: the arcsine degree must be odd");
  }
  cos_ = cosine_series(params.k_bound, params.double_angles, params.degree);
  if (params.arcsine_degree) arcsine_ = arcsine_series(params.arcsine_degree);
}

double EvalMod::input_divisor() const {
  return params_.k_bound + 0.25;
}

double EvalMod::reference(double y) const {
  double c = cosine_at(cos_, params_.k_bound, y);
  for (u32 j = 0; j < params_.double_angles; ++j)
    c = 2 * c * c - 1;
  return params_.arcsine_degree ? arcsine_(c) : c;
}

Ciphertext EvalMod::evaluate(const PolynomialEvaluator& pe, const Evaluator& ev,
                             const RelinKey& rlk, const Ciphertext& ct, double gain) const {
  const Ciphertext* const one[] = {&ct};
  return std::move(evaluate_batch(pe, ev, rlk, one, gain).front());
}

std::vector<Ciphertext> EvalMod::evaluate_batch(const PolynomialEvaluator& pe, const Evaluator& ev,
                                                const RelinKey& rlk,
                                                std::span<const Ciphertext* const> cts,
                                                double gain) const {
  return run(pe, ev, rlk, cts, gain, nullptr);
}

bool EvalMod::has_open_tail() const {
  return params_.double_angles > 0 && params_.arcsine_degree == 0;
}

std::vector<Ciphertext> EvalMod::evaluate_batch_open(const PolynomialEvaluator& pe,
                                                     const Evaluator& ev, const RelinKey& rlk,
                                                     std::span<const Ciphertext* const> cts,
                                                     double gain, OpenTail& tail) const {
  if (!has_open_tail()) {
    throw ParameterError(
        "EvalMod::evaluate_batch_open: the circuit does not end with a double angle (double "
        "angles " +
        std::to_string(params_.double_angles) + ", arcsine degree " +
        std::to_string(params_.arcsine_degree) + ")");
  }
  return run(pe, ev, rlk, cts, gain, &tail);
}

std::vector<Ciphertext> EvalMod::run(const PolynomialEvaluator& pe, const Evaluator& ev,
                                     const RelinKey& rlk, std::span<const Ciphertext* const> cts,
                                     double gain, OpenTail* open) const {
  if (cts.empty()) throw ParameterError("EvalMod: no ciphertext to evaluate on");
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (cts[i] == nullptr) {
      throw ParameterError("EvalMod::evaluate_batch: ciphertext " + std::to_string(i) + " is null");
    }
  }
  const Ciphertext& ct = *cts.front();
  for (std::size_t i = 1; i < cts.size(); ++i) {
    if (cts[i]->level() != ct.level() || cts[i]->scale() != ct.scale()) {
      throw ParameterError("EvalMod::evaluate_batch: ciphertext " + std::to_string(i) +
                           " is not at the level and scale of the first");
    }
  }
  if (ct.level() < params_.depth()) {
    throw LevelError("EvalMod: needs " + std::to_string(params_.depth()) +
                     " levels, the input is at level " + std::to_string(ct.level()));
  }
  if (!(gain > 0) || !std::isfinite(gain)) {
    throw ParameterError("EvalMod: the gain must be positive and finite");
  }
  // Each stage carries its cosine pre-multiplied by A_j (A_r = gain without the arcsine): the
  // message is only ~2^-16 of these O(1) values at N = 2^16, and the rescale that lands each stage
  // on its level adds noise fixed relative to the scale (the lowest EvalMod levels sit at
  // 2^50-2^55 between Delta and the 2^60 primes). A stage holding A_j cos instead of cos makes
  // that noise A_j times smaller; the next double angle undoes it for free,
  // A_(j+1) (2 c^2 - 1) = k_j (A_j c)^2 - A_(j+1) with the integer k_j = 2 A_(j+1) / A_j^2 on one
  // operand. The k_j are those of the powers of two below the gain (A_j the largest power of two
  // with A_j^2 <= A_(j+1) / 2); A_j = sqrt(2 A_(j+1) / k_j) then makes any gain exact, and a power
  // of two keeps every A_j a power of two. A_0 rides on the cosine's coefficients.
  const u32 r = params_.double_angles;
  const double top = params_.arcsine_degree ? 1.0 : gain;
  std::vector<double> amp(r + 1, 1.0);
  std::vector<i64> k(r, 1);
  {
    std::vector<i64> p2(r + 1, 1);
    while (static_cast<double>(p2[r]) * 2 <= top && p2[r] < (i64{1} << 52))
      p2[r] *= 2;
    amp[r] = top;
    for (u32 j = r; j-- > 0;) {
      while (p2[j] * 2 * p2[j] * 2 <= 2 * p2[j + 1])
        p2[j] *= 2;
      k[j] = 2 * p2[j + 1] / (p2[j] * p2[j]);
      amp[j] = std::sqrt(2 * amp[j + 1] / static_cast<double>(k[j]));
    }
  }
  ChebyshevSeries cs = cos_;
  for (double& x : cs.coeffs)
    x *= amp[0];
  // v = y - 1 / (4K + 1), z = 2 v^2 - 1 (the factor 2 rides on one operand, exactly), then the
  // series in z.
  const detail::GroupOps ops(ev, rlk);
  detail::CiphertextGroup v;
  for (const Ciphertext* c : cts)
    v.push_back(ev.add_const(*c, input_shift(params_.k_bound)));
  detail::CiphertextGroup z = ops.mul_relin_rescale(v, v, 2);
  ops.add_const_inplace(z, -1.0);
  detail::CiphertextGroup c = pe.evaluate_batch(detail::pointers_of(z), cs);
  for (u32 j = 0; j < r; ++j) {
    if (open != nullptr && j + 1 == r) {
      open->factor = k[j];
      open->constant = amp[j + 1];
      return c;
    }
    // The integer factor rides on one operand (exact), so relinearization and rescale merge.
    detail::CiphertextGroup sq = ops.mul_relin_rescale(c, c, k[j]);
    ops.add_const_inplace(sq, -amp[j + 1]);
    c = std::move(sq);
  }
  if (params_.arcsine_degree) {
    ChebyshevSeries a = arcsine_;
    for (double& x : a.coeffs)
      x *= gain;
    return pe.evaluate_batch(detail::pointers_of(c), a);
  }
  return c;
}

}  // namespace theo
