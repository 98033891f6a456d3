// CudaBackend's transforms: ntt, intt and ntt_sub_mul_scalar, batched over polys of any bases into
// as few launches as the launch limits allow (kernels.h, ntt.cu).

#include <string>

#include "backend/cuda/cuda_backend_impl.h"
#include "theo/ring/shape_checks.h"

namespace theo::cuda {

void CudaBackend::do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                         std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  transform("ntt", polys, pre_consts, src, input_copy, false, {});
}

void CudaBackend::do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
                          std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  transform("intt", polys, post_consts, src, input_copy, true, {});
}

void CudaBackend::do_ntt_sub_mul_scalar(std::span<const PolyRef> polys,
                                        std::span<const u32> pre_consts,
                                        std::span<const ConstPolyRef> a, u32 first,
                                        std::span<const u32> s) {
  transform("ntt_sub_mul_scalar", polys, pre_consts, {}, {}, false, Epilogue{a, first, s});
}

void CudaBackend::transform(std::string_view op, std::span<const PolyRef> polys,
                            std::span<const u32> consts, std::span<const ConstPolyRef> src,
                            std::span<const PolyRef> input_copy, bool inverse,
                            const Epilogue& epi) {
  const bool per_poly = checks::consts_per_poly(polys, consts);
  const auto aligned = [&](std::string_view name, std::size_t k, const void* p) {
    if (!aligned16(p))
      throw ParameterError(std::string(op) + ": " + checks::indexed(name, k) +
                           " is not 16-byte aligned");
  };
  for (std::size_t k = 0; k < polys.size(); ++k) {
    aligned("polys", k, polys[k].data);
    if (!src.empty()) aligned("src", k, src[k].data);
    if (!input_copy.empty()) aligned("input_copy", k, input_copy[k].data);
    if (!epi.a.empty()) aligned("a", k, epi.a[k].data);
  }
  // Polys share a launch while they fit (kMaxBatch polys, kMaxNttLimbs limbs), whatever their
  // bases: every limb of the batch is one grid row with its own prime and pointers.
  const bool with_consts = inverse || !consts.empty();
  NttBatch batch;
  u32 polys_in = 0, limbs_in = 0;
  bool any_sub = false;
  const auto flush = [&] {
    launch_ntt(tables_.ring(), tuning_.ntt, batch, limbs_in, !consts.empty(), !input_copy.empty(),
               any_sub, inverse, stream());
    polys_in = limbs_in = 0;
    any_sub = false;
  };
  std::size_t row = 0;  // first constant of polys[k] in the per-poly form
  for (std::size_t k = 0; k < polys.size(); ++k) {
    const PolyRef& p = polys[k];
    const u32 limbs = p.limbs();
    if (limbs == 0) continue;
    if (polys_in == kMaxBatch || limbs_in + limbs > kMaxNttLimbs) flush();
    NttPoly& d = batch.poly[polys_in];
    d = NttPoly{};
    d.dst = p.data;
    d.src = src.empty() ? p.data : src[k].data;
    d.input_copy = input_copy.empty() ? nullptr : input_copy[k].data;
    if (!epi.a.empty()) {
      d.sub = epi.a[k].data;
      d.sub_first = epi.first;
      d.sub_limbs = epi.a[k].limbs();
      any_sub = any_sub || d.sub_limbs > 0;
    }
    const std::size_t c0 = per_poly ? row : 0;
    for (u32 l = 0; l < limbs; ++l) {
      const PrimeId id = p.basis.ids[l];
      const Modulus& m = moduli_[id];
      NttLimb& e = batch.limb[limbs_in + l];
      e.ref = ntt_limb_ref(polys_in, l, id);
      const u32 v = consts.empty() ? 1u : consts[c0 + l];
      e.c = !with_consts ? 0u : inverse ? mul_mod(v, tables_.n_inv_mont(id), m) : to_mont(v, m);
      const u32 w = l - d.sub_first;
      e.s = d.sub != nullptr && w < d.sub_limbs ? to_mont(epi.s[w], m) : 0u;
    }
    row += limbs;
    ++polys_in;
    limbs_in += limbs;
  }
  if (limbs_in > 0) flush();
}

}  // namespace theo::cuda
