#include <string>

#include "backend/cpu/cpu_backend.h"
#include "theo/ring/shape_checks.h"

namespace theo::cpu {

namespace {

void check_galois(std::string_view op, std::string_view arg, u32 k) {
  if (k % 2 == 0)
    throw ParameterError(std::string(op) + ": " + std::string(arg) + " = " + std::to_string(k) +
                         " is even; a Galois element must be odd");
}

}  // namespace

void CpuBackend::automorphism(ConstPolyRef in, u32 k, PolyRef out) {
  check("automorphism", "in", in);
  checks::same_shape("automorphism", "in", in, "out", out);
  checks::no_alias("automorphism", "in", in, "out", out);
  check_galois("automorphism", "k", k);
  if (deferred([this, in, k, out] { automorphism(in, k, out); })) return;
  const std::vector<u32> map = automorphism_map(k);
  for_limbs(in.limbs(), [&](u32 l) {
    const u32 n = in.n;  // a local bound, so stores cannot alias it
    const u32* x = in.limb(l);
    u32* z = out.limb(l);
    for (u32 i = 0; i < n; ++i)
      z[i] = x[map[i]];
  });
}

void CpuBackend::automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks,
                                  PolyRef out, bool accumulate) {
  constexpr std::string_view op = "automorphism_sum";
  check(op, "out", out);
  checks::same_count(op, "ins", ins.size(), "ks", ks.size());
  for (std::size_t j = 0; j < ins.size(); ++j) {
    checks::same_shape(op, "out", out, checks::indexed("ins", j), ins[j]);
    checks::no_alias(op, checks::indexed("ins", j), ins[j], "out", out);
    check_galois(op, checks::indexed("ks", j), ks[j]);
  }
  if (deferred([this, i = owned(ins), k = owned(ks), out, accumulate] {
        automorphism_sum(i, k, out, accumulate);
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
