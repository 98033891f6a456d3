#pragma once
// Homomorphic operations. The Evaluator holds no mutable state: one instance may be used by
// several threads. Every op validates its inputs first (ContextError for empty objects or objects
// of another Context, ScaleError for scales that differ beyond the Context's tolerance, LevelError
// for exhausted levels, MissingKeyError for absent rotation keys) and a failed call leaves its
// inputs unchanged. Operands at different levels are brought to the lower level (level_down).

#include <complex>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/extended.h"
#include "theo/ckks/key_switcher.h"
#include "theo/ckks/keys.h"

namespace theo {

class Evaluator {
 public:
  explicit Evaluator(std::shared_ptr<const Context> ctx);

  Ciphertext clone(const Ciphertext& ct) const;
  Plaintext clone(const Plaintext& pt) const;

  // ---- additive ------------------------------------------------------------------------------
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  void add_inplace(Ciphertext& a, const Ciphertext& b) const;
  void sub_inplace(Ciphertext& a, const Ciphertext& b) const;
  Ciphertext add_plain(const Ciphertext& a, const Plaintext& b) const;
  Ciphertext sub_plain(const Ciphertext& a, const Plaintext& b) const;
  void add_plain_inplace(Ciphertext& a, const Plaintext& b) const;
  void sub_plain_inplace(Ciphertext& a, const Plaintext& b) const;
  // Adds c to every slot (c encoded exactly at the ciphertext's scale).
  Ciphertext add_const(const Ciphertext& a, std::complex<double> c) const;
  void add_const_inplace(Ciphertext& a, std::complex<double> c) const;
  Ciphertext negate(const Ciphertext& a) const;
  void negate_inplace(Ciphertext& a) const;

