#include "backend/cuda/cuda_tables.h"

#include <string>

#include "theo/errors.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/ntt_tables.h"

namespace theo::cuda {

DeviceTables::DeviceTables(const RingParams& ring, const std::vector<Modulus>& moduli,
                           const std::shared_ptr<Device>& dev) {
  const u32 np = static_cast<u32>(ring.primes.size());
  const std::size_t nn = ring.n();
  std::vector<i32> fwd(np * nn), inv(np * nn);
  std::vector<uint2> fwd_s(np * nn), inv_s(np * nn);
  std::vector<u32> fwd_wp(np * nn), inv_wp(np * nn);
  // Row factors of the register row kernels' on-the-fly twiddles (kernels.h, ntt_register.cu), for
  // N = 2^(4e) only: psi^(brev_2e(r) 2^(e - j)) for row r and stage j of the second pass.
  const bool row_factors = ring.log_n % 4 == 0;
  const u32 e = ring.log_n / 4, rows = 1u << (2 * e);
  constexpr u32 kRowFactors = RingTables::kRowFactors;
  std::vector<i32> fwd_rowf(row_factors ? std::size_t{np} * rows * kRowFactors : 0),
      inv_rowf(fwd_rowf.size());
  n_inv_mont_.resize(np);
  for (u32 p = 0; p < np; ++p) {
    const NttTable t = make_ntt_table(ring.primes[p], ring.log_n);
    const Modulus& m = moduli[p];
    for (std::size_t i = 0; i < nn; ++i) {
      // The row kernels rebuild w from w' assuming w != 0 (ntt_register.cu, shoup_pair).
      if (t.fwd[i].w == 0 || t.inv[i].w == 0)
        throw BackendError("CUDA backend: NTT table of prime " + std::to_string(ring.primes[p]) +
                           " has a zero twiddle");
      fwd[p * nn + i] = center(to_mont(t.fwd[i].w, m), m.q);
      inv[p * nn + i] = center(to_mont(t.inv[i].w, m), m.q);
      fwd_s[p * nn + i] = uint2{t.fwd[i].w, t.fwd[i].w_shoup};
      inv_s[p * nn + i] = uint2{t.inv[i].w, t.inv[i].w_shoup};
      fwd_wp[p * nn + i] = t.fwd[i].w_shoup;
      inv_wp[p * nn + i] = t.inv[i].w_shoup;
    }
    n_inv_mont_[p] = to_mont(t.n_inv.w, m);
    for (u32 r = 0; row_factors && r < rows; ++r) {
      for (u32 j = 0; j < e; ++j) {
        // fwd[brev(x)] = psi^x and inv[brev(x)] = psi^-x.
        const u32 at = bit_reverse(bit_reverse(r, 2 * e) << (e - j), ring.log_n);
        const std::size_t k = (std::size_t{p} * rows + r) * kRowFactors + j;
        fwd_rowf[k] = center(to_mont(t.fwd[at].w, m), m.q);
        inv_rowf[k] = center(to_mont(t.inv[at].w, m), m.q);
      }
    }
  }
  mods_ = uploaded(dev, moduli);
  fwd_ = uploaded(dev, fwd);
  inv_ = uploaded(dev, inv);
  fwd_s_ = uploaded(dev, fwd_s);
  inv_s_ = uploaded(dev, inv_s);
  fwd_wp_ = uploaded(dev, fwd_wp);
  inv_wp_ = uploaded(dev, inv_wp);
  fwd_rowf_ = uploaded(dev, fwd_rowf);
  inv_rowf_ = uploaded(dev, inv_rowf);
  tables_ =
      RingTables{mods_.get(),  fwd_.get(),    inv_.get(),    ring.log_n,      fwd_s_.get(),
                 inv_s_.get(), fwd_wp_.get(), inv_wp_.get(), fwd_rowf_.get(), inv_rowf_.get()};
}

}  // namespace theo::cuda
