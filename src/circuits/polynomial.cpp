#include "theo/circuits/polynomial.h"

#include <bit>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "circuits/ciphertext_group.h"
#include "circuits/polynomial_lazy.h"
#include "theo/errors.h"

namespace theo {

namespace {

using detail::CiphertextGroup;
using detail::GroupOps;

u32 ceil_log2(u32 x) {
  return x <= 1 ? 0 : static_cast<u32>(std::bit_width(x - 1));
}

// A partial result: ciphertexts, or (when every non-constant coefficient is zero) a constant.
struct Partial {
  std::optional<CiphertextGroup> ct;
  double constant = 0;
};

// T_i(y) computed once each at its natural level top - ceil(log2 i), plus copies lowered to other
// levels on demand.
class ChebyshevBasis {
 public:
  ChebyshevBasis(const GroupOps& ops, CiphertextGroup y) : ops_(ops), top_(y.front().level()) {
    natural_.emplace(1u, std::move(y));
  }

  u32 level_of(u32 i) const { return top_ - ceil_log2(i); }
  u32 top() const { return top_; }

  const CiphertextGroup& get(u32 i) {
    auto it = natural_.find(i);
    if (it != natural_.end()) return it->second;
    CiphertextGroup t = compute(i);
    return natural_.emplace(i, std::move(t)).first->second;
  }

  // T_i at `level` (<= its natural level), at that level's default scale.
  const CiphertextGroup& at(u32 i, u32 level) {
    const CiphertextGroup& nat = get(i);
    if (nat.front().level() == level) return nat;
    const auto key = std::make_pair(i, level);
    auto it = lowered_.find(key);
    if (it != lowered_.end()) return it->second;
    return lowered_.emplace(key, ops_.level_down(nat, level)).first->second;
  }

 private:
  CiphertextGroup compute(u32 i) {
    if (std::has_single_bit(i)) {
      // T_2m = 2 T_m^2 - 1 (relinearization merged with the rescale; the factor 2 rides on one
      // operand, exactly)
      const CiphertextGroup& t = get(i / 2);
      CiphertextGroup sq = ops_.mul_relin_rescale(t, t, 2);
      ops_.add_const_inplace(sq, -1.0);
      return sq;
    }
    // T_(m+n) = 2 T_m T_n - T_(m-n), m the power of two just below i.
    const u32 m = u32{1} << (ceil_log2(i) - 1);
    const u32 n = i - m;
    const u32 lv = level_of(m);
    CiphertextGroup prod = ops_.mul_relin_rescale(at(m, lv), at(n, lv), 2);
    ops_.sub_inplace(prod, at(m - n, lv - 1));
    return prod;
  }

  const GroupOps& ops_;
  u32 top_;
  std::map<u32, CiphertextGroup> natural_;
  std::map<std::pair<u32, u32>, CiphertextGroup> lowered_;
};

class Recursion {
 public:
  Recursion(const GroupOps& ops, ChebyshevBasis& basis, u32 baby)
      : ops_(ops), basis_(basis), baby_(baby) {}

  // Evaluates sum_i c[i] T_i at a level >= target (target <= top - ceil(log2(deg + 1))).
  Partial eval(const std::vector<double>& c, u32 target) {
    u32 d = static_cast<u32>(c.size()) - 1;
    while (d > 0 && c[d] == 0)
      --d;
    if (d == 0) return Partial{std::nullopt, c[0]};
    const u32 g = std::bit_floor(d);
    const bool leaf_fits = basis_.level_of(d) >= target + 1;
    if ((d < baby_ && leaf_fits) || d == g) return leaf(c, d);
    // p = q T_g + r (d < 2g): T_g T_j = (T_(g+j) + T_(g-j)) / 2.
    std::vector<double> q(d - g + 1), r(c.begin(), c.begin() + g);
    q[0] = c[g];
    for (u32 j = 1; j <= d - g; ++j) {
      q[j] = 2 * c[g + j];
      r[g - j] -= c[g + j];
    }
    Partial pq = eval(q, target + 1);
    Partial pr = eval(r, target);
    CiphertextGroup prod;
    if (!pq.ct) {
      prod = scaled_term(pq.constant, g);
    } else {
      const u32 lv = std::min(pq.ct->front().level(), basis_.level_of(g));
      const CiphertextGroup qa =
          pq.ct->front().level() == lv ? std::move(*pq.ct) : ops_.level_down(*pq.ct, lv);
      prod = ops_.mul_relin_rescale(qa, basis_.at(g, lv));
    }
    if (!pr.ct) {
      if (pr.constant != 0) ops_.add_const_inplace(prod, pr.constant);
      return Partial{std::move(prod), 0};
    }
    return Partial{add_aligned(std::move(prod), std::move(*pr.ct)), 0};
  }

 private:
  CiphertextGroup scaled_term(double coeff, u32 i) {
    const u32 lv = basis_.level_of(i);
    const CiphertextGroup& t = basis_.get(i);
    return ops_.rescale(ops_.multiply_const(t, coeff, ops_.ev().context()->default_scale(lv)));
  }

  // sum_{i<=d} c_i T_i at the level of T_d and scale Delta_lv^2, in one pass per polynomial
  // (Evaluator::linear_combination reads the higher T_i in place, their coefficients encoded at
  // Delta_lv^2 / scale(T_i)); one rescale then lands on Delta_(lv-1).
  Partial leaf(const std::vector<double>& c, u32 d) {
    const u32 lv = basis_.level_of(d);
    const long double delta = ops_.ev().context()->default_scale(lv);
    std::vector<const CiphertextGroup*> terms;
    std::vector<double> coeffs;
    for (u32 i = 1; i <= d; ++i) {
      if (c[i] == 0) continue;
      terms.push_back(&basis_.get(i));
      coeffs.push_back(c[i]);
    }
    CiphertextGroup acc = ops_.linear_combination(terms, coeffs, lv, delta * delta);
    if (c[0] != 0) ops_.add_const_inplace(acc, c[0]);
    return Partial{ops_.rescale(acc), 0};
  }

