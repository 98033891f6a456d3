#pragma once
// Key-switching fusion (Optimizations::fusion): with it, ModUp, ModDown, rescale, extend and
// ModRaise use out-of-place transforms and copies fused into a transform's read (Backend::ntt /
// intt with src and echo), ModDown's and rescale's tail rides on the NTT's last phase
// (Backend::ntt_sub_mul_scalar, Cheddar Seq.3), and a batch of transforms over different bases is
// one backend call. Without it, each issues the unfused op sequence: a copy before every in-place
// transform of a kept input, a separate sub_mul_scalar, one transform call per run of same-Basis
// polys. Both give the same words (tests/ckks/test_ckks_fusion.cpp, on each backend);
// docs/performance-journal.md "Key-switching fusion" has the measurements.

#include <cstdlib>
#include <span>
#include <string_view>

#include "theo/ckks/context.h"

namespace theo::detail {

// Optimizations::fusion of the Context, ANDed with THEO_FUSION (=0 turns it off process-wide, for
// ablation runs of unmodified programs; read once).
inline bool fusion_enabled(const Context& ctx) {
  static const bool env_on = [] {
    const char* env = std::getenv("THEO_FUSION");
    return env == nullptr || std::string_view(env) != "0";
  }();
  return env_on && ctx.options().optimizations.fusion;
}

// ntt(polys) as issued without fusion: one call per run of consecutive polys of one Basis (what
// the CUDA backend launched before it packed mixed bases into one launch).
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
