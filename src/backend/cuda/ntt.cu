// Negacyclic NTT / INTT in two shared-memory phases (Cheddar §4.2 structure, precomputed
// twiddles). Forward: merged-twiddle Cooley-Tukey with psi^brev(m); inverse: Gentleman-Sande with
// psi^-brev(m) in reverse stage order, so the forward output is A[i] = a(psi^(2 brev(i) + 1)) with
// no permutation, as the Backend contract requires.
//
// With N = N1 x N2, the first log N1 CT stages have strides >= N2 and only mix words with equal
// index mod N2 ("columns"); the remaining stages mix words inside a row of N2 contiguous words.
// Phase 1 transforms a tile of C whole columns (N1 x C words), phase 2 a tile of R whole rows
// (R x N2 words); each tile lives in shared memory, so each phase reads and writes DRAM once.
// Butterflies keep every value canonical (the register kernels' forward stages: in [0, 2q)), so the
// result does not depend on the split or tiling.
//
// A launch covers a batch of limbs that may belong to different polys and primes (NttBatch, one
// limb per grid row). The first phase (forward: columns, inverse: rows) reads the limb's source
// and writes its destination, so a transform can be out of place, and may copy the words it read
// (a copy fused into the read); the last forward phase (rows) may apply ModDown's / rescale's
// tail y -> (a - y) * s before its store (Cheddar Seq.3).
//
// The kernels: ntt_register.cu (register-resident phases, N = 2^12 and 2^16) and ntt_tiled.cu
// (shared-memory tiles, any N); ntt_common.cuh holds what they share.

#include "backend/cuda/kernels.h"
#include "backend/cuda/ntt_common.cuh"

namespace theo::cuda {

void launch_ntt(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                bool pre_consts, bool input_copy, bool epilogue, bool inverse, cudaStream_t s) {
  if (limbs == 0) return;
  const ntt_detail::LaunchFlags f{pre_consts, input_copy, epilogue && !inverse};
  const u32 log_n = t.log_n;
  if (cfg.fast && (log_n == 12 || log_n == 16) && (cfg.log_n1 == 0 || cfg.log_n1 == log_n / 2)) {
    launch_ntt_register(t, cfg, b, limbs, f, inverse, s);
    return;
  }
  launch_ntt_tiled(t, cfg, b, limbs, f, inverse, s);
}

}  // namespace theo::cuda
