// Bindings of the Evaluator: every homomorphic operation without implicit steps.

#include "bindings.h"

namespace theopy {

namespace {

using Ev = WEvaluator;
using Ct = WCiphertext;
using Pt = WPlaintext;

// The Python name and docstring of one binding.
struct Named {
  const char* name;
  const char* doc;
};

// Binds an evaluator op twice from one definition: `op.name(a, args...)` returns the result as a
// new Ciphertext and `inplace.name(a, args...)` rebinds `a` to it, as the C++ *_inplace ops do.
// `make(e, name, a, args...)` runs with the GIL held (it picks the keys, naming `name` in a
// MissingKeyError) and returns what computes the result with the GIL released; `real(a, args...)`
// says whether the result's slots stay real. `extra` are the nanobind arguments after `a`.
template <typename... Args, typename Make, typename Real, typename... Extra>
void def_with_inplace(nb::class_<Ev>& cls, Named op, Named inplace, Make make, Real real,
                      const nb::arg& a_arg, const Extra&... extra) {
  cls.def(
      op.name,
      [make, real, name = op.name](const Ev& e, const Ct& a, Args... args) {
        return run_ct(e.s, real(a, args...), make(e, name, a, args...));
      },
      a_arg, extra..., op.doc);
  cls.def(
      inplace.name,
      [make, real, name = inplace.name](const Ev& e, Ct& a, Args... args) {
        const bool r = real(a, args...);
        auto result = make(e, name, a, args...);
        run_void([&] { a.ct = result(); });
        a.real = r;
      },
      a_arg, extra..., inplace.doc);
}

// The operand a binary op reads from the second argument: its ciphertext or its plaintext.
const theo::Ciphertext& operand(const Ct& c) {
  return c.ct;
}
const theo::Plaintext& operand(const Pt& p) {
  return p.pt;
}

// A binary op a (op) b through def_with_inplace, kOp the Evaluator member it calls (add, sub,
// add_plain, sub_plain, multiply_plain); the result is real when both operands are.
template <typename B, auto kOp>
void def_binary(nb::class_<Ev>& cls, Named op, Named inplace) {
  def_with_inplace<const B&>(
      cls, op, inplace,
      [](const Ev& e, const char*, const Ct& a, const B& b) {
        return [&] { return (e.s->evaluator.*kOp)(a.ct, operand(b)); };
      },
      [](const Ct& a, const B& b) { return a.real && b.real; }, "a"_a, "b"_a);
}

// A product a * b relinearized with a key (the argument, else the Evaluator's, else the
// Context's), kOp the Evaluator member it calls (multiply, multiply_relin_rescale).
using Product = theo::Ciphertext (theo::Evaluator::*)(const theo::Ciphertext&,
                                                      const theo::Ciphertext&,
                                                      const theo::RelinKey&) const;
template <Product kOp, typename RelinArg>
void def_product(nb::class_<Ev>& cls, const char* name, const RelinArg& rk_arg, const char* doc) {
  cls.def(
      name,
      [name](const Ev& e, const Ct& a, const Ct& b, const WRelinKey* rk) {
        auto k = pick_relin(e.s, &e, rk, name);
        return run_ct(e.s, a.real && b.real, [&] { return (e.s->evaluator.*kOp)(a.ct, b.ct, *k); });
      },
      "a"_a, "b"_a, rk_arg, doc);
}

}  // namespace

void bind_evaluator(nb::module_& m) {
  // ---- Evaluator -----------------------------------------------------------------------------
  auto rk_arg = [] { return nb::arg("relin_key").none() = nb::none(); };
  auto gk_arg = [] { return nb::arg("galois_keys").none() = nb::none(); };
  auto ls = [](std::optional<double> v) -> std::optional<long double> {
    if (v) return static_cast<long double>(*v);
    return std::nullopt;
  };

  nb::class_<WEvaluator> cls(
      m, "Evaluator",
      "Homomorphic operations. Stateless apart from its default keys: one instance may be used "
      "from several threads (the GIL is released during each operation). Inputs are validated "
      "first (ContextError, ScaleError, LevelError, MissingKeyError) and are left unchanged by "
      "a failed call. Operands at different levels are brought to the lower level. Keys: the "
      "argument when given, else the Evaluator's, else the Context's (context.relin_key, "
      "context.galois_keys).");
  cls.def(
         "__init__",
         [](Ev* self, const WContext& ctx, const WRelinKey* rk, const WGaloisKeys* gk) {
           new (self) Ev{ctx.s, rk ? rk->k : nullptr, gk ? gk->k : nullptr};
         },
         "context"_a, rk_arg(), gk_arg(), "An evaluator for `context` with optional default keys.")
      .def_prop_ro(
          "context", [](const Ev& e) { return WContext{e.s}; }, "The context.")
      .def(
          "clone",
          [](const Ev& e, const Ct& a) {
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.clone(a.ct); });
          },
          "ciphertext"_a, "A deep copy.");

  // additive
  def_binary<Ct, &theo::Evaluator::add>(cls, {"add", "a + b."}, {"add_inplace", "a += b."});
  def_binary<Ct, &theo::Evaluator::sub>(cls, {"sub", "a - b."}, {"sub_inplace", "a -= b."});
  def_binary<Pt, &theo::Evaluator::add_plain>(cls,
                                              {"add_plain", "a + plaintext (scales must match)."},
                                              {"add_plain_inplace", "a += plaintext."});
  def_binary<Pt, &theo::Evaluator::sub_plain>(cls,
                                              {"sub_plain", "a - plaintext (scales must match)."},
                                              {"sub_plain_inplace", "a -= plaintext."});
  def_with_inplace<Cplx>(
      cls, {"add_const", "Adds the constant c to every slot (no level used)."},
      {"add_const_inplace", "Adds the constant c to every slot in place."},
      [](const Ev& e, const char*, const Ct& a, Cplx c) {
        return [&e, &a, c] { return e.s->evaluator.add_const(a.ct, c); };
      },
      [](const Ct& a, Cplx c) { return a.real && c.imag() == 0.0; }, "a"_a, "c"_a);
  def_with_inplace<>(
      cls, {"negate", "-a."}, {"negate_inplace", "a = -a."},
      [](const Ev& e, const char*, const Ct& a) {
        return [&] { return e.s->evaluator.negate(a.ct); };
      },
      [](const Ct& a) { return a.real; }, "a"_a);

  // multiplicative
  def_product<&theo::Evaluator::multiply>(
      cls, "multiply", rk_arg(),
      "a * b, relinearized, not rescaled (the scale is the product of the scales).");
  cls.def(
         "multiply_without_relin",
         [](const Ev& e, const Ct& a, const Ct& b) {
           return run_ct(e.s, a.real && b.real,
                         [&] { return e.s->evaluator.multiply(a.ct, b.ct); });
         },
         "a"_a, "b"_a,
         "The tensor product a * b without relinearization: a 3-polynomial ciphertext "
         "(decryptable; relinearize() brings it back to 2).")
      .def(
          "square",
          [](const Ev& e, const Ct& a, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "square");
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.square(a.ct, *k); });
          },
          "a"_a, rk_arg(), "a * a, relinearized, not rescaled.");
  def_with_inplace<const WRelinKey*>(
      cls, {"relinearize", "3 polynomials -> 2 (key switching of the s^2 part)."},
      {"relinearize_inplace", "Relinearizes in place."},
      [](const Ev& e, const char* name, const Ct& a, const WRelinKey* rk) {
        auto k = pick_relin(e.s, &e, rk, name);
        return [&e, &a, k] { return e.s->evaluator.relinearize(a.ct, *k); };
      },
      [](const Ct& a, const WRelinKey*) { return a.real; }, "a"_a, rk_arg());
  def_product<&theo::Evaluator::multiply_relin_rescale>(
      cls, "multiply_relin_rescale", rk_arg(),
      "Multiply, relinearize and rescale in one call (the result lands on Delta_{l-1}).");
  def_binary<Pt, &theo::Evaluator::multiply_plain>(
      cls, {"multiply_plain", "a * plaintext, not rescaled."},
      {"multiply_plain_inplace", "a *= plaintext, not rescaled."});
  def_with_inplace<Cplx, std::optional<double>>(
      cls,
      {"multiply_const",
       "Multiplies every slot by c, encoded at const_scale (default Delta_level), which "
       "multiplies the result's scale; not rescaled."},
      {"multiply_const_inplace", "multiply_const in place."},
      [ls](const Ev& e, const char*, const Ct& a, Cplx c, std::optional<double> const_scale) {
        return [&e, &a, c, cs = ls(const_scale)] {
          return e.s->evaluator.multiply_const(a.ct, c, cs);
        };
      },
      [](const Ct& a, Cplx c, std::optional<double>) { return a.real && c.imag() == 0.0; }, "a"_a,
      "c"_a, "const_scale"_a = nb::none());
  cls.def(
         "multiply_integer",
         [](const Ev& e, const Ct& a, theo::i64 k) {
           return run_ct(e.s, a.real, [&] { return e.s->evaluator.multiply_integer(a.ct, k); });
         },
         "a"_a, "k"_a, "Multiplies by an integer exactly (scale and level unchanged).")
      .def(
          "multiply_monomial",
          [](const Ev& e, const Ct& a, theo::i64 k) {
            return run_ct(e.s, false, [&] { return e.s->evaluator.multiply_monomial(a.ct, k); });
          },
          "a"_a, "k"_a,
          "Multiplies by the monomial X^k (X^N = -1); X^(N/2) multiplies every slot by i.");

  // levels
  def_with_inplace<>(
      cls, {"rescale", "Rational rescale to level - 1 (LevelError at level 0)."},
      {"rescale_inplace", "Rescales in place."},
      [](const Ev& e, const char*, const Ct& a) {
        return [&] { return e.s->evaluator.rescale(a.ct); };
      },
      [](const Ct& a) { return a.real; }, "a"_a);
  def_with_inplace<u32, std::optional<double>>(
      cls,
      {"level_down",
       "Moves to a lower level keeping the value; the scale lands at Delta_level (or "
       "target_scale)."},
      {"level_down_inplace", "level_down in place."},
      [ls](const Ev& e, const char*, const Ct& a, u32 level, std::optional<double> target_scale) {
        return [&e, &a, level, ts = ls(target_scale)] {
          return e.s->evaluator.level_down(a.ct, level, ts);
        };
      },
      [](const Ct& a, u32, std::optional<double>) { return a.real; }, "a"_a, "level"_a,
      "target_scale"_a = nb::none());

  // automorphisms
  def_with_inplace<int, const WGaloisKeys*>(
      cls, {"rotate", "Left rotation by `steps` slots (negative: right)."},
      {"rotate_inplace", "Rotates in place."},
      [](const Ev& e, const char* name, const Ct& a, int r, const WGaloisKeys* gk) {
        auto k = pick_galois(e.s, &e, gk, name);
        return [&e, &a, r, k] { return e.s->evaluator.rotate(a.ct, r, *k); };
      },
      [](const Ct& a, int, const WGaloisKeys*) { return a.real; }, "a"_a, "steps"_a, gk_arg());
  cls.def(
         "conjugate",
         [](const Ev& e, const Ct& a, const WGaloisKeys* gk) {
           auto k = pick_galois(e.s, &e, gk, "conjugate");
           return run_ct(e.s, a.real, [&] { return e.s->evaluator.conjugate(a.ct, *k); });
         },
         "a"_a, gk_arg(), "Complex conjugation of every slot.")
      .def(
          "rotate_hoisted",
          [](const Ev& e, const Ct& a, std::vector<int> rotations, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "rotate_hoisted");
            std::vector<theo::Ciphertext> outs;
            {
              nb::gil_scoped_release release;
              outs = e.s->evaluator.rotate_hoisted(a.ct, rotations, *k);
            }
            std::vector<WCiphertext> res;
            res.reserve(outs.size());
            for (auto& o : outs)
              res.push_back(WCiphertext{e.s, std::move(o), a.real});
            return res;
          },
          "a"_a, "rotations"_a, gk_arg(),
          "Several rotations of one ciphertext sharing one ModUp (hoisting); one result per "
          "rotation, in order.")
      .def(
          "apply_galois",
          [](const Ev& e, const Ct& a, u32 g, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "apply_galois");
            return run_ct(e.s, false, [&] { return e.s->evaluator.apply_galois(a.ct, g, *k); });
          },
          "a"_a, "galois_element"_a, gk_arg(),
          "The automorphism X -> X^g for an odd Galois element g that has a key.");
}

}  // namespace theopy
