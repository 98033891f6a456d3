// CudaBackend's automorphisms of NTT-domain data (automorphism.cu): one, or a sum of up to
// kMaxTerms per launch, chained with accumulation.

#include <algorithm>

#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

void CudaBackend::do_automorphism(ConstPolyRef in, u32 k, PolyRef out) {
  ConstPtrs ins{};
  ins.p[0] = in.data;
  GaloisList ks{};
  ks.k[0] = k;
  launch_automorphism_sum(ins, ks, 1, out.data, false, ring_.log_n, out.basis, tables_.mods(),
                          stream());
}

void CudaBackend::do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks,
                                      PolyRef out, bool accumulate) {
  if (ins.empty()) {
    if (!accumulate) do_fill_zero(out);
    return;
  }
  for (std::size_t j0 = 0; j0 < ins.size(); j0 += kMaxTerms) {
    const u32 terms = static_cast<u32>(std::min<std::size_t>(kMaxTerms, ins.size() - j0));
    ConstPtrs p{};
    GaloisList g{};
    for (u32 j = 0; j < terms; ++j) {
      p.p[j] = ins[j0 + j].data;
      g.k[j] = ks[j0 + j];
    }
    launch_automorphism_sum(p, g, terms, out.data, accumulate || j0 > 0, ring_.log_n, out.basis,
                            tables_.mods(), stream());
  }
}

}  // namespace theo::cuda
