// Paterson-Stockmeyer with lazy relinearization and rescaling (see polynomial_lazy.h).
//
// The depth-optimal recursion p = q T_g + r (g the largest power of two <= deg p) issues one
// relinearization and one rescale per product, one rescale per leaf, and a level_down (a rescale)
// wherever an operand sits above the level it is combined at, because every ciphertext is kept at
// its level's default scale. Here scales float instead:
//  * eval(c, L, S) returns the series exactly at level L and scale S, for any S the caller needs;
//  * a piece is peeled along its remainders, p = q_0 T_g0 + q_1 T_g1 + ... + leaf, until the
//    remainder is a leaf that can be read at level L + 1; each q_j is evaluated at (L + 1,
//    S r_(L+1) / s_gj) with s_gj the scale of T_gj read at L + 1 (limbs dropped, no rescale), so
//    every product carries the scale S r_(L+1); the tensor products and the leaf (a linear
//    combination at that scale, not rescaled) are summed, relinearized once and rescaled once;
//  * a leaf alone is a linear combination at level L + 1 and scale S r_(L+1), rescaled once;
//  * the basis keeps T_2m = 2 T_m^2 - 1 and T_(m+n) = 2 T_m T_n - T_(m-n) exact at floating
//    scales: the subtracted T_(m-n) joins the product unrescaled, before its one rescale.
// The depth is the recursion's (each q_j needs at most deg(q_0) < g_0 levels above L + 1), with one
// relinearization per peeled piece rather than per product and no rescale beyond those.

#include "circuits/polynomial_lazy.h"

#include <bit>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "theo/circuits/polynomial.h"
#include "theo/errors.h"

namespace theo::detail {

namespace {

u32 ceil_log2(u32 x) {
  return x <= 1 ? 0 : static_cast<u32>(std::bit_width(x - 1));
}

u32 degree_of(const std::vector<double>& c) {
  u32 d = c.empty() ? 0 : static_cast<u32>(c.size()) - 1;
  while (d > 0 && c[d] == 0)
    --d;
  return d;
}

// A partial result: ciphertexts, or (when every non-constant coefficient is zero) a constant.
struct Partial {
  std::optional<CiphertextGroup> ct;
  double constant = 0;
};

// T_i at its natural level top - ceil(log2 i), at whatever scale its products give.
class LazyBasis {
 public:
  LazyBasis(const GroupOps& ops, CiphertextGroup y) : ops_(ops), top_(y.front().level()) {
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

  // T_i as it is read at `level` (<= its natural level): the natural ciphertexts when their
  // modulus holds Q_level as a window (the Evaluator reads their limbs in place), else a copy
  // lowered to `level` at Delta_level.
  const CiphertextGroup& at(u32 i, u32 level) {
    const CiphertextGroup& nat = get(i);
    if (window(nat.front().level(), level)) return nat;
    const auto key = std::make_pair(i, level);
    auto it = lowered_.find(key);
    if (it != lowered_.end()) return it->second;
    return lowered_.emplace(key, ops_.level_down(nat, level)).first->second;
  }
  long double scale_at(u32 i, u32 level) { return at(i, level).front().scale(); }

 private:
  bool window(u32 from, u32 to) const {
    const Context& ctx = *ops_.ev().context();
    const LevelData& src = ctx.level(from);
    const LevelData& dst = ctx.level(to);
    return dst.first_id >= src.first_id && dst.first_id + dst.limbs <= src.first_id + src.limbs;
  }

  CiphertextGroup compute(u32 i) {
    if (std::has_single_bit(i)) {
      // T_2m = 2 T_m^2 - 1: the factor 2 rides on one operand (exactly), the constant is added
      // at the product's scale, whatever it is.
      const CiphertextGroup& t = get(i / 2);
      CiphertextGroup sq = ops_.mul_relin_rescale(t, t, 2);
      ops_.add_const_inplace(sq, -1.0);
      return sq;
    }
    // T_(m+n) = 2 T_m T_n - T_(m-n) at the level of T_m (m the power of two just below i): the
    // product and -T_(m-n), read at that level at the product's scale, share one rescale.
    const u32 m = u32{1} << (ceil_log2(i) - 1);
    const u32 n = i - m;
    const u32 lv = level_of(m);
    const CiphertextGroup& tm = at(m, lv);
    const CiphertextGroup& tn = at(n, lv);
    const long double s = tm.front().scale() * tn.front().scale();
    const std::vector<const CiphertextGroup*> terms = {&at(m - n, lv)};
    const double minus_one[] = {-1.0};
    const CiphertextGroup sub = ops_.linear_combination(terms, minus_one, lv, s);
    return ops_.mul_sum_relin_rescale({&tm}, {&tn}, lv, &sub, 2);
  }

  const GroupOps& ops_;
  u32 top_;
  std::map<u32, CiphertextGroup> natural_;
  std::map<std::pair<u32, u32>, CiphertextGroup> lowered_;
};

class LazyRecursion {
 public:
  LazyRecursion(const GroupOps& ops, LazyBasis& basis, u32 baby)
      : ops_(ops), basis_(basis), baby_(baby) {}

