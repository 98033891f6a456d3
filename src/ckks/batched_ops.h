#pragma once
// How the scheme layer issues a set of like ops, by the Context's ExecutionPolicy. Either way the
// same words (tests/ckks/test_ckks_fusion.cpp, tests/ckks/test_ckks_key_switch_batch.cpp).
//
// Fusion (Optimizations::fusion): ModUp, ModDown, rescale, lifting and ModRaise use out-of-place
// transforms and copies fused into a transform's read (Backend::ntt / intt with src and echo),
// ModDown's and rescale's tail rides on the NTT's last phase (Backend::ntt_sub_mul_scalar, Cheddar
// Seq.3), and a batch of transforms over different bases is one backend call. Without it: a copy
// before every in-place transform of a kept input, a separate sub_mul_scalar, one transform call
// per run of same-Basis polys (ntt_per_basis). Callers pass their plan's (key switching) or their
// policy's choice.
//
// Multi-poly caching (Optimizations::multi_poly_caching): several conversions in one
// Backend::bconv_matmul_batch call, which the GPU runs as one launch over all of them (a ModUp's
// digits, a ModDown's or a rescale's two polys); off, one bconv_matmul per job, in order.

#include <span>

#include "theo/ckks/context.h"

namespace theo::detail {

inline void bconv_matmul_jobs(Backend& be, std::span<const BConvJob> jobs, bool batched) {
  if (batched) {
    be.bconv_matmul_batch(jobs);
    return;
  }
  for (const BConvJob& j : jobs)
    be.bconv_matmul(*j.plan, j.in, j.out);
}

// ntt(polys) as issued without fusion: one call per run of consecutive polys of one Basis.
inline void ntt_per_basis(Backend& be, std::span<const PolyRef> polys) {
  std::size_t start = 0;
  for (std::size_t k = 1; k <= polys.size(); ++k) {
    if (k == polys.size() || !(polys[k].basis == polys[start].basis)) {
      be.ntt(polys.subspan(start, k - start));
      start = k;
    }
  }
}

}  // namespace theo::detail
