#include "theo/ring/shape_checks.h"

#include <functional>
#include <string>
#include <vector>

namespace theo::checks {

namespace {

[[noreturn]] void fail(std::string_view op, const std::string& what) {
  throw ParameterError(std::string(op) + ": " + what);
}

std::string shape(ConstPolyRef p) {
  return "n " + std::to_string(p.n) + ", basis " + to_string(p.basis);
}

}  // namespace

void poly(std::string_view op, std::string_view arg, const Backend& be, ConstPolyRef p) {
  if (p.n != be.n())
    fail(op, std::string(arg) + " has n = " + std::to_string(p.n) +
                 ", the ring has n = " + std::to_string(be.n()));
  const std::size_t primes = be.ring().primes.size();
  for (u32 i = 0; i < p.basis.size; ++i)
    if (p.basis.ids[i] >= primes)
      fail(op, std::string(arg) + " limb " + std::to_string(i) + " has prime id " +
                   std::to_string(p.basis.ids[i]) + ", the ring has " + std::to_string(primes) +
                   " primes");
  if (p.data == nullptr && p.words() > 0) fail(op, std::string(arg) + " has no data");
}

void same_shape(std::string_view op, std::string_view arg_a, ConstPolyRef a, std::string_view arg_b,
                ConstPolyRef b) {
  if (a.n != b.n || !(a.basis == b.basis))
    fail(op, std::string(arg_b) + " (" + shape(b) + ") does not match " + std::string(arg_a) +
                 " (" + shape(a) + ")");
}

void limb_consts(std::string_view op, std::string_view arg, const Backend& be, ConstPolyRef p,
                 std::span<const u32> consts) {
  if (consts.size() != p.limbs())
    fail(op, std::string(arg) + " has " + std::to_string(consts.size()) + " constants for " +
                 std::to_string(p.limbs()) + " limbs");
  for (u32 i = 0; i < p.limbs(); ++i) {
    const u32 q = be.modulus(p.basis.ids[i]).q;
    if (consts[i] >= q)
      fail(op, std::string(arg) + "[" + std::to_string(i) + "] = " + std::to_string(consts[i]) +
                   " is not canonical mod " + std::to_string(q));
  }
}

void no_alias(std::string_view op, std::string_view arg_a, ConstPolyRef a, std::string_view arg_b,
              ConstPolyRef b) {
  if (a.words() == 0 || b.words() == 0) return;
  // std::less gives a total order on unrelated pointers, where < would not.
  const std::less<const u32*> lt;
  const u32* a_end = a.data + a.words();
  const u32* b_end = b.data + b.words();
  if (lt(a.data, b_end) && lt(b.data, a_end))
    fail(op, std::string(arg_a) + " and " + std::string(arg_b) + " overlap in memory");
}

void key_mult_add0(std::string_view op, const Backend& be, ConstPolyRef add0, ConstPolyRef out0,
                   ConstPolyRef out1) {
  if (add0.words() == 0) return;
  poly(op, "add0", be, add0);
  same_shape(op, "out0", out0, "add0", add0);
  no_alias(op, "add0", add0, "out0", out0);
  no_alias(op, "add0", add0, "out1", out1);
}

void key_mult_add_scaled(std::string_view op, const Backend& be, ConstPolyRef a0, ConstPolyRef a1,
                         std::span<const u32> s, ConstPolyRef out0, ConstPolyRef out1) {
  const auto term = [&](const char* name, ConstPolyRef a) {
    poly(op, name, be, a);
    same_shape(op, "out0", out0, name, a);
    no_alias(op, name, a, "out0", out0);
    no_alias(op, name, a, "out1", out1);
  };
  term("a0", a0);
  term("a1", a1);
  if (s.size() != out0.limbs()) {
    fail(op, "needs one constant per limb (" + std::to_string(out0.limbs()) + " limbs, got " +
                 std::to_string(s.size()) + ")");
  }
}

void key_mult_rotations_args(std::string_view op, const Backend& be,
                             std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                             std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                             std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                             ConstPolyRef add0) {
  const std::size_t r = gs.size(), d = digits.size();
  if (kb.size() != r * d || ka.size() != r * d || out0.size() != r || out1.size() != r) {
    fail(op, "needs one kb and one ka per digit per rotation and one out0 / out1 per rotation (" +
                 std::to_string(d) + " digits, " + std::to_string(r) + " rotations; got " +
                 std::to_string(kb.size()) + " kb, " + std::to_string(ka.size()) + " ka, " +
                 std::to_string(out0.size()) + " out0, " + std::to_string(out1.size()) + " out1)");
  }
  for (std::size_t i = 0; i < r; ++i) {
    galois(op, indexed("gs", i), gs[i]);
    key_mult_args(op, be, digits, kb.subspan(i * d, d), ka.subspan(i * d, d), out0[i], out1[i]);
    key_mult_add0(op, be, add0, out0[i], out1[i]);
    for (std::size_t j = 0; j < r; ++j) {
      if (i == j) continue;
      no_alias(op, indexed("out0", i), out0[i], indexed("out0", j), out0[j]);
      no_alias(op, indexed("out0", i), out0[i], indexed("out1", j), out1[j]);
      no_alias(op, indexed("out1", i), out1[i], indexed("out1", j), out1[j]);
    }
  }
}

void key_mult_sums_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> d,
                        std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                        std::span<const PolyRef> out0, std::span<const PolyRef> out1) {
  const std::size_t k = kb.size(), g = out0.size();
  if (ka.size() != k || out1.size() != g || d.size() != g * k) {
    fail(op, "needs as many ka as kb, one out1 per out0 and one d per sum per term (" +
                 std::to_string(k) + " kb, " + std::to_string(ka.size()) + " ka, " +
                 std::to_string(g) + " out0, " + std::to_string(out1.size()) + " out1, " +
                 std::to_string(d.size()) + " d)");
  }
  for (std::size_t i = 0; i < g; ++i) {
    bool any = false;
    for (std::size_t j = 0; j < k; ++j)
      any = any || d[i * k + j].words() != 0;
    if (!any) fail(op, indexed("out0", i) + "'s sum has no term");
    std::vector<ConstPolyRef> di, bi, ai;
    for (std::size_t j = 0; j < k; ++j) {
      no_alias(op, indexed("out0", i), out0[i], indexed("kb", j), kb[j]);
      no_alias(op, indexed("out1", i), out1[i], indexed("ka", j), ka[j]);
      if (d[i * k + j].words() == 0) continue;
      di.push_back(d[i * k + j]);
      bi.push_back(kb[j]);
      ai.push_back(ka[j]);
    }
    key_mult_args(op, be, di, bi, ai, out0[i], out1[i]);
    for (std::size_t j = 0; j < g; ++j) {
      if (i == j) continue;
      no_alias(op, indexed("out0", i), out0[i], indexed("out0", j), out0[j]);
      no_alias(op, indexed("out0", i), out0[i], indexed("out1", j), out1[j]);
      no_alias(op, indexed("out1", i), out1[i], indexed("out1", j), out1[j]);
    }
  }
}

