// Bindings of the values: Plaintext and Ciphertext (with its operators, which use the Context's
// keys).

#include "bindings.h"

namespace theopy {

void bind_values(nb::module_& m) {
  // ---- Plaintext -----------------------------------------------------------------------------
  nb::class_<WPlaintext>(m, "Plaintext",
                         "An encoded (not encrypted) vector of slots: a polynomial in the NTT "
                         "domain at some level, with its scale. Made by Encoder.encode().")
      .def_prop_ro(
          "level", [](const WPlaintext& p) { return p.pt.level(); }, "The level.")
      .def_prop_rw(
          "scale", [](const WPlaintext& p) { return static_cast<double>(p.pt.scale()); },
          [](WPlaintext& p, double v) { p.pt.set_scale(static_cast<long double>(v)); },
          "The scale (as a float; the library tracks it in extended precision).")
      .def_prop_ro(
          "slots", [](const WPlaintext& p) { return p.pt.slots(); }, "Number of slots.")
      .def_prop_ro(
          "is_real", [](const WPlaintext& p) { return p.real; },
          "True when encoded from real values (decode() then returns float64).")
      .def_prop_ro(
          "context", [](const WPlaintext& p) { return WContext{p.s}; }, "The context.")
      .def(
          "decode",
          [](const WPlaintext& p, std::optional<bool> real) {
            return decode_to_numpy(*p.s, p.pt, real.value_or(p.real));
          },
          "real"_a = nb::none(),
          nb::sig("def decode(self, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decodes to a numpy array of `slots` values: float64 when real (default: is_real), "
          "else complex128.")
      .def(
          "copy", [](const WPlaintext& p) { return deep_copy(p); }, "A deep copy.")
      .def(
          "__copy__", [](const WPlaintext& p) { return deep_copy(p); }, "A deep copy.")
      .def(
          "__deepcopy__", [](const WPlaintext& p, nb::handle) { return deep_copy(p); }, "memo"_a,
          "A deep copy.")
      .def("__repr__", [](const WPlaintext& p) {
        return "Plaintext(level=" + std::to_string(p.pt.level()) +
               ", scale=" + fmt_scale(p.pt.scale()) + ", slots=" + std::to_string(p.pt.slots()) +
               ")";
      });

  // ---- Ciphertext ----------------------------------------------------------------------------
  nb::class_<WCiphertext>(
      m, "Ciphertext",
      "An encrypted vector of slots at some level and scale. Operators: a + b, a - b, -a "
      "(b: Ciphertext, Plaintext, scalar or array); a * b multiplies and rescales once "
      "(Ciphertext operands are relinearized with context.relin_key), except a * int, which is "
      "exact and uses no level; a << r and a >> r rotate left/right with context.galois_keys. "
      "The Evaluator offers every operation without implicit steps.")
      .def_prop_ro(
          "level", [](const WCiphertext& c) { return c.ct.level(); }, "The level.")
      .def_prop_rw(
          "scale", [](const WCiphertext& c) { return static_cast<double>(c.ct.scale()); },
          [](WCiphertext& c, double v) { c.ct.set_scale(static_cast<long double>(v)); },
          "The scale (as a float; the library tracks it in extended precision). Setting it "
          "reinterprets the encrypted values.")
      .def_prop_ro(
          "slots", [](const WCiphertext& c) { return c.ct.slots(); }, "Number of slots.")
      .def_prop_ro(
          "size", [](const WCiphertext& c) { return c.ct.size(); },
          "Number of polynomials: 2, or 3 after a multiplication without relinearization.")
      .def_prop_ro(
          "is_seeded", [](const WCiphertext& c) { return c.ct.is_seeded(); },
          "True for a fresh secret-key ciphertext that serializes as (c0, seed).")
      .def_prop_rw(
          "is_real", [](const WCiphertext& c) { return c.real; },
          [](WCiphertext& c, bool v) { c.real = v; },
          "Hint that the slots hold real values: decryption then returns float64. Tracked "
          "through operations; may be set.")
      .def_prop_ro(
          "context", [](const WCiphertext& c) { return WContext{c.s}; }, "The context.")
      .def(
          "copy", [](const WCiphertext& c) { return deep_copy(c); }, "A deep copy.")
      .def(
          "__copy__", [](const WCiphertext& c) { return deep_copy(c); }, "A deep copy.")
      .def(
          "__deepcopy__", [](const WCiphertext& c, nb::handle) { return deep_copy(c); }, "memo"_a,
          "A deep copy.")
      .def(
          "serialize", [](const WCiphertext& c) { return serialize_ciphertext(c); },
          "The binary form (see Context.deserialize). A fresh secret-key ciphertext takes about "
          "half the space.")
      .def(
          "__bytes__", [](const WCiphertext& c) { return serialize_ciphertext(c); },
          "Same as serialize().")
      .def_static(
          "deserialize",
          [](const WContext& c, nb::bytes data) { return deserialize_ciphertext(c.s, data); },
          "context"_a, "data"_a, "Reads a ciphertext written by serialize().")
      .def(
          "rotate", [](const WCiphertext& c, int r) { return ct_rotate(c, r); }, "steps"_a,
          "Left rotation by `steps` slots (negative: right) with context.galois_keys.")
      .def(
          "conjugate",
          [](const WCiphertext& c) {
            auto gk = pick_galois(c.s, nullptr, nullptr, "conjugate");
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.conjugate(c.ct, *gk); });
          },
          "Complex conjugation of every slot with context.galois_keys.")
      .def(
          "rescale",
          [](const WCiphertext& c) {
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.rescale(c.ct); });
          },
          "Rescales to level - 1 (LevelError at level 0).")
      .def(
          "relinearize",
          [](const WCiphertext& c) {
            auto rlk = pick_relin(c.s, nullptr, nullptr, "relinearize");
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.relinearize(c.ct, *rlk); });
          },
          "Relinearizes a 3-polynomial ciphertext with context.relin_key.")
      .def(
          "level_down",
          [](const WCiphertext& c, u32 level, std::optional<double> target_scale) {
            std::optional<long double> ts;
            if (target_scale) ts = static_cast<long double>(*target_scale);
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.level_down(c.ct, level, ts); });
          },
          "level"_a, "target_scale"_a = nb::none(),
          "Moves to a lower level keeping the value (scale Delta_level unless target_scale).")
      .def(
          "square",
          [](const WCiphertext& c) {
            auto rlk = pick_relin(c.s, nullptr, nullptr, "square");
            return run_ct(c.s, c.real, [&] {
              theo::Ciphertext t = c.s->evaluator.square(c.ct, *rlk);
              c.s->evaluator.rescale_inplace(t);
              return t;
            });
          },
          "Squares, relinearizes (context.relin_key) and rescales.")
      .def(
          "__add__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kAdd); },
          "other"_a.none(), nb::sig("def __add__(self, other: object) -> Ciphertext"), "a + b.")
      .def(
          "__radd__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kAdd); },
          "other"_a.none(), nb::sig("def __radd__(self, other: object) -> Ciphertext"), "b + a.")
      .def(
          "__sub__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kSub); },
          "other"_a.none(), nb::sig("def __sub__(self, other: object) -> Ciphertext"), "a - b.")
      .def(
          "__rsub__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kRSub); },
          "other"_a.none(), nb::sig("def __rsub__(self, other: object) -> Ciphertext"), "b - a.")
      .def(
          "__mul__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kMul); },
          "other"_a.none(), nb::sig("def __mul__(self, other: object) -> Ciphertext"),
          "a * b, rescaled once (a * int: exact, no level used).")
      .def(
          "__rmul__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kMul); },
          "other"_a.none(), nb::sig("def __rmul__(self, other: object) -> Ciphertext"),
          "b * a, rescaled once (int * a: exact, no level used).")
      .def(
          "__iadd__",
          [](nb::handle self, nb::handle b) { return ct_add_sub_inplace(self, b, Op::kAdd); },
          "other"_a.none(), nb::sig("def __iadd__(self, other: object) -> Ciphertext"),
          "a += b (in place for a Ciphertext b).")
      .def(
          "__isub__",
          [](nb::handle self, nb::handle b) { return ct_add_sub_inplace(self, b, Op::kSub); },
          "other"_a.none(), nb::sig("def __isub__(self, other: object) -> Ciphertext"),
          "a -= b (in place for a Ciphertext b).")
      .def(
          "__neg__",
          [](const WCiphertext& a) {
            return run_ct(a.s, a.real, [&] { return a.s->evaluator.negate(a.ct); });
          },
          "-a.")
      .def(
          "__lshift__", [](const WCiphertext& a, int r) { return ct_rotate(a, r); }, "steps"_a,
          "Left rotation by `steps` slots (context.galois_keys).")
      .def(
          "__rshift__", [](const WCiphertext& a, int r) { return ct_rotate(a, -r); }, "steps"_a,
          "Right rotation by `steps` slots (context.galois_keys).")
      .def("__repr__",
           [](const WCiphertext& c) {
             return "Ciphertext(level=" + std::to_string(c.ct.level()) +
                    ", scale=" + fmt_scale(c.ct.scale()) +
                    ", slots=" + std::to_string(c.ct.slots()) +
                    ", size=" + std::to_string(c.ct.size()) + ")";
           })
      // numpy defers to our reflected operators instead of broadcasting over the ciphertext.
      .attr("__array_ufunc__") = nb::none();
}

}  // namespace theopy
