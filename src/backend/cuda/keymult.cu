// KeyMult over all digits in one pass (Cheddar Par.1): each thread reads its word of every digit
// and both key halves once and writes out0/out1 once, instead of 2 x digits multiply-add passes.
// Also mul_monomial, which needs the ring's twiddle table.

#include <cstdint>

#include "backend/cuda/arith.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/launch.cuh"
#include "theo/ring/automorphism.h"

namespace theo::cuda {
namespace {

// galois != 0: the digits are read through phi_galois (key_mult_automorphed), word by word.
// kScaled: + s a0 into out0 and + s a1 into out1 (key_mult_add_scaled).
template <int W, bool kScaled>
__global__ void key_mult_kernel(const __grid_constant__ ConstPtrs d,
                                const __grid_constant__ ConstPtrs kb,
                                const __grid_constant__ ConstPtrs ka, u32 terms, u32* out0,
                                u32* out1, bool accumulate, u32 n,
                                const __grid_constant__ Basis basis, const Modulus* mods,
                                u32 galois, const u32* add0,
                                const __grid_constant__ ScaledAdds scaled) {
  pdl_entry();
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * W;
  if (idx >= n) return;
  const u32 limb = blockIdx.y;
  const Modulus m = mods[basis.ids[limb]];
  const std::size_t base = static_cast<std::size_t>(limb) * n;
  const std::size_t off = base + idx;
  u32 src[W];
  if (galois != 0) {
    const u32 log_n = 31u - static_cast<u32>(__clz(n));
#pragma unroll
    for (int w = 0; w < W; ++w)
      src[w] = automorphism_src_index(idx + w, galois, log_n);
  }
  // Sums of 2^-32-scaled products; one Montgomery correction (x 2^64 mod q) at the end.
  u32 s0[W] = {}, s1[W] = {};
  // The next digit's words are loaded before this digit's products (DRAM-bound on the keys: two
  // digits' loads in flight per thread).
  const auto load_digit = [&](u32 k, u32(&x)[W], u32(&b)[W], u32(&a)[W]) {
    if (galois != 0) {
#pragma unroll
      for (int w = 0; w < W; ++w)
        x[w] = d.p[k][base + src[w]];
    } else {
      load_words<W>(d.p[k] + off, x);
    }
    load_words<W>(kb.p[k] + off, b);
    load_words<W>(ka.p[k] + off, a);
  };
  u32 xn[W] = {}, bn[W] = {}, an[W] = {};
  if (terms > 0) load_digit(0, xn, bn, an);
  for (u32 k = 0; k < terms; ++k) {
    u32 x[W], b[W], a[W];
#pragma unroll
    for (int w = 0; w < W; ++w)
      x[w] = xn[w], b[w] = bn[w], a[w] = an[w];
    if (k + 1 < terms) load_digit(k + 1, xn, bn, an);
#pragma unroll
    for (int w = 0; w < W; ++w) {
      s0[w] = add_mod(s0[w], mont_mul_c(x[w], static_cast<i32>(b[w]), m), m.q);
      s1[w] = add_mod(s1[w], mont_mul_c(x[w], static_cast<i32>(a[w]), m), m.q);
    }
  }
  const i32 r2 = static_cast<i32>(m.r2_mod);
  u32 p0[W] = {}, p1[W] = {};
  if (accumulate) {
    load_words<W>(out0 + off, p0);
    load_words<W>(out1 + off, p1);
  }
  if (add0 != nullptr) {  // + phi_galois(add0) (or add0 itself) into out0, canonical words
#pragma unroll
    for (int w = 0; w < W; ++w)
      p0[w] = add_mod(p0[w], add0[base + (galois != 0 ? src[w] : idx + w)], m.q);
  }
  if constexpr (kScaled) {
    const i32 c = static_cast<i32>(scaled.s.v[limb]);
    u32 a0[W], a1[W];
    load_words<W>(scaled.a0 + off, a0);
    load_words<W>(scaled.a1 + off, a1);
#pragma unroll
    for (int w = 0; w < W; ++w) {
      p0[w] = add_mod(p0[w], mont_mul_c(a0[w], c, m), m.q);
      p1[w] = add_mod(p1[w], mont_mul_c(a1[w], c, m), m.q);
    }
  }
#pragma unroll
  for (int w = 0; w < W; ++w) {
    s0[w] = add_mod(mont_mul_c(s0[w], r2, m), p0[w], m.q);
    s1[w] = add_mod(mont_mul_c(s1[w], r2, m), p1[w], m.q);
  }
  store_words<W>(out0 + off, s0);
  store_words<W>(out1 + off, s1);
}

// Key words one term ahead: (b, c) take the words (bn, cn) of the current term, then, when there
// is a next term, load_next(bn, cn) loads its words ahead of the current term's products.
template <int W, typename LoadNext>
__device__ __forceinline__ void take_key_words(u32 (&b)[W], u32 (&c)[W], u32 (&bn)[W], u32 (&cn)[W],
                                               bool has_next, LoadNext&& load_next) {
#pragma unroll
  for (int w = 0; w < W; ++w)
    b[w] = bn[w], c[w] = cn[w];
  if (has_next) load_next(bn, cn);
}

// key_mult_rotations: block x of the grid owns the digits' words [x B, (x + 1) B) of limb y, read
// once into shared memory (with add0's); every phi_g maps that block onto one whole block of
// outputs, so for each rotation the block computes those B outputs, reading their key words
// (coalesced) and its digit words through the permutation from shared memory.
template <bool kAdd>
__global__ void __launch_bounds__(256)
    key_mult_rotations_kernel(const __grid_constant__ RotationArgs a, u32 n,
                              const __grid_constant__ Basis basis, const Modulus* mods) {
  pdl_entry();
  extern __shared__ uint4 srot4[];
  u32* const sd = reinterpret_cast<u32*>(srot4);  // [digits (+ add0)][kRotBlock]
  constexpr u32 B = kRotBlock, W = 4;
  const u32 limb = blockIdx.y;
  const Modulus m = mods[basis.ids[limb]];
  const std::size_t base = static_cast<std::size_t>(limb) * n;
  const u32 d0 = blockIdx.x * B;
  const u32 log_n = 31u - static_cast<u32>(__clz(n));
  const u32 rows = a.digits + (kAdd ? 1u : 0u);
  for (u32 e = threadIdx.x * W; e < rows * B; e += blockDim.x * W) {
    const u32 k = e / B, i = e - k * B;
    const u32* src = k < a.digits ? a.d[k] : a.add0;
    *reinterpret_cast<uint4*>(sd + e) = *reinterpret_cast<const uint4*>(src + base + d0 + i);
  }
  __syncthreads();
  const i32 r2 = static_cast<i32>(m.r2_mod);
  for (u32 r = 0; r < a.rotations; ++r) {
    // The output block whose sources are this block: phi_g^-1 = phi_(g^-1) maps d0 into it.
    const u32 o0 = automorphism_src_index(d0, a.g_inv[r], log_n) & ~(B - 1);
    for (u32 t = threadIdx.x * W; t < B; t += blockDim.x * W) {
      const u32 o = o0 + t;
      u32 at[W];
#pragma unroll
      for (int w = 0; w < W; ++w)
        at[w] = automorphism_src_index(o + w, a.g[r], log_n) - d0;
      u32 s0[W] = {}, s1[W] = {};
      // The next digit's key words are loaded before this digit's products.
      u32 bn[W] = {}, cn[W] = {};
      if (a.digits > 0) {
        load_words<W>(a.kb[r][0] + base + o, bn);
        load_words<W>(a.ka[r][0] + base + o, cn);
      }
      for (u32 k = 0; k < a.digits; ++k) {
        u32 b[W], c[W];
        take_key_words(b, c, bn, cn, k + 1 < a.digits, [&](u32(&nb)[W], u32(&nc)[W]) {
          load_words<W>(a.kb[r][k + 1] + base + o, nb);
          load_words<W>(a.ka[r][k + 1] + base + o, nc);
        });
        const u32* dk = sd + k * B;
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const u32 x = dk[at[w]];
          s0[w] = add_mod(s0[w], mont_mul_c(x, static_cast<i32>(b[w]), m), m.q);
          s1[w] = add_mod(s1[w], mont_mul_c(x, static_cast<i32>(c[w]), m), m.q);
        }
      }
#pragma unroll
      for (int w = 0; w < W; ++w) {
        const u32 p0 = kAdd ? sd[a.digits * B + at[w]] : 0u;
        s0[w] = add_mod(mont_mul_c(s0[w], r2, m), p0, m.q);
        s1[w] = mont_mul_c(s1[w], r2, m);
      }
      store_words<W>(a.out0[r] + base + o, s0);
      store_words<W>(a.out1[r] + base + o, s1);
    }
  }
}

// key_mult_sums: a thread's 4 words of every (b_k, a_k) are read once and feed every sum that
// has term k; each sum keeps its accumulators in registers (the same arithmetic as
// key_mult_kernel, so the same words).
__global__ void __launch_bounds__(256)
    key_mult_sums_kernel(const __grid_constant__ SumsArgs a, u32 n,
                         const __grid_constant__ Basis basis, const Modulus* mods) {
  pdl_entry();
  constexpr int W = 4;
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * W;
  if (idx >= n) return;
  const u32 limb = blockIdx.y;
  const Modulus m = mods[basis.ids[limb]];
  const std::size_t off = static_cast<std::size_t>(limb) * n + idx;
  u32 s0[kMaxSums][W] = {}, s1[kMaxSums][W] = {};
  // The next term's key words are loaded before this term's products.
  u32 bn[W] = {}, cn[W] = {};
  if (a.terms > 0) {
    load_words<W>(a.b[0] + off, bn);
    load_words<W>(a.a[0] + off, cn);
  }
  for (u32 k = 0; k < a.terms; ++k) {
    u32 b[W], c[W];
    take_key_words(b, c, bn, cn, k + 1 < a.terms, [&](u32(&nb)[W], u32(&nc)[W]) {
      load_words<W>(a.b[k + 1] + off, nb);
      load_words<W>(a.a[k + 1] + off, nc);
    });
#pragma unroll
    for (u32 g = 0; g < kMaxSums; ++g) {
      if (g >= a.sums || a.d[g][k] == nullptr) continue;
      u32 x[W];
      load_words<W>(a.d[g][k] + off, x);
#pragma unroll
      for (int w = 0; w < W; ++w) {
        s0[g][w] = add_mod(s0[g][w], mont_mul_c(x[w], static_cast<i32>(b[w]), m), m.q);
        s1[g][w] = add_mod(s1[g][w], mont_mul_c(x[w], static_cast<i32>(c[w]), m), m.q);
      }
    }
  }
  const i32 r2 = static_cast<i32>(m.r2_mod);
#pragma unroll
  for (u32 g = 0; g < kMaxSums; ++g) {
    if (g >= a.sums) break;
#pragma unroll
    for (int w = 0; w < W; ++w) {
      s0[g][w] = mont_mul_c(s0[g][w], r2, m);
      s1[g][w] = mont_mul_c(s1[g][w], r2, m);
    }
    store_words<W>(a.out0[g] + off, s0[g]);
    store_words<W>(a.out1[g] + off, s1[g]);
  }
}

__global__ void mul_monomial_kernel(const __grid_constant__ RingTables t, const u32* a, u32 k,
                                    u32* out, const __grid_constant__ Basis basis) {
  pdl_entry();
  const u32 n = 1u << t.log_n;
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u32 limb = blockIdx.y;
  const PrimeId id = basis.ids[limb];
  const Modulus m = t.mod[id];
  // Word i is the evaluation at psi^(2 brev(i) + 1), so X^k contributes psi^(k (2 brev(i) + 1)).
  const u32 e = (k * (2u * bit_reverse(i, t.log_n) + 1u)) & (2u * n - 1u);
  const i32* tw = t.fwd + static_cast<std::size_t>(id) * n;
  // fwd[brev(j)] = psi^j for j < N, and psi^N = -1.
  const i32 w = e < n ? tw[bit_reverse(e, t.log_n)] : -tw[bit_reverse(e - n, t.log_n)];
  const std::size_t off = static_cast<std::size_t>(limb) * n + i;
  out[off] = mont_mul_c(a[off], w, m);
}

bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

}  // namespace