void bconv_jobs_independent(std::string_view op, std::span<const BConvJob> jobs) {
  for (std::size_t a = 0; a < jobs.size(); ++a) {
    for (std::size_t b = 0; b < jobs.size(); ++b) {
      if (a == b) continue;
      const std::string out_a = indexed("jobs", a) + ".out";
      no_alias(op, out_a, jobs[a].out, indexed("jobs", b) + ".out", jobs[b].out);
      no_alias(op, out_a, jobs[a].out, indexed("jobs", b) + ".in", jobs[b].in);
    }
  }
}

std::string indexed(std::string_view name, std::size_t i) {
  // Built by appending: GCC 12 reports a false -Wrestrict on "literal" + std::string chains.
  std::string s(name);
  s += '[';
  s += std::to_string(i);
  s += ']';
  return s;
}

void same_count(std::string_view op, std::string_view arg_a, std::size_t a, std::string_view arg_b,
                std::size_t b) {
  if (a != b)
    fail(op, std::string(arg_a) + " has " + std::to_string(a) + " entries, " + std::string(arg_b) +
                 " has " + std::to_string(b));
}

void key_mult_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> digits,
                   std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                   ConstPolyRef out0, ConstPolyRef out1) {
  poly(op, "out0", be, out0);
  same_shape(op, "out0", out0, "out1", out1);
  no_alias(op, "out0", out0, "out1", out1);
  same_count(op, "digits", digits.size(), "kb", kb.size());
  same_count(op, "digits", digits.size(), "ka", ka.size());
  for (std::size_t k = 0; k < digits.size(); ++k) {
    for (const auto& [arg, p] :
         {std::pair{"digits", digits[k]}, std::pair{"kb", kb[k]}, std::pair{"ka", ka[k]}}) {
      const std::string name = indexed(arg, k);
      same_shape(op, "out0", out0, name, p);
      no_alias(op, name, p, "out0", out0);
      no_alias(op, name, p, "out1", out1);
    }
  }
}

