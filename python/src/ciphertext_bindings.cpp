// Bindings of the values: Plaintext and Ciphertext (with its operators, which use the Context's
// keys).

#include "bindings.h"

namespace theopy {

namespace {

// level, scale (settable, as a float) and slots of the value w.*kValue, and its context.
template <typename W, auto kValue>
void def_value_properties(nb::class_<W>& cls, const char* scale_doc) {
  cls.def_prop_ro(
         "level", [](const W& w) { return (w.*kValue).level(); }, "The level.")
      .def_prop_rw(
          "scale", [](const W& w) { return static_cast<double>((w.*kValue).scale()); },
          [](W& w, double v) { (w.*kValue).set_scale(static_cast<long double>(v)); }, scale_doc)
      .def_prop_ro(
          "slots", [](const W& w) { return (w.*kValue).slots(); }, "Number of slots.")
      .def_prop_ro(
          "context", [](const W& w) { return WContext{w.s}; }, "The context.");
}

// copy(), __copy__ and __deepcopy__ of a value: a deep copy each.
template <typename W>
void def_copies(nb::class_<W>& cls) {
  cls.def(
         "copy", [](const W& w) { return deep_copy(w); }, "A deep copy.")
      .def(
          "__copy__", [](const W& w) { return deep_copy(w); }, "A deep copy.")
      .def(
          "__deepcopy__", [](const W& w, nb::handle) { return deep_copy(w); }, "memo"_a,
          "A deep copy.");
}

// A method of a Ciphertext whose result keeps its realness: make(c), with the GIL held (it picks
// the keys), returns what computes the result with the GIL released.
template <typename Make>
void def_unary(nb::class_<WCiphertext>& cls, const char* name, Make make, const char* doc) {
  cls.def(
      name, [make](const WCiphertext& c) { return run_ct(c.s, c.real, make(c)); }, doc);
}

// def_unary of the Evaluator member kOp with the Context's keys of its kind (kPick: pick_relin or
// pick_galois; a MissingKeyError names `name`).
template <auto kOp, auto kPick>
void def_with_context_key(nb::class_<WCiphertext>& cls, const char* name, const char* doc) {
  def_unary(
      cls, name,
      [name](const WCiphertext& c) {
        auto key = kPick(c.s, nullptr, nullptr, name);
        return [&c, key] { return (c.s->evaluator.*kOp)(c.ct, *key); };
      },
      doc);
}

// The operator `name` (a op b: __add__, __radd__, ...) of a Ciphertext and any operand ct_binary
// takes.
void def_operator(nb::class_<WCiphertext>& cls, const char* name, Op op, const char* doc) {
  cls.def(
      name, [op](WCiphertext& a, nb::handle b) { return ct_binary(a, b, op); }, "other"_a.none(),
      nb::sig((std::string("def ") + name + "(self, other: object) -> Ciphertext").c_str()), doc);
}

}  // namespace

void bind_values(nb::module_& m) {
  // ---- Plaintext -----------------------------------------------------------------------------
  nb::class_<WPlaintext> plaintext(
      m, "Plaintext",
      "An encoded (not encrypted) vector of slots: a polynomial in the NTT "
      "domain at some level, with its scale. Made by Encoder.encode().");
  def_value_properties<WPlaintext, &WPlaintext::pt>(
      plaintext, "The scale (as a float; the library tracks it in extended precision).");
  plaintext
      .def_prop_ro(
          "is_real", [](const WPlaintext& p) { return p.real; },
          "True when encoded from real values (decode() then returns float64).")
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
      .def("__repr__", [](const WPlaintext& p) {
        return "Plaintext(level=" + std::to_string(p.pt.level()) +
               ", scale=" + fmt_scale(p.pt.scale()) + ", slots=" + std::to_string(p.pt.slots()) +
               ")";
      });
  def_copies(plaintext);

  // ---- Ciphertext ----------------------------------------------------------------------------
  nb::class_<WCiphertext> ciphertext(
      m, "Ciphertext",
      "An encrypted vector of slots at some level and scale. Operators: a + b, a - b, -a "
      "(b: Ciphertext, Plaintext, scalar or array); a * b multiplies and rescales once "
      "(Ciphertext operands are relinearized with context.relin_key), except a * int, which is "
      "exact and uses no level; a << r and a >> r rotate left/right with context.galois_keys. "
      "The Evaluator offers every operation without implicit steps.");
  def_value_properties<WCiphertext, &WCiphertext::ct>(
      ciphertext,
      "The scale (as a float; the library tracks it in extended precision). Setting it "
      "reinterprets the encrypted values.");
  ciphertext
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
          "Squares, relinearizes (context.relin_key) and rescales.");
  def_copies(ciphertext);
  def_with_context_key<&theo::Evaluator::conjugate, &pick_galois>(
      ciphertext, "conjugate", "Complex conjugation of every slot with context.galois_keys.");
  def_unary(
      ciphertext, "rescale",
      [](const WCiphertext& c) { return [&c] { return c.s->evaluator.rescale(c.ct); }; },
      "Rescales to level - 1 (LevelError at level 0).");
  def_with_context_key<&theo::Evaluator::relinearize, &pick_relin>(
      ciphertext, "relinearize", "Relinearizes a 3-polynomial ciphertext with context.relin_key.");
  def_operator(ciphertext, "__add__", Op::kAdd, "a + b.");
  def_operator(ciphertext, "__radd__", Op::kAdd, "b + a.");
  def_operator(ciphertext, "__sub__", Op::kSub, "a - b.");
  def_operator(ciphertext, "__rsub__", Op::kRSub, "b - a.");
  def_operator(ciphertext, "__mul__", Op::kMul,
               "a * b, rescaled once (a * int: exact, no level used).");
  def_operator(ciphertext, "__rmul__", Op::kMul,
               "b * a, rescaled once (int * a: exact, no level used).");
  ciphertext
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