void launch_key_mult(const ConstPtrs& d, const ConstPtrs& kb, const ConstPtrs& ka, u32 terms,
                     u32* out0, u32* out1, bool accumulate, u32 n, const Basis& basis,
                     const Modulus* mods, cudaStream_t s, u32 galois, const u32* add0,
                     const ScaledAdds* scaled) {
  if (basis.size == 0) return;
  bool vec = n % 4 == 0 && aligned16(out0) && aligned16(out1);
  for (u32 k = 0; k < terms; ++k)
    vec = vec && aligned16(d.p[k]) && aligned16(kb.p[k]) && aligned16(ka.p[k]);
  if (scaled != nullptr) vec = vec && aligned16(scaled->a0) && aligned16(scaled->a1);
  constexpr u32 threads = 256;
  const u32 w = vec ? 4 : 1;
  const dim3 grid((n / w + threads - 1) / threads, basis.size);
  const ScaledAdds none{};
  const ScaledAdds& sa = scaled != nullptr ? *scaled : none;
  const auto go = [&](auto kernel) {
    launch_kernel(kernel, grid, threads, 0, s, d, kb, ka, terms, out0, out1, accumulate, n, basis,
                  mods, galois, add0, sa);
  };
  if (vec)
    scaled != nullptr ? go(key_mult_kernel<4, true>) : go(key_mult_kernel<4, false>);
  else
    scaled != nullptr ? go(key_mult_kernel<1, true>) : go(key_mult_kernel<1, false>);
  THEO_CUDA_CHECK_LAUNCH();
}

