#pragma once
// Host-side per-prime NTT tables in the order the Backend contract fixes (ring/backend.h): the
// forward transform is merged-twiddle Cooley-Tukey with psi^brev(m), the inverse Gentleman-Sande
// with psi^-brev(m), so the forward output is A[i] = a(psi^(2*brev(i)+1)) with no extra
// permutation. Shared by every backend so that the twiddles (and therefore the words) are the same
// everywhere.

#include <vector>

#include "theo/math/modarith.h"

namespace theo {

struct NttTable {
  u32 q = 0;
  u32 log_n = 0;
  u32 psi = 0;                  // ntt_root(q, N)
  std::vector<ShoupConst> fwd;  // [m] = psi^brev(m), m in [0, N); fwd[brev(j)] = psi^j
  std::vector<ShoupConst> inv;  // [m] = psi^-brev(m)
  ShoupConst n_inv;             // N^-1 mod q
};

// Throws ParameterError unless q = 1 (mod 2N), q < 2^31 and 10 <= log_n <= 17.
NttTable make_ntt_table(u32 q, u32 log_n);

// psi^e for any exponent e in [0, 2N), read from the forward table (psi^N = -1).
inline u32 psi_power(const NttTable& t, u32 e, const std::vector<u32>& brev) {
  const u32 n = u32{1} << t.log_n;
  if (e < n) return t.fwd[brev[e]].w;
  return neg_mod(t.fwd[brev[e - n]].w, t.q);
}

}  // namespace theo
