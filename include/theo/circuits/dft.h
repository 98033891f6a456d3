#pragma once
// The homomorphic DFT of CKKS bootstrapping (CoeffToSlot / SlotToCoeff), as products of sparse
// butterfly matrices (Cheon-Han-Kim-Kim-Song, "Improved bootstrapping for approximate HE";
// level-collapsed by merging consecutive radix-2 stages into one matrix per level).
//
// Decoding of n slots is z = V u with V_jk = xi^(5^j k), xi = exp(2 pi i / 4n) and
// u_k = a_(k g) + i a_((k+n) g) the message coefficients (g = N / 2n). V = S_L ... S_1 P, where P
// is the bit reversal and S_s (s = 1..L = log2 n) the butterflies of length 2^s, each with three
// diagonals (0, +-2^(s-1)). CoeffToSlot evaluates P V^-1 = S_1^-1 ... S_L^-1 (slots end in
// bit-reversed order, harmless for the slot-wise EvalMod) and SlotToCoeff V P = S_L ... S_1.

#include <vector>

#include "theo/circuits/linear_transform.h"

namespace theo {

// The matrices to apply in order (first element first); their product is scale * P V^-1.
// `levels` groups of consecutive stages (levels <= log2 slots).
std::vector<DiagonalMatrix> coeff_to_slot_matrices(u32 slots, u32 levels, Complex scale);
// The matrices to apply in order; their product is scale * V P.
std::vector<DiagonalMatrix> slot_to_coeff_matrices(u32 slots, u32 levels, Complex scale);

// Plaintext references (direct O(n^2) sums), used by tests.
std::vector<Complex> special_dft(const std::vector<Complex>& u);  // V u
std::vector<Complex> bit_reverse(const std::vector<Complex>& v);  // P v

}  // namespace theo