  CiphertextGroup add_aligned(CiphertextGroup a, CiphertextGroup b) {
    const u32 la = a.front().level(), lb = b.front().level();
    if (la > lb) a = ops_.level_down(a, lb);
    if (lb > la) b = ops_.level_down(b, la);
    ops_.add_inplace(a, b);
    return a;
  }

  const GroupOps& ops_;
  ChebyshevBasis& basis_;
  u32 baby_;
};

}  // namespace

u32 PolynomialEvaluator::depth(u32 degree) {
  return ceil_log2(degree + 1);
}

bool PolynomialEvaluator::needs_affine(const Ciphertext& ct, const ChebyshevSeries& p) const {
  if (p.a != -1.0 || p.b != 1.0) return true;
  const long double want = ev_.context()->default_scale(ct.level());
  return std::fabs(ct.scale() / want - 1) > 0x1p-40L;
}

u32 PolynomialEvaluator::levels_consumed(const Ciphertext& ct, const ChebyshevSeries& p) const {
  return depth(p.degree()) + (needs_affine(ct, p) ? 1u : 0u);
}

Ciphertext PolynomialEvaluator::affine_to_unit(const Ciphertext& ct, double a, double b) const {
  if (ct.level() == 0) throw LevelError("PolynomialEvaluator: the input is at level 0");
  const Context& ctx = *ev_.context();
  const u32 l = ct.level();
  // const_scale chosen so that ct.scale() * cs / r_l == Delta_(l-1) exactly.
  const long double cs = ctx.default_scale(l - 1) * ctx.level(l).rescale_ratio / ct.scale();
  Ciphertext y = ev_.rescale(ev_.multiply_const(ct, 2.0 / (b - a), cs));
  y.set_scale(ctx.default_scale(l - 1));
  const double shift = -(a + b) / (b - a);
  if (shift != 0) ev_.add_const_inplace(y, shift);
  return y;
}

Ciphertext PolynomialEvaluator::evaluate(const Ciphertext& ct, const ChebyshevSeries& p,
                                         std::optional<u32> output_level) const {
  const Ciphertext* const one[] = {&ct};
  return std::move(evaluate_batch(one, p, output_level).front());
}

std::vector<Ciphertext> PolynomialEvaluator::evaluate_batch(std::span<const Ciphertext* const> cts,
                                                            const ChebyshevSeries& p,
                                                            std::optional<u32> output_level) const {
  if (p.coeffs.empty()) throw ParameterError("PolynomialEvaluator: the series has no coefficients");
  if (cts.empty()) throw ParameterError("PolynomialEvaluator: no ciphertext to evaluate on");
  for (std::size_t i = 0; i < cts.size(); ++i) {
    if (cts[i] == nullptr) {
      throw ParameterError("PolynomialEvaluator::evaluate_batch: ciphertext " + std::to_string(i) +
                           " is null");
    }
  }
  const Ciphertext& ct = *cts.front();
  for (std::size_t i = 1; i < cts.size(); ++i) {
    if (cts[i]->level() != ct.level() || cts[i]->scale() != ct.scale()) {
      throw ParameterError("PolynomialEvaluator::evaluate_batch: ciphertext " + std::to_string(i) +
                           " is not at the level and scale of the first (the batch runs in "
                           "as one group)");
    }
  }
  const u32 need = levels_consumed(ct, p);
  if (ct.level() < need) {
    throw LevelError("PolynomialEvaluator: degree " + std::to_string(p.degree()) + " needs " +
                     std::to_string(need) + " levels, the input is at level " +
                     std::to_string(ct.level()));
  }
  const GroupOps ops(ev_, rlk_);
  CiphertextGroup y;
  for (const Ciphertext* c : cts)
    y.push_back(needs_affine(ct, p) ? affine_to_unit(*c, p.a, p.b) : ev_.clone(*c));
  const u32 d = p.degree();
  const u32 target = y.front().level() - depth(d);
  if (output_level && *output_level > target) {
    throw LevelError("PolynomialEvaluator: output level " + std::to_string(*output_level) +
                     " is above the level the evaluation reaches (" + std::to_string(target) + ")");
  }
  if (ev_.context()->policy().optimizations().circuits.lazy_polynomial) {
    CiphertextGroup out = detail::evaluate_lazy(ops, std::move(y), p, target);
    const u32 final_level = output_level.value_or(target);
    if (out.front().level() > final_level) out = ops.level_down(out, final_level);
    return out;
  }
  ChebyshevBasis basis(ops, std::move(y));
  const u32 baby = u32{1} << ((depth(d) + 1) / 2);
  Recursion rec(ops, basis, baby);
  Partial res = rec.eval(p.coeffs, target);
  CiphertextGroup out;
  if (res.ct) {
    out = std::move(*res.ct);
  } else {
    // A constant series: 0 * T_1 + c.
    out = ops.rescale(
        ops.multiply_const(basis.get(1), 0.0, ev_.context()->default_scale(basis.top())));
    ops.add_const_inplace(out, res.constant);
  }
  const u32 final_level = output_level.value_or(target);
  if (out.front().level() > final_level) out = ops.level_down(out, final_level);
  return out;
}

}  // namespace theo
