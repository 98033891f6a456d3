// Bit-exactness of the CUDA backend's NTT against the CPU reference backend: against the
// definition, round trips, every kernel configuration (tuning variants, twiddles made on the fly,
// persistent row kernels), fused constants, batches of mixed shapes and limb slices.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/backend.h"

#include "cuda/backend_grid.h"

namespace theo {
namespace {

using namespace cuda_backend_test;

// The forward transform of x in place on both backends gives the same words, and so does the
// inverse after it (`l` names the case in a failure).
void expect_round_trip_same(Pair& p, Twin& x, const std::string& l) {
  p.cpu->ntt(std::vector<PolyRef>{x.c.ref()});
  p.gpu->ntt(std::vector<PolyRef>{x.g.ref()});
  EXPECT_TRUE(same(p, x, "ntt " + l));
  p.cpu->intt(std::vector<PolyRef>{x.c.ref()});
  p.gpu->intt(std::vector<PolyRef>{x.g.ref()});
  EXPECT_TRUE(same(p, x, "intt " + l));
}

TEST(CudaBackend, NttMatchesDefinition) {
  // Independent of the CPU backend: A[i] = a(psi^(2 brev(i) + 1)) for a few i.
  Pair& p = backends(12);
  const Basis b = Basis::range(1, 1);
  const u32 q = p.gpu->modulus(1).q, n = p.gpu->n();
  const std::vector<u32> a = random_words(*p.cpu, b);
  Twin x(p, b, a);
  p.gpu->ntt(std::span<const PolyRef>(std::vector<PolyRef>{x.g.ref()}));
  std::vector<u32> out(n);
  p.gpu->download(x.g.cref(), out.data());
  const u32 psi = ntt_root(q, n);
  for (u32 i : {0u, 1u, 2u, 5u, 100u, 2047u, 4095u}) {
    const u32 e = 2 * bit_reverse(i, 12) + 1;
    const u32 pt = pow_mod(psi, e, q);
    u64 acc = 0, pw = 1;
    for (u32 j = 0; j < n; ++j) {
      acc = (acc + static_cast<u64>(a[j]) * pw) % q;
      pw = pw * pt % q;
    }
    EXPECT_EQ(out[i], acc) << "i = " << i;
  }
}

TEST(CudaBackend, NttIntt) {
  for (const Shape& s : kGrid) {
    Pair& p = backends(s.log_n);
    const Basis b = random_basis(s.limbs, s.limbs % 2 == 0);
    Twin x(p, b);
    const std::vector<PolyRef> cx{x.c.ref()}, gx{x.g.ref()};
    p.cpu->ntt(cx);
    p.gpu->ntt(gx);
    ASSERT_TRUE(same(p, x, "ntt " + label(s)));
    p.cpu->intt(cx);
    p.gpu->intt(gx);
    ASSERT_TRUE(same(p, x, "intt " + label(s)));
  }
}

TEST(CudaBackend, NttTuningVariants) {
  // Every kernel configuration must give the same words (the split, tile and radix only change
  // which butterflies a thread does, never their result).
  using cuda::NttConfig;
  for (const u32 log_n : {12u, 14u, 16u}) {
    Pair& p = backends(log_n);
    const Basis b = random_basis(log_n == 16 ? 6 : 3);
    Twin x(p, b);
    // Splits, tiles, threads and radices (the other fields at their defaults).
    for (const NttConfig& v :
         {NttConfig{.tile_log = 12, .radix_log = 3}, NttConfig{.tile_log = 12, .radix_log = 4},
          NttConfig{.tile_log = 11, .threads = 128, .radix_log = 4},
          NttConfig{.tile_log = 13, .threads = 512, .radix_log = 3},
          NttConfig{.tile_log = 13, .threads = 512, .radix_log = 4},
          NttConfig{.log_n1 = 5, .tile_log = 11, .threads = 64, .radix_log = 3},
          NttConfig{.log_n1 = log_n - 5, .tile_log = 12, .radix_log = 4},
          NttConfig{.log_n1 = log_n / 2 + 1, .tile_log = 12, .radix_log = 3}}) {
      cuda::Tuning t;
      t.ntt = v;
      cuda::set_tuning(*p.gpu, t);
      const std::string l = "N=2^" + std::to_string(log_n) + " radix_log " +
                            std::to_string(v.radix_log) + " tile_log " +
                            std::to_string(v.tile_log) + " threads " + std::to_string(v.threads) +
                            " log_n1 " + std::to_string(v.log_n1);
      Twin y(p, b);
      p.cpu->copy(x.c.cref(), y.c.ref());
      p.gpu->copy(x.g.cref(), y.g.ref());
      expect_round_trip_same(p, y, l);
    }
    cuda::set_tuning(*p.gpu, cuda::Tuning{});
  }
}

TEST(CudaBackend, NttRowTwiddlesOnTheFlyMatchTheTable) {
  // The register row kernels give the CPU's words with any number of their second pass's stages
  // making twiddles on the fly (the default count runs in every other test, fused forms included).
  for (const u32 log_n : {12u, 16u}) {
    Pair& p = backends(log_n);
    for (const u32 otf : {0u, 1u, 2u, 3u, 4u}) {
      cuda::Tuning t;
      t.ntt.row_otf = otf;
      cuda::set_tuning(*p.gpu, t);
      const std::string l = "N=2^" + std::to_string(log_n) + " row_otf " + std::to_string(otf);
      const Basis b = random_basis(log_n == 16 ? 13 : 5);
      Twin x(p, b);
      expect_round_trip_same(p, x, l);
    }
    cuda::set_tuning(*p.gpu, cuda::Tuning{});
  }
}

TEST(CudaBackend, NttPersistentRowKernelsMatchTheCpu) {
  // NttConfig::rows_resident: the persistent row kernels (each block loops over tiles, loading the
  // next tile during this one) give the CPU's words for any blocks-per-SM cap, with tile counts
  // below, equal to and above the grid, and with the input copy and the epilogue of the fused
  // forms.
  for (const u32 log_n : {12u, 16u}) {
    Pair& p = backends(log_n);
    for (const u32 resident : {1u, 2u, 3u, 8u}) {
      cuda::Tuning t;
      t.ntt.rows_resident = resident;
      t.ntt.rows_persistent_tiles = 1000;  // every launch
      cuda::set_tuning(*p.gpu, t);
      for (const u32 limbs : {1u, 13u, 40u}) {
        const std::string l = "N=2^" + std::to_string(log_n) + " rows_resident " +
                              std::to_string(resident) + " limbs " + std::to_string(limbs);
        const Basis b = random_basis(limbs);
        Twin x(p, b), e(p, b), a(p, b);
        p.cpu->ntt(std::vector<PolyRef>{x.c.ref()});
        p.gpu->ntt(std::vector<PolyRef>{x.g.ref()});
        EXPECT_TRUE(same(p, x, "ntt " + l));
        // Inverse with a copy of what it reads (ModUp's first phase), out of place.
        Twin y(p, b);
        p.cpu->intt(std::vector<PolyRef>{y.c.ref()}, {}, std::vector<ConstPolyRef>{x.c.cref()},
                    std::vector<PolyRef>{e.c.ref()});
        p.gpu->intt(std::vector<PolyRef>{y.g.ref()}, {}, std::vector<ConstPolyRef>{x.g.cref()},
                    std::vector<PolyRef>{e.g.ref()});
        EXPECT_TRUE(same(p, y, "intt " + l));
        EXPECT_TRUE(same(p, e, "intt input_copy " + l));
        // Forward with the (a - y) * s epilogue on every limb (ModDown's / rescale's tail).
        const std::vector<u32> s = random_consts(*p.cpu, b);
        p.cpu->ntt_sub_mul_scalar(std::vector<PolyRef>{y.c.ref()}, {},
                                  std::vector<ConstPolyRef>{a.c.cref()}, 0, s);
        p.gpu->ntt_sub_mul_scalar(std::vector<PolyRef>{y.g.ref()}, {},
                                  std::vector<ConstPolyRef>{a.g.cref()}, 0, s);
        EXPECT_TRUE(same(p, y, "ntt_sub_mul_scalar " + l));
      }
    }
    cuda::set_tuning(*p.gpu, cuda::Tuning{});
  }
}

TEST(CudaBackend, NttRoundTripIsIdentity) {
  Pair& p = backends(16);
  const Basis b = random_basis(9);
  const std::vector<u32> a = random_words(*p.cpu, b);
  Twin x(p, b, a);
  const std::vector<PolyRef> gx{x.g.ref()};
  p.gpu->ntt(gx);
  p.gpu->intt(gx);
  std::vector<u32> out(a.size());
  p.gpu->download(x.g.cref(), out.data());
  EXPECT_EQ(out, a);
}

TEST(CudaBackend, NttFusedConstants) {
  for (const Shape& s : {Shape{12, 4}, Shape{14, 11}, Shape{16, 24}}) {
    Pair& p = backends(s.log_n);
    const Basis b = random_basis(s.limbs);
    const std::vector<u32> c = random_consts(*p.cpu, b);
    Twin x(p, b), y(p, b);
    const std::vector<PolyRef> cx{x.c.ref(), y.c.ref()}, gx{x.g.ref(), y.g.ref()};
    p.cpu->ntt(cx, c);
    p.gpu->ntt(gx, c);
    ASSERT_TRUE(same(p, x, "ntt pre_consts " + label(s)));
    ASSERT_TRUE(same(p, y, "ntt pre_consts (2nd poly) " + label(s)));
    p.cpu->intt(cx, c);
    p.gpu->intt(gx, c);
    ASSERT_TRUE(same(p, x, "intt post_consts " + label(s)));
    ASSERT_TRUE(same(p, y, "intt post_consts (2nd poly) " + label(s)));
  }
}

TEST(CudaBackend, NttBatchedMixedShapes) {
  // 19 polys: more than one launch's worth, with a change of Basis in the middle.
  Pair& p = backends(13);
  const Basis b1 = random_basis(3), b2 = random_basis(6, true);
  std::vector<Twin> xs;
  for (int i = 0; i < 19; ++i)
    xs.emplace_back(p, i >= 7 && i < 9 ? b2 : b1);
  std::vector<PolyRef> cx, gx;
  for (auto& t : xs) {
    cx.push_back(t.c.ref());
    gx.push_back(t.g.ref());
  }
  p.cpu->ntt(cx);
  p.gpu->ntt(gx);
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_TRUE(same(p, xs[i], "batched ntt poly " + std::to_string(i)));
  p.cpu->intt(cx);
  p.gpu->intt(gx);
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_TRUE(same(p, xs[i], "batched intt poly " + std::to_string(i)));
}

TEST(CudaBackend, NttOnLimbSlices) {
  Pair& p = backends(14);
  const Basis b = random_basis(10);
  Twin x(p, b);
  const std::vector<PolyRef> cx{x.c.slice(3, 5)}, gx{x.g.slice(3, 5)};
  p.cpu->ntt(cx);
  p.gpu->ntt(gx);
  EXPECT_TRUE(same(p, x, "ntt on a slice"));
}

}  // namespace
}  // namespace theo