void mul_scalar_sum_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> a,
                         std::span<const u32> s, ConstPolyRef out) {
  poly(op, "out", be, out);
  if (a.empty()) fail(op, "a has no terms");
  const std::size_t limbs = out.limbs();
  same_count(op, "s", s.size(), "a.size() * limbs", a.size() * limbs);
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::string name = indexed("a", k);
    same_shape(op, "out", out, name, a[k]);
    no_alias(op, name, a[k], "out", out);
    limb_consts(op, indexed("s row", k), be, out, s.subspan(k * limbs, limbs));
  }
}

void tensor_args(std::string_view op, const Backend& be, ConstPolyRef a0, ConstPolyRef a1,
                 ConstPolyRef b0, ConstPolyRef b1, ConstPolyRef d0, ConstPolyRef d1,
                 ConstPolyRef d2) {
  poly(op, "a0", be, a0);
  same_shape(op, "a0", a0, "a1", a1);
  same_shape(op, "a0", a0, "b0", b0);
  same_shape(op, "a0", a0, "b1", b1);
  same_shape(op, "a0", a0, "d0", d0);
  same_shape(op, "a0", a0, "d1", d1);
  same_shape(op, "a0", a0, "d2", d2);
  no_alias(op, "d0", d0, "d1", d1);
  no_alias(op, "d0", d0, "d2", d2);
  no_alias(op, "d1", d1, "d2", d2);
}

bool consts_per_poly(std::span<const PolyRef> polys, std::span<const u32> consts) {
  std::size_t total = 0;
  for (const PolyRef& p : polys)
    total += p.limbs();
  return polys.size() > 1 && consts.size() == total;
}

void galois(std::string_view op, std::string_view arg, u32 k) {
  if (k % 2 == 0)
    fail(op,
         std::string(arg) + " = " + std::to_string(k) + " is even; a Galois element must be odd");
}

void batch_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> a,
                std::span<const ConstPolyRef> b, std::span<const PolyRef> out) {
  same_count(op, "a", a.size(), "b", b.size());
  same_count(op, "a", a.size(), "out", out.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::string ak = indexed("a", k), ok = indexed("out", k);
    poly(op, ak, be, a[k]);
    same_shape(op, ak, a[k], indexed("b", k), b[k]);
    same_shape(op, ak, a[k], ok, out[k]);
    for (std::size_t j = 0; j < a.size(); ++j) {
      if (j == k) continue;
      no_alias(op, ok, out[k], indexed("a", j), a[j]);
      no_alias(op, ok, out[k], indexed("b", j), b[j]);
      if (j > k) no_alias(op, ok, out[k], indexed("out", j), out[j]);
    }
  }
}

void bconv_args(std::string_view op, const Backend& be, const BConvPlan& plan, ConstPolyRef in,
                ConstPolyRef out) {
  poly(op, "in", be, in);
  poly(op, "out", be, out);
  same_shape(op, "plan.src", ConstPolyRef{in.data, in.n, plan.src()}, "in", in);
  same_shape(op, "plan.dst", ConstPolyRef{out.data, out.n, plan.dst()}, "out", out);
  no_alias(op, "in", in, "out", out);
}

