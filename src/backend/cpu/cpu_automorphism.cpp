#include <string>

#include "backend/cpu/cpu_backend.h"

namespace theo::cpu {

void CpuBackend::do_automorphism(ConstPolyRef in, u32 k, PolyRef out) {
  if (deferred([this, in, k, out] { do_automorphism(in, k, out); })) return;
  const std::vector<u32> map = automorphism_map(k);
  map_words(out, [&](u32 l) {
    const u32* x = in.limb(l);
    const u32* m = map.data();
    return [=](u32 i) { return x[m[i]]; };
  });
}

void CpuBackend::do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks,
                                     PolyRef out, bool accumulate) {
  if (deferred([this, i = owned(ins), k = owned(ks), out, accumulate] {
        do_automorphism_sum(i, k, out, accumulate);
      }))
    return;
  std::vector<std::vector<u32>> maps;
  for (const u32 k : ks)
    maps.push_back(automorphism_map(k));
  for_limbs(out.limbs(), [&](u32 l) {
    const u32 n = out.n;  // a local bound, so stores cannot alias it
    const u32 q = modulus(out.basis[l]).q;
    u32* z = out.limb(l);
    for (u32 i = 0; i < n; ++i) {
      u32 acc = accumulate ? z[i] : 0u;
      for (std::size_t j = 0; j < ins.size(); ++j)
        acc = add_mod(acc, ins[j].limb(l)[maps[j][i]], q);
      z[i] = acc;
    }
  });
}

}  // namespace theo::cpu
