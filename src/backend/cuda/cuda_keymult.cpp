// CudaBackend's KeyMult (keymult.cu): the digit sums of a key switch and their fused forms
// (scaled terms added, digits read through an automorphism, several rotations or several sums in
// one pass), split into launches by the kernels' term limits.

#include <algorithm>
#include <utility>

#include "backend/cuda/cuda_backend_impl.h"
#include "theo/ring/automorphism.h"

namespace theo::cuda {

void CudaBackend::do_key_mult(std::span<const ConstPolyRef> digits,
                              std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                              PolyRef out0, PolyRef out1) {
  run_key_mult(digits, 0, kb, ka, out0, out1);
}

void CudaBackend::do_key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                                         std::span<const ConstPolyRef> kb,
                                         std::span<const ConstPolyRef> ka, PolyRef out0,
                                         PolyRef out1, ConstPolyRef a0, ConstPolyRef a1,
                                         std::span<const u32> s) {
  ScaledAdds sc;
  sc.a0 = a0.data;
  sc.a1 = a1.data;
  sc.s = mont_consts(out0.basis, s, false);
  run_key_mult(digits, 0, kb, ka, out0, out1, nullptr, &sc);
}

void CudaBackend::do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                                          std::span<const ConstPolyRef> kb,
                                          std::span<const ConstPolyRef> ka, PolyRef out0,
                                          PolyRef out1, ConstPolyRef add0) {
  run_key_mult(digits, g, kb, ka, out0, out1, add0.words() ? add0.data : nullptr);
}

void CudaBackend::do_key_mult_sums(std::span<const ConstPolyRef> d,
                                   std::span<const ConstPolyRef> kb,
                                   std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                                   std::span<const PolyRef> out1) {
  const std::size_t terms = kb.size();
  bool fits = terms <= kMaxSumTerms && n() % 4 == 0;
  for (const ConstPolyRef& x : d)
    fits = fits && (x.words() == 0 || aligned16(x.data));
  for (std::size_t g = 0; g < out0.size(); ++g)
    fits = fits && aligned16(out0[g].data) && aligned16(out1[g].data);
  for (std::size_t k = 0; k < terms; ++k)
    fits = fits && aligned16(kb[k].data) && aligned16(ka[k].data);
  if (out0.empty()) return;
  if (!fits) {  // one key_mult per sum
    Backend::do_key_mult_sums(d, kb, ka, out0, out1);
    return;
  }
  for (std::size_t g0 = 0; g0 < out0.size(); g0 += kMaxSums) {
    SumsArgs a;
    a.terms = static_cast<u32>(terms);
    a.sums = static_cast<u32>(std::min<std::size_t>(kMaxSums, out0.size() - g0));
    for (std::size_t k = 0; k < terms; ++k) {
      a.b[k] = kb[k].data;
      a.a[k] = ka[k].data;
    }
    for (u32 g = 0; g < a.sums; ++g) {
      a.out0[g] = out0[g0 + g].data;
      a.out1[g] = out1[g0 + g].data;
      for (std::size_t k = 0; k < terms; ++k) {
        const ConstPolyRef& x = d[(g0 + g) * terms + k];
        a.d[g][k] = x.words() ? x.data : nullptr;
      }
    }
    launch_key_mult_sums(a, n(), out0[g0].basis, tables_.mods(), stream());
  }
}

void CudaBackend::do_key_mult_rotations(std::span<const ConstPolyRef> digits,
                                        std::span<const u32> gs, std::span<const ConstPolyRef> kb,
                                        std::span<const ConstPolyRef> ka,
                                        std::span<const PolyRef> out0,
                                        std::span<const PolyRef> out1, ConstPolyRef add0) {
  const std::size_t d = digits.size();
  bool fits = d > 0 && d <= kMaxRotDigits && n() % kRotBlock == 0;
  const auto aligned = [&](const void* p) { return p == nullptr || aligned16(p); };
  for (const ConstPolyRef& x : digits)
    fits = fits && aligned(x.data);
  fits = fits && aligned(add0.words() ? add0.data : nullptr);
  for (std::size_t r = 0; r < gs.size(); ++r) {
    fits = fits && aligned(out0[r].data) && aligned(out1[r].data);
    for (std::size_t k = 0; k < d; ++k)
      fits = fits && aligned(kb[r * d + k].data) && aligned(ka[r * d + k].data);
  }
  if (gs.empty()) return;
  if (!fits) {  // the calls one by one
    for (std::size_t r = 0; r < gs.size(); ++r)
      run_key_mult(digits, gs[r], kb.subspan(r * d, d), ka.subspan(r * d, d), out0[r], out1[r],
                   add0.words() ? add0.data : nullptr);
    return;
  }
  for (std::size_t r0 = 0; r0 < gs.size(); r0 += kMaxRotations) {
    RotationArgs a;
    a.digits = static_cast<u32>(d);
    a.rotations = static_cast<u32>(std::min<std::size_t>(kMaxRotations, gs.size() - r0));
    a.add0 = add0.words() ? add0.data : nullptr;
    for (std::size_t k = 0; k < d; ++k)
      a.d[k] = digits[k].data;
    for (u32 r = 0; r < a.rotations; ++r) {
      const std::size_t rr = r0 + r;
      a.g[r] = gs[rr];
      a.g_inv[r] = galois_element_inverse(gs[rr], ring_.log_n);
      a.out0[r] = out0[rr].data;
      a.out1[r] = out1[rr].data;
      for (std::size_t k = 0; k < d; ++k) {
        a.kb[r][k] = kb[rr * d + k].data;
        a.ka[r][k] = ka[rr * d + k].data;
      }
    }
    launch_key_mult_rotations(a, n(), out0[0].basis, tables_.mods(), stream());
  }
}

void CudaBackend::run_key_mult(std::span<const ConstPolyRef> digits, u32 galois,
                               std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                               PolyRef out0, PolyRef out1, const u32* add0,
                               const ScaledAdds* scaled) {
  if (digits.empty()) {
    do_fill_zero(out0);
    do_fill_zero(out1);
    if (add0 != nullptr) {
      const ConstPolyRef a{add0, out0.n, out0.basis};
      const u32 ks[] = {galois};
      do_automorphism_sum({&a, 1}, ks, out0, true);
    }
    if (scaled != nullptr) {
      for (const auto& [a, o] : {std::pair{scaled->a0, out0.data}, {scaled->a1, out1.data}}) {
        EwArgs args;
        args.in[0] = a;
        args.in[1] = o;
        args.out[0] = o;
        ew(EwOp::kMulScalarAdd, args, out0.basis, &scaled->s);
      }
    }
    return;
  }
  for (std::size_t k0 = 0; k0 < digits.size(); k0 += kMaxTerms) {
    const u32 terms = static_cast<u32>(std::min<std::size_t>(kMaxTerms, digits.size() - k0));
    ConstPtrs d{}, b{}, a{};
    for (u32 k = 0; k < terms; ++k) {
      d.p[k] = digits[k0 + k].data;
      b.p[k] = kb[k0 + k].data;
      a.p[k] = ka[k0 + k].data;
    }
    // add0 rides on the last launch (its words are added once, after every term).
    const bool last = k0 + terms == digits.size();
    launch_key_mult(d, b, a, terms, out0.data, out1.data, k0 > 0, n(), out0.basis, tables_.mods(),
                    stream(), galois, last ? add0 : nullptr, last ? scaled : nullptr);
  }
}

}  // namespace theo::cuda