namespace {

// args, one per poly (named name[k]): as many as polys, each a poly of be shaped like polys[k],
// then overlaps(k, name[k]) checks what args[k] must not overlap.
template <typename Ref, typename Overlaps>
void per_poly_args(std::string_view op, const Backend& be, std::span<const PolyRef> polys,
                   std::string_view name, std::span<const Ref> args, Overlaps&& overlaps) {
  same_count(op, "polys", polys.size(), name, args.size());
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string arg = indexed(name, k);
    poly(op, arg, be, args[k]);
    same_shape(op, indexed("polys", k), polys[k], arg, args[k]);
    overlaps(k, arg);
  }
}

}  // namespace

void transform_args(std::string_view op, std::string_view consts_name, const Backend& be,
                    std::span<const PolyRef> polys, std::span<const u32> consts,
                    std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  for (std::size_t k = 0; k < polys.size(); ++k) {
    const std::string arg = indexed("polys", k);
    poly(op, arg, be, polys[k]);
    for (std::size_t j = 0; j < k; ++j)
      no_alias(op, indexed("polys", j), polys[j], arg, polys[k]);
  }
  if (!consts.empty()) {
    if (polys.empty()) fail(op, std::string(consts_name) + " given without polys");
    const bool per_poly = consts_per_poly(polys, consts);
    std::size_t offset = 0;
    for (std::size_t k = 0; k < polys.size(); ++k) {
      if (per_poly) {
        limb_consts(op, indexed(consts_name, k), be, polys[k],
                    consts.subspan(offset, polys[k].limbs()));
        offset += polys[k].limbs();
      } else {
        same_shape(op, "polys[0]", polys[0], indexed("polys", k), polys[k]);
      }
    }
    if (!per_poly) limb_consts(op, consts_name, be, polys[0], consts);
  }
  if (!src.empty()) {
    per_poly_args(op, be, polys, "src", src, [&](std::size_t k, const std::string& arg) {
      for (std::size_t j = 0; j < polys.size(); ++j)
        if (j != k || src[k].data != polys[k].data)
          no_alias(op, arg, src[k], indexed("polys", j), polys[j]);
    });
  }
  if (!input_copy.empty()) {
    per_poly_args(op, be, polys, "input_copy", input_copy,
                  [&](std::size_t k, const std::string& arg) {
                    for (std::size_t j = 0; j < polys.size(); ++j) {
                      no_alias(op, arg, input_copy[k], indexed("polys", j), polys[j]);
                      if (!src.empty()) no_alias(op, arg, input_copy[k], indexed("src", j), src[j]);
                      if (j < k)
                        no_alias(op, arg, input_copy[k], indexed("input_copy", j), input_copy[j]);
                    }
                  });
  }
}

void sub_mul_epilogue_args(std::string_view op, const Backend& be, std::span<const PolyRef> polys,
                           std::span<const ConstPolyRef> a, u32 first, std::span<const u32> s) {
  same_count(op, "polys", polys.size(), "a", a.size());
  if (a.empty()) return;
  poly(op, "a[0]", be, a[0]);
  limb_consts(op, "s", be, a[0], s);
  const u32 width = a[0].limbs();
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::string arg = indexed("a", k);
    poly(op, arg, be, a[k]);
    same_shape(op, "a[0]", a[0], arg, a[k]);
    const std::string pk = indexed("polys", k);
    if (u64{first} + width > polys[k].limbs())
      fail(op, "the window [" + std::to_string(first) + ", " + std::to_string(first + width) +
                   ") of " + arg + " exceeds the " + std::to_string(polys[k].limbs()) +
                   " limbs of " + pk);
    same_shape(op, arg, a[k], pk + " window", polys[k].slice(first, width));
    for (std::size_t j = 0; j < polys.size(); ++j)
      no_alias(op, arg, a[k], indexed("polys", j), polys[j]);
  }
}

}  // namespace theo::checks
