#pragma once
// Objects of the key-switching domain Q_l u P, for double hoisting (Bossuat et al., Eurocrypt
// 2021): a hoisted rotation stops before its ModDown and yields P * phi(ct) over Q_l u P. Such
// ciphertexts add, and multiply by plaintexts extended to Q_l u P, without leaving the domain; one
// ModDown (or ModDown merged with the rescale) at the end returns to a Ciphertext. A baby-step /
// giant-step linear transform then pays one ModDown per giant step instead of one per rotation,
// and its plaintext products are rounded once, at the end.

#include "theo/ring/poly.h"

namespace theo {

// A plaintext over Q_l u P (the same integer polynomial as a level-l Plaintext, lifted exactly).
struct ExtendedPlaintext {
  u64 context_id = 0;
  u32 level = 0;
  long double scale = 0;
  RnsPoly poly;  // over LevelData::pq_basis, NTT domain
  bool empty() const { return context_id == 0 || poly.empty(); }
};

// P * (c0, c1) over Q_l u P; decrypts (after ModDown) to a ciphertext of scale `scale`.
struct ExtendedCiphertext {
  u64 context_id = 0;
  u32 level = 0;
  long double scale = 0;
  u32 slots = 0;
  RnsPoly c0, c1;  // over LevelData::pq_basis, NTT domain
  bool empty() const { return context_id == 0 || c0.empty(); }
};

}  // namespace theo
