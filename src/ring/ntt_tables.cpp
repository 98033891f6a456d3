#include "theo/ring/ntt_tables.h"

#include <string>

#include "theo/errors.h"
#include "theo/math/primes.h"
#include "theo/ring/automorphism.h"

namespace theo {

NttTable make_ntt_table(u32 q, u32 log_n) {
  if (log_n < 10 || log_n > 17)
    throw ParameterError("make_ntt_table: log_n = " + std::to_string(log_n) + " outside [10, 17]");
  const u32 n = u32{1} << log_n;
  if (q >= (u32{1} << 31) || q % (2 * n) != 1)
    throw ParameterError("make_ntt_table: q = " + std::to_string(q) +
                         " is not < 2^31 and = 1 mod 2N");
  NttTable t;
  t.q = q;
  t.log_n = log_n;
  t.psi = ntt_root(q, n);
  const u32 psi_inv = inv_mod(t.psi, q);
  t.fwd.resize(n);
  t.inv.resize(n);
  u32 p = 1, pi = 1;
  for (u32 j = 0; j < n; ++j) {
    const u32 m = bit_reverse(j, log_n);
    t.fwd[m] = make_shoup(p, q);
    t.inv[m] = make_shoup(pi, q);
    p = mul_mod_ref(p, t.psi, q);
    pi = mul_mod_ref(pi, psi_inv, q);
  }
  t.n_inv = make_shoup(inv_mod(n, q), q);
  return t;
}

}  // namespace theo