  // sum_i c[i] T_i exactly at level `level` and scale `scale`.
  Partial eval(const std::vector<double>& c, u32 level, long double scale) {
    const u32 d = degree_of(c);
    if (d == 0) return Partial{std::nullopt, c.empty() ? 0.0 : c[0]};
    const u32 g = std::bit_floor(d);
    if ((d < baby_ && basis_.level_of(d) >= level + 1) || d == g) {
      return Partial{leaf(c, d, level, scale), 0};
    }
    // Peel p = q_0 T_g0 + q_1 T_g1 + ... + rem until rem is a leaf readable at level + 1.
    std::vector<std::pair<std::vector<double>, u32>> pieces;
    std::vector<double> rem(c.begin(), c.begin() + d + 1);
    for (u32 dr = d;;) {
      const u32 gj = std::bit_floor(dr);
      // rem = q T_gj + r (dr < 2 gj): T_gj T_j = (T_(gj+j) + T_(gj-j)) / 2.
      std::vector<double> q(dr - gj + 1), r(rem.begin(), rem.begin() + gj);
      q[0] = rem[gj];
      for (u32 j = 1; j <= dr - gj; ++j) {
        q[j] = 2 * rem[gj + j];
        r[gj - j] -= rem[gj + j];
      }
      pieces.emplace_back(std::move(q), gj);
      rem = std::move(r);
      dr = degree_of(rem);
      if (dr == 0 || (dr < baby_ && basis_.level_of(dr) >= level + 1)) break;
    }
    const Context& ctx = *ops_.ev().context();
    const long double product_scale = scale * ctx.level(level + 1).rescale_ratio;
    std::vector<double> leaf_coeffs = rem;
    leaf_coeffs.resize(d + 1, 0.0);
    std::vector<CiphertextGroup> factors;
    factors.reserve(pieces.size());
    std::vector<u32> gs;
    for (const auto& [q, gj] : pieces) {
      Partial pq = eval(q, level + 1, product_scale / basis_.scale_at(gj, level + 1));
      if (pq.ct) {
        factors.push_back(std::move(*pq.ct));
        gs.push_back(gj);
      } else {
        leaf_coeffs[gj] += pq.constant;  // a constant times T_gj is a leaf term
      }
    }
    if (factors.empty()) {
      const u32 dl = degree_of(leaf_coeffs);
      if (dl == 0) return Partial{std::nullopt, leaf_coeffs[0]};
      return Partial{leaf(leaf_coeffs, dl, level, scale), 0};
    }
    std::vector<const CiphertextGroup*> a, b;
    for (std::size_t j = 0; j < factors.size(); ++j) {
      a.push_back(&factors[j]);
      b.push_back(&basis_.at(gs[j], level + 1));
    }
    std::optional<CiphertextGroup> addend = unrescaled_leaf(leaf_coeffs, level + 1, product_scale);
    CiphertextGroup out = ops_.mul_sum_relin_rescale(a, b, level + 1, addend ? &*addend : nullptr);
    if (!addend && leaf_coeffs[0] != 0) ops_.add_const_inplace(out, leaf_coeffs[0]);
    return Partial{std::move(out), 0};
  }

 private:
  // sum_(i <= d) c_i T_i at level `level` + 1 and scale `scale` r_(level+1), rescaled onto
  // (level, scale).
  CiphertextGroup leaf(const std::vector<double>& c, u32 d, u32 level, long double scale) {
    const long double s = scale * ops_.ev().context()->level(level + 1).rescale_ratio;
    std::vector<double> cc(c.begin(), c.begin() + d + 1);
    std::optional<CiphertextGroup> acc = unrescaled_leaf(cc, level + 1, s);
    if (!acc) throw LevelError("evaluate_lazy: a leaf without terms");  // d > 0 guarantees one
    return ops_.rescale(*acc);
  }

  // sum_i c_i T_i (constant included) at `level` and `scale`, every T_i read in place where it
  // can be; nullopt when no T_i term is nonzero.
  std::optional<CiphertextGroup> unrescaled_leaf(const std::vector<double>& c, u32 level,
                                                 long double scale) {
    std::vector<const CiphertextGroup*> terms;
    std::vector<double> coeffs;
    for (u32 i = 1; i < c.size(); ++i) {
      if (c[i] == 0) continue;
      terms.push_back(&basis_.at(i, level));
      coeffs.push_back(c[i]);
    }
    if (terms.empty()) return std::nullopt;
    CiphertextGroup acc = ops_.linear_combination(terms, coeffs, level, scale);
    if (c[0] != 0) ops_.add_const_inplace(acc, c[0]);
    return acc;
  }

  const GroupOps& ops_;
  LazyBasis& basis_;
  u32 baby_;
};

}  // namespace

CiphertextGroup evaluate_lazy(const GroupOps& ops, CiphertextGroup y, const ChebyshevSeries& p,
                              u32 target) {
  const Context& ctx = *ops.ev().context();
  const u32 d = p.degree();
  LazyBasis basis(ops, std::move(y));
  const u32 baby = u32{1} << ((PolynomialEvaluator::depth(d) + 1) / 2);
  LazyRecursion rec(ops, basis, baby);
  Partial res = rec.eval(p.coeffs, target, ctx.default_scale(target));
  if (res.ct) return std::move(*res.ct);
  // A constant series: 0 * T_1 + c.
  CiphertextGroup out =
      ops.rescale(ops.multiply_const(basis.get(1), 0.0, ctx.default_scale(basis.top())));
  ops.add_const_inplace(out, res.constant);
  if (out.front().level() > target) out = ops.level_down(out, target);
  return out;
}

}  // namespace theo::detail
