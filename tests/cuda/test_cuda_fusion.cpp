// Key-switching fusion on the GPU, bit-exact against the CPU reference: the fused transform
// arguments of the Backend (out-of-place src, input_copy, per-poly constants over mixed bases in
// one launch, ntt_sub_mul_scalar) for the register kernels (N = 2^12, 2^16) and the shared-memory
// tile kernels (other N, and N = 2^16 with Tuning::ntt.fast = 0). The mechanisms that use them
// (Optimizations::fusion) are tests/ckks/test_ckks_fusion.cpp's suites, in the same binary.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "cuda/cuda_test_util.h"
#include "theo/backend/factory.h"

namespace theo {
namespace {

constexpr u32 kPrimes = 40;

using cuda_test::Pair;
using cuda_test::random_consts;
using cuda_test::same;
using cuda_test::Twin;
using cuda_test::words;

// One CPU and one CUDA backend per degree over 40 primes (8 just below 2^31, 6 near 2^25, the
// rest near 2^30); `tile` = the CUDA backend forced to the shared-memory tile kernels
// (Tuning::ntt.fast = 0).
Pair& backends(u32 log_n, bool tile = false) {
  static std::map<std::pair<u32, bool>, Pair> cache;
  const auto key = std::pair{log_n, tile};
  auto it = cache.find(key);
  if (it == cache.end()) {
    const RingParams r = cuda_test::mixed_ring(log_n, kPrimes, 8, 6);
    cuda::Tuning t;
    t.ntt.fast = tile ? 0 : 1;
    it = cache.emplace(key, Pair{make_cpu_backend(r), cuda::make_backend(r, t)}).first;
  }
  return it->second;
}

Basis random_basis(u32 limbs) {
  return cuda_test::random_basis(kPrimes, limbs);
}

struct Refs {
  std::vector<PolyRef> c, g;
};
struct CRefs {
  std::vector<ConstPolyRef> c, g;
};

// Degrees and kernels: register kernels at 2^12 and 2^16, tile kernels at 2^13 and 2^15 and at
// 2^16 with fast = 0.
struct KernelPath {
  u32 log_n;
  bool tile;
};
const KernelPath kKernelPaths[] = {{12, false}, {13, false}, {15, false}, {16, false}, {16, true}};

std::string label(const KernelPath& s) {
  return "N=2^" + std::to_string(s.log_n) + (s.tile ? " tile" : "");
}

TEST(CudaFusion, OutOfPlaceTransformsWithInputCopy) {
  for (const KernelPath& st : kKernelPaths) {
    Pair& p = backends(st.log_n, st.tile);
    for (const u32 limbs : {1u, 7u, 24u}) {
      const Basis b = random_basis(limbs);
      const auto consts = random_consts(*p.cpu, b);
      for (const bool inverse : {false, true}) {
        for (const bool input_copy : {false, true}) {
          Twin x(p, b), y(p, b), ox(p, b), oy(p, b), ex(p, b), ey(p, b);
          const auto x0 = words(*p.cpu, x.c);
          Refs out{{ox.c.ref(), oy.c.ref()}, {ox.g.ref(), oy.g.ref()}};
          CRefs src{{x.c.cref(), y.c.cref()}, {x.g.cref(), y.g.cref()}};
          Refs ech{{ex.c.ref(), ey.c.ref()}, {ex.g.ref(), ey.g.ref()}};
          const std::span<const PolyRef> ec = input_copy ? ech.c : std::span<const PolyRef>();
          const std::span<const PolyRef> eg = input_copy ? ech.g : std::span<const PolyRef>();
          if (inverse) {
            p.cpu->intt(out.c, consts, src.c, ec);
            p.gpu->intt(out.g, consts, src.g, eg);
          } else {
            p.cpu->ntt(out.c, consts, src.c, ec);
            p.gpu->ntt(out.g, consts, src.g, eg);
          }
          const std::string what = label(st) + " limbs " + std::to_string(limbs) +
                                   (inverse ? " intt" : " ntt") + (input_copy ? " input_copy" : "");
          EXPECT_TRUE(same(p, ox, what + " out[0]"));
          EXPECT_TRUE(same(p, oy, what + " out[1]"));
          EXPECT_EQ(words(*p.gpu, x.g), x0) << what << ": src changed";
          if (input_copy) {
            EXPECT_EQ(words(*p.gpu, ex.g), x0) << what << ": input_copy";
            EXPECT_TRUE(same(p, ey, what + " input_copy[1]"));
          }
        }
      }
    }
  }
}

// Per-poly constants over mixed bases, more polys than kMaxBatch and more limbs than
// kMaxNttLimbs (several launches), in place with an input copy.
TEST(CudaFusion, MixedBasesSplitAcrossLaunches) {
  for (const KernelPath& st :
       {KernelPath{12, false}, KernelPath{16, false}, KernelPath{14, false}}) {
    Pair& p = backends(st.log_n, st.tile);
    std::vector<Twin> polys, input_copies;
    std::vector<u32> consts;
    const u32 sizes[] = {3, 40, 1, 37, 5, 2, 2, 9, 1, 1, 4, 3, 2, 1, 1, 1, 2, 3, 39, 38, 40, 35, 1};
    for (const u32 limbs : sizes) {
      const Basis b = random_basis(limbs);
      polys.emplace_back(p, b);
      input_copies.emplace_back(p, b);
      const auto c = random_consts(*p.cpu, b);
      consts.insert(consts.end(), c.begin(), c.end());
    }
    for (const bool inverse : {false, true}) {
      Refs r, e;
      for (std::size_t k = 0; k < polys.size(); ++k) {
        r.c.push_back(polys[k].c.ref());
        r.g.push_back(polys[k].g.ref());
        e.c.push_back(input_copies[k].c.ref());
        e.g.push_back(input_copies[k].g.ref());
      }
      if (inverse) {
        p.cpu->intt(r.c, consts, {}, e.c);
        p.gpu->intt(r.g, consts, {}, e.g);
      } else {
        p.cpu->ntt(r.c, consts, {}, e.c);
        p.gpu->ntt(r.g, consts, {}, e.g);
      }
      for (std::size_t k = 0; k < polys.size(); ++k) {
        const std::string what =
            label(st) + (inverse ? " intt" : " ntt") + " poly " + std::to_string(k);
        EXPECT_TRUE(same(p, polys[k], what));
        EXPECT_TRUE(same(p, input_copies[k], what + " input_copy"));
      }
    }
  }
}

TEST(CudaFusion, NttSubMulScalar) {
  for (const KernelPath& st : kKernelPaths) {
    Pair& p = backends(st.log_n, st.tile);
    const Basis b = random_basis(13);
    const auto pre = random_consts(*p.cpu, b);
    for (const auto& [first, width] : {std::pair{0u, 13u}, std::pair{4u, 6u}, std::pair{12u, 1u}}) {
      const Basis window = b.slice(first, width);
      const auto s = random_consts(*p.cpu, window);
      for (const bool with_pre : {false, true}) {
        Twin x0(p, b), x1(p, b), a0(p, window), a1(p, window);
        Refs xs{{x0.c.ref(), x1.c.ref()}, {x0.g.ref(), x1.g.ref()}};
        CRefs as{{a0.c.cref(), a1.c.cref()}, {a0.g.cref(), a1.g.cref()}};
        const std::span<const u32> c =
            with_pre ? std::span<const u32>(pre) : std::span<const u32>();
        p.cpu->ntt_sub_mul_scalar(xs.c, c, as.c, first, s);
        p.gpu->ntt_sub_mul_scalar(xs.g, c, as.g, first, s);
        const std::string what = label(st) + " window " + std::to_string(first) + "+" +
                                 std::to_string(width) + (with_pre ? " pre" : "");
        EXPECT_TRUE(same(p, x0, what + " poly 0"));
        EXPECT_TRUE(same(p, x1, what + " poly 1"));
      }
    }
  }
}

TEST(CudaFusion, MisalignedOperandsRejected) {
  Pair& p = backends(12);
  const Basis b = random_basis(3);
  RnsPoly x = p.gpu->make_poly(b), y = p.gpu->make_poly(b);
  const PolyRef xs[] = {x.ref()};
  ConstPolyRef odd = y.cref();
  odd.data += 1;  // same shape, 4 bytes off: refused before anything is read
  const ConstPolyRef src[] = {odd};
  EXPECT_THROW(p.gpu->ntt(xs, {}, src), ParameterError);
}

}  // namespace
}  // namespace theo
