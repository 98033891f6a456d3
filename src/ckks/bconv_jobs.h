#pragma once
// Conversions of several polys at once (Optimizations::multi_poly_caching): one
// Backend::bconv_matmul_batch call, which the GPU runs as one launch over all of them (a ModUp's
// digits, a ModDown's or a rescale's two polys); off, one bconv_matmul per job, in order. The same
// words either way.

#include <span>

#include "theo/ckks/context.h"

namespace theo::detail {

inline void bconv_matmul_jobs(const Context& ctx, std::span<const BConvJob> jobs) {
  Backend& be = ctx.backend();
  if (ctx.options().optimizations.multi_poly_caching) {
    be.bconv_matmul_batch(jobs);
    return;
  }
  for (const BConvJob& j : jobs)
    be.bconv_matmul(*j.plan, j.in, j.out);
}

}  // namespace theo::detail
