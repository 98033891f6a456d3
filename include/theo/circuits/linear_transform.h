#pragma once
// Plaintext matrix x ciphertext by the diagonal method (Halevi-Shoup) with baby-step/giant-step
// (Bossuat et al., Eurocrypt 2021):
//   M x = sum_k d_k (.) rot(x, k) = sum_g rot( sum_b rot(d_(g+b), -g) (.) rot(x, b), g ),
// so a matrix with D nonzero diagonals costs about 2 sqrt(D) rotations instead of D. The baby
// rotations share one ModUp (Evaluator::rotate_hoisted). The diagonals are encoded once, at the
// level and scale the transform will run at (LinearTransform is built once, evaluated many times).

#include <complex>
#include <map>
#include <optional>
#include <vector>

#include "theo/ckks/encoder.h"
#include "theo/ckks/evaluator.h"

namespace theo {

using Complex = std::complex<double>;

// An n x n matrix on n slots as its nonzero generalized diagonals: (M x)_p = sum_k d_k[p] x_(p+k).
struct DiagonalMatrix {
  u32 slots = 0;
  std::map<u32, std::vector<Complex>> diagonals;  // key: k in [0, slots)

  static DiagonalMatrix identity(u32 slots);
  // Plaintext reference.
  std::vector<Complex> apply(const std::vector<Complex>& x) const;
  // this * other (apply `other` first); diagonals below `prune` in max-abs are dropped.
  DiagonalMatrix multiply(const DiagonalMatrix& other, double prune = 0) const;
  void scale_by(Complex c);
};

struct LinearTransformOptions {
  u32 baby_steps = 0;     // 0: chosen to minimize the number of rotations
  bool min_keys = false;  // only +-2^k rotation keys (every rotation composed of them)
  // Scale of the output at level - 1 (default: Delta_(level-1)). A transform feeding another one
  // may run above the default scale, where key-switching noise weighs less.
  std::optional<long double> output_scale;
};

class LinearTransform {
 public:
  // Diagonals encoded for an input at `level` with scale `input_scale` (default: Delta_level);
  // the output lands at level - 1 on options.output_scale (default: Delta_(level-1)).
  LinearTransform(const Encoder& encoder, const DiagonalMatrix& m, u32 level,
                  std::optional<long double> input_scale = std::nullopt,
                  LinearTransformOptions options = {});

  // Left rotations whose keys evaluate() needs (excluding 0).
  std::vector<int> rotations() const;
  u32 level() const { return level_; }
  u32 slots() const { return slots_; }
  long double input_scale() const { return input_scale_; }
  long double output_scale() const { return output_scale_; }
  bool min_keys() const { return min_keys_; }
  std::size_t diagonal_count() const { return diag_count_; }

  // ct at level() (higher levels are brought down) with input_scale().
  Ciphertext evaluate(const Evaluator& ev, const Ciphertext& ct, const GaloisKeys& keys) const;
  // The same product before its final ModDown and rescale: P * M ct over Q_l u P at level(), scale
  // input_scale() * (the diagonals' scale). Lets a caller apply more automorphisms at that high
  // scale, where key-switching noise vanishes, before rescaling to output_scale(). Not in
  // min-keys mode (ParameterError).
  ExtendedCiphertext evaluate_unrescaled(const Evaluator& ev, const Ciphertext& ct,
                                         const GaloisKeys& keys) const;

 private:
  void extend_diagonals(const Evaluator& ev);
  // The input brought to level() when it is above (engaged only then); checks level and scale.
  std::optional<Ciphertext> prepare_input(const Evaluator& ev, const Ciphertext& ct0) const;
  ExtendedCiphertext evaluate_double_hoisted(const Evaluator& ev, const Ciphertext& ct,
                                             const GaloisKeys& keys) const;
  std::vector<Ciphertext> min_keys_babies(const Evaluator& ev, const Ciphertext& ct,
                                          const GaloisKeys& keys) const;
  struct Giant {
    u32 shift = 0;                              // rotation g * stride
    std::vector<std::pair<u32, Plaintext>> bs;  // (baby index into babies_, diagonal)
    // The diagonals over Q_l u P (double hoisting; empty in min-keys mode, which keeps `bs`).
    std::vector<ExtendedPlaintext> extended;
  };
  u32 level_ = 0;
  u32 slots_ = 0;
  long double input_scale_ = 0;
  long double output_scale_ = 0;
  bool min_keys_ = false;
  std::size_t diag_count_ = 0;
  std::vector<u32> babies_;  // baby rotations (0 first when present)
  std::vector<Giant> giants_;
};

// Left rotation by r (any sign; mod slots) composed of rotations by +-2^k, as few as possible
// (the non-adjacent form of r mod slots; min-keys mode).
Ciphertext rotate_pow2(const Evaluator& ev, const Ciphertext& ct, i64 r, u32 slots,
                       const GaloisKeys& keys);
// Those steps: signed powers of two in (-slots/2, slots/2].
std::vector<int> pow2_steps(i64 r, u32 slots);
// The rotations min-keys mode needs: +-1, +-2, ..., +-slots/4, slots/2.
std::vector<int> pow2_rotations(u32 slots);

}  // namespace theo