void launch_key_mult_rotations(const RotationArgs& a, u32 n, const Basis& basis,
                               const Modulus* mods, cudaStream_t s) {
  if (basis.size == 0 || a.rotations == 0) return;
  const bool add = a.add0 != nullptr;
  const std::size_t smem = (a.digits + (add ? 1u : 0u)) * std::size_t{kRotBlock} * sizeof(u32);
  const dim3 grid(n / kRotBlock, basis.size);
  if (add)
    launch_kernel(key_mult_rotations_kernel<true>, grid, 256, smem, s, a, n, basis, mods);
  else
    launch_kernel(key_mult_rotations_kernel<false>, grid, 256, smem, s, a, n, basis, mods);
  THEO_CUDA_CHECK_LAUNCH();
}

void launch_key_mult_sums(const SumsArgs& a, u32 n, const Basis& basis, const Modulus* mods,
                          cudaStream_t s) {
  if (basis.size == 0 || a.sums == 0) return;
  constexpr u32 threads = 256;
  const dim3 grid((n / 4 + threads - 1) / threads, basis.size);
  launch_kernel(key_mult_sums_kernel, grid, threads, 0, s, a, n, basis, mods);
  THEO_CUDA_CHECK_LAUNCH();
}

void launch_mul_monomial(const RingTables& t, const u32* a, u32 k, u32* out, u32 n,
                         const Basis& basis, cudaStream_t s) {
  if (basis.size == 0) return;
  constexpr u32 threads = 256;
  const dim3 grid((n + threads - 1) / threads, basis.size);
  launch_kernel(mul_monomial_kernel, grid, threads, 0, s, t, a, k, out, basis);
  THEO_CUDA_CHECK_LAUNCH();
}

}  // namespace theo::cuda