  // ---- multiplicative ------------------------------------------------------------------------
  // Tensor product without relinearization: a 3-polynomial ciphertext.
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b, const RelinKey& rlk) const;
  Ciphertext square(const Ciphertext& a, const RelinKey& rlk) const;
  Ciphertext relinearize(const Ciphertext& a, const RelinKey& rlk) const;
  void relinearize_inplace(Ciphertext& a, const RelinKey& rlk) const;
  // HMult + relinearize + rescale in one call.
  Ciphertext multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b,
                                    const RelinKey& rlk) const;
  // (factor * a) * b, relinearized and rescaled: the words of
  // multiply_relin_rescale(multiply_integer(a, factor), b, rlk), with the factor applied inside
  // the tensor product (Backend::tensor_scaled) when a and b are at one level.
  Ciphertext multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b, const RelinKey& rlk,
                                    i64 factor) const;
  // sum_j factor * a[j] * b[j] (+ addend), relinearized once and rescaled once from `level` to
  // level - 1 (ModDown merged with the rescale): lazy relinearization and rescaling, e.g. one
  // piece q_0 T_g0 + q_1 T_g1 + leaf of a Paterson-Stockmeyer evaluation. Operands are
  // relinearized ciphertexts at `level` or above; one above it whose modulus holds Q_level as a
  // window of its limbs is read in place (limbs dropped, scale kept), others are lowered first.
  // Every product must carry the same scale, and the addend (read the same way) that scale too:
  // its words join the products' before the ModDown, so the one rescale rounds them together.
  Ciphertext multiply_sum_relin_rescale(std::span<const Ciphertext* const> a,
                                        std::span<const Ciphertext* const> b, u32 level,
                                        const RelinKey& rlk, const Ciphertext* addend = nullptr,
                                        i64 factor = 1) const;
  Ciphertext multiply_plain(const Ciphertext& a, const Plaintext& b) const;
  // sum_k cts[k] * pts[k] in one pass (Backend::key_mult) instead of a product and an addition
  // per term. Relinearized ciphertexts and plaintexts all at one level; all products must carry
  // the same scale.
  Ciphertext multiply_plain_sum(std::span<const Ciphertext* const> cts,
                                std::span<const Plaintext* const> pts) const;
  void multiply_plain_inplace(Ciphertext& a, const Plaintext& b) const;
  // Multiplies every slot by c; c is encoded at scale `const_scale` (default Delta_level), which
  // the result's scale is multiplied by. Complex c = x + iy is applied as x*ct + y*(X^(N/2) ct).
  Ciphertext multiply_const(const Ciphertext& a, std::complex<double> c,
                            std::optional<long double> const_scale = std::nullopt) const;
  void multiply_const_inplace(Ciphertext& a, std::complex<double> c,
                              std::optional<long double> const_scale = std::nullopt) const;
  // sum_k coeffs[k] * terms[k] at `level`, at scale `scale` (e.g. Delta_level^2, so that a
  // rescale then lands on Delta_(level-1)). Terms: relinearized, at level >= `level`, any scales.
  // A term whose modulus holds Q_level as a window of its limbs is read in place with its
  // coefficient encoded at scale / term.scale() (no lowering); others are lowered first. One pass
  // per polynomial over all terms.
  Ciphertext linear_combination(std::span<const Ciphertext* const> terms,
                                std::span<const double> coeffs, u32 level, long double scale) const;
  // Multiplies by an integer (the scale is unchanged, the slot values are multiplied by k).
  Ciphertext multiply_integer(const Ciphertext& a, i64 k) const;
  // Multiplies by the monomial X^k (k any integer; X^N = -1). X^(N/2) multiplies slots by i.
  Ciphertext multiply_monomial(const Ciphertext& a, i64 k) const;

  // ---- levels --------------------------------------------------------------------------------
  // Rational rescale to level - 1; the scale is divided by r_l = Q_l / Q_{l-1}.
  Ciphertext rescale(const Ciphertext& a) const;
  void rescale_inplace(Ciphertext& a) const;
  // Moves to a lower level keeping the value: per level, multiply by an integer K and rescale so
  // that the scale lands at Delta_level (or target_scale at the last step). Plain limb dropping
  // when Q_level divides Q_l and the scale already matches.
  Ciphertext level_down(const Ciphertext& a, u32 level,
                        std::optional<long double> target_scale = std::nullopt) const;
  void level_down_inplace(Ciphertext& a, u32 level,
                          std::optional<long double> target_scale = std::nullopt) const;

  // ---- automorphisms -------------------------------------------------------------------------
  // Left rotation by r slots (negative: right).
  Ciphertext rotate(const Ciphertext& a, int r, const GaloisKeys& keys) const;
  void rotate_inplace(Ciphertext& a, int r, const GaloisKeys& keys) const;
  Ciphertext conjugate(const Ciphertext& a, const GaloisKeys& keys) const;
  // Several rotations of one ciphertext sharing one ModUp.
  std::vector<Ciphertext> rotate_hoisted(const Ciphertext& a, std::span<const int> rotations,
                                         const GaloisKeys& keys) const;
  std::vector<Ciphertext> rotate_hoisted(const Ciphertext& a, std::initializer_list<int> rotations,
                                         const GaloisKeys& keys) const {
    return rotate_hoisted(a, std::span<const int>(rotations.begin(), rotations.size()), keys);
  }
  // ---- double hoisting (theo/ckks/extended.h) --------------------------------------------------
  // Plaintexts of one level lifted exactly to Q_l u P (INTT, exact BConv to P, NTT).
  std::vector<ExtendedPlaintext> extend(std::span<const Plaintext* const> pts) const;
  // Hoisted rotations that stop before ModDown: P * rot_r(a) over Q_l u P (r = 0: P * a).
  std::vector<ExtendedCiphertext> rotate_hoisted_extended(const Ciphertext& a,
                                                          std::span<const int> rotations,
                                                          const GaloisKeys& keys) const;
  // sum_k cts[k] * pts[k] over Q_l u P in one pass (Backend::key_mult); all products must carry
  // the same scale.
  ExtendedCiphertext multiply_plain_sum(std::span<const ExtendedCiphertext* const> cts,
                                        std::span<const ExtendedPlaintext* const> pts) const;
  // Several multiply_plain_sum over one set of ciphertexts (a linear transform's giant steps over
  // its baby steps): sum g = sum over terms[g] of cts[t.ct] * *t.pt. With multi-poly caching one
  // pass reads every ciphertext once for all sums (Backend::key_mult_sums); the same words as
  // multiply_plain_sum per sum.
  struct PlainTerm {
    u32 ct = 0;
    const ExtendedPlaintext* pt = nullptr;
  };
  std::vector<ExtendedCiphertext> multiply_plain_sums(
      std::span<const ExtendedCiphertext> cts, std::span<const std::vector<PlainTerm>> terms) const;
  void add_inplace(ExtendedCiphertext& a, const ExtendedCiphertext& b) const;
  // Back to Q_l (the input is consumed: its P limbs are scratch).
  Ciphertext mod_down(ExtendedCiphertext&& a) const;
  // ModDown merged with the rescale to level - 1 (one rounding).
  Ciphertext mod_down_rescale(ExtendedCiphertext&& a) const;

  // phi_g for any odd Galois element g that has a key.
  Ciphertext apply_galois(const Ciphertext& a, u32 galois_element, const GaloisKeys& keys) const;

  const std::shared_ptr<const Context>& context() const { return ctx_; }
  const KeySwitcher& key_switcher() const { return switcher_; }

 private:
  // a * b without relinearization, times the integer factor (exact, inside the tensor product).
  Ciphertext tensor_product(const Ciphertext& a, const Ciphertext& b, i64 factor) const;
  // The one route of every product (multiply with a key, relinearize, multiply_relin_rescale):
  // the tensor t relinearized by one key switch, finished by ModDown or by ModDown + rescale.
  Ciphertext switch_tensor(const Ciphertext& t, const RelinKey& rlk, KeySwitchFinish finish) const;

  std::shared_ptr<const Context> ctx_;
  KeySwitcher switcher_;
};

}  // namespace theo
