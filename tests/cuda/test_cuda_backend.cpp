// Bit-exactness of the CUDA backend against the CPU reference backend: every ring op, same random
// inputs on both, identical words required. The grid samples N = 2^12..2^16 and limb counts 1..60
// (odd, non-power-of-two, scattered prime ids) so that the suite runs in well under two minutes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "cuda/cuda_test_util.h"
#include "theo/backend/factory.h"
#include "theo/math/primes.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/backend.h"

namespace theo {
namespace {

constexpr u32 kPrimes = 64;

using cuda_test::Pair;
using cuda_test::random_consts;
using cuda_test::random_words;
using cuda_test::rng;
using cuda_test::same;
using cuda_test::Twin;

// 64 primes: mostly near 2^30, 12 just below 2^31, 8 near 2^25.
RingParams ring_for(u32 log_n) {
  return cuda_test::mixed_ring(log_n, kPrimes, 12, 8);
}

Pair& backends(u32 log_n) {
  static std::map<u32, Pair> cache;
  auto it = cache.find(log_n);
  if (it == cache.end()) {
    const RingParams r = ring_for(log_n);
    Pair p{make_cpu_backend(r), make_cuda_backend(r)};
    it = cache.emplace(log_n, std::move(p)).first;
  }
  return it->second;
}

// `limbs` distinct prime ids of the ring in random order (contiguous when contiguous = true).
Basis random_basis(u32 limbs, bool contiguous = false) {
  return cuda_test::random_basis(kPrimes, limbs, contiguous);
}

struct Shape {
  u32 log_n, limbs;
};
// Sampled grid: every N, limb counts 1..60 incl. odd and non-powers of two.
const std::vector<Shape> kGrid = {{12, 1}, {12, 3},  {12, 60}, {13, 2},  {13, 7},  {13, 33},
                                  {14, 5}, {14, 12}, {14, 45}, {15, 1},  {15, 13}, {15, 24},
                                  {16, 1}, {16, 3},  {16, 12}, {16, 31}, {16, 48}, {16, 60}};

std::string label(const Shape& s) {
  return "N=2^" + std::to_string(s.log_n) + " limbs=" + std::to_string(s.limbs);
}

TEST(CudaBackend, Name) {
  Pair& p = backends(12);
  EXPECT_EQ(p.gpu->kind(), BackendKind::kCuda);
  EXPECT_NE(p.gpu->name().find("cuda"), std::string::npos);
  std::printf("%s\n", p.gpu->name().c_str());
}

TEST(CudaBackend, UploadDownloadCopyZero) {
  Pair& p = backends(12);
  const Basis b = random_basis(5);
  Twin x(p, b), y(p, b);
  EXPECT_TRUE(same(p, x, "upload/download"));
  p.cpu->copy(x.c.cref(), y.c.ref());
  p.gpu->copy(x.g.cref(), y.g.ref());
  EXPECT_TRUE(same(p, y, "copy"));
  p.cpu->fill_zero(y.c.slice(1, 2));
  p.gpu->fill_zero(y.g.slice(1, 2));
  EXPECT_TRUE(same(p, y, "fill_zero slice"));
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
  struct Variant {
    u32 radix_log, tile_log, threads, log_n1;
  };
  for (const u32 log_n : {12u, 14u, 16u}) {
    Pair& p = backends(log_n);
    const Basis b = random_basis(log_n == 16 ? 6 : 3);
    Twin x(p, b);
    const std::vector<PolyRef> cx{x.c.ref()};
    p.cpu->ntt(cx);
    for (const Variant& v : {Variant{3, 12, 256, 0}, Variant{4, 12, 256, 0}, Variant{4, 11, 128, 0},
                             Variant{3, 13, 512, 0}, Variant{4, 13, 512, 0}, Variant{3, 11, 64, 5},
                             Variant{4, 12, 256, log_n - 5}, Variant{3, 12, 256, log_n / 2 + 1}}) {
      cuda::Tuning t;
      t.ntt.radix_log = v.radix_log;
      t.ntt.tile_log = v.tile_log;
      t.ntt.threads = v.threads;
      t.ntt.log_n1 = v.log_n1;
      cuda::set_tuning(*p.gpu, t);
      const std::string l = "N=2^" + std::to_string(log_n) + " radix_log " +
                            std::to_string(v.radix_log) + " tile_log " +
                            std::to_string(v.tile_log) + " threads " + std::to_string(v.threads) +
                            " log_n1 " + std::to_string(v.log_n1);
      Twin y(p, b);
      p.gpu->copy(x.g.cref(), y.g.ref());
      const std::vector<PolyRef> gy{y.g.ref()};
      p.gpu->ntt(gy);
      p.cpu->copy(x.c.cref(), y.c.ref());
      EXPECT_TRUE(same(p, y, "ntt " + l));
      p.gpu->intt(gy);
      p.cpu->intt(std::vector<PolyRef>{y.c.ref()});
      EXPECT_TRUE(same(p, y, "intt " + l));
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
      p.cpu->ntt(std::vector<PolyRef>{x.c.ref()});
      p.gpu->ntt(std::vector<PolyRef>{x.g.ref()});
      EXPECT_TRUE(same(p, x, "ntt " + l));
      p.cpu->intt(std::vector<PolyRef>{x.c.ref()});
      p.gpu->intt(std::vector<PolyRef>{x.g.ref()});
      EXPECT_TRUE(same(p, x, "intt " + l));
    }
    cuda::set_tuning(*p.gpu, cuda::Tuning{});
  }
}

TEST(CudaBackend, NttPersistentRowKernelsMatchTheCpu) {
  // NttConfig::rows_resident: the persistent row kernels (each block loops over tiles, loading the
  // next tile during this one) give the CPU's words for any blocks-per-SM cap, with tile counts
  // below, equal to and above the grid, and with the echo and the epilogue of the fused forms.
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
        // Inverse with an echo of what it reads (ModUp's first phase), out of place.
        Twin y(p, b);
        p.cpu->intt(std::vector<PolyRef>{y.c.ref()}, {}, std::vector<ConstPolyRef>{x.c.cref()},
                    std::vector<PolyRef>{e.c.ref()});
        p.gpu->intt(std::vector<PolyRef>{y.g.ref()}, {}, std::vector<ConstPolyRef>{x.g.cref()},
                    std::vector<PolyRef>{e.g.ref()});
        EXPECT_TRUE(same(p, y, "intt " + l));
        EXPECT_TRUE(same(p, e, "intt echo " + l));
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

TEST(CudaBackend, Elementwise) {
  for (const Shape& s : kGrid) {
    if (s.log_n == 15 || s.limbs == 60) continue;  // the other shapes cover these paths
    Pair& p = backends(s.log_n);
    Backend &C = *p.cpu, &G = *p.gpu;
    const Basis b = random_basis(s.limbs);
    Twin a(p, b), bb(p, b), c(p, b), o(p, b);
    const std::vector<u32> k = random_consts(C, b);
    const std::string l = " " + label(s);
    C.add(a.c.cref(), bb.c.cref(), o.c.ref()), G.add(a.g.cref(), bb.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "add" + l));
    C.sub(a.c.cref(), bb.c.cref(), o.c.ref()), G.sub(a.g.cref(), bb.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "sub" + l));
    C.neg(a.c.cref(), o.c.ref()), G.neg(a.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "neg" + l));
    C.mul(a.c.cref(), bb.c.cref(), o.c.ref()), G.mul(a.g.cref(), bb.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "mul" + l));
    C.mul_add(a.c.cref(), bb.c.cref(), c.c.cref(), o.c.ref());
    G.mul_add(a.g.cref(), bb.g.cref(), c.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "mul_add" + l));
    C.mul_scalar(a.c.cref(), k, o.c.ref()), G.mul_scalar(a.g.cref(), k, o.g.ref());
    ASSERT_TRUE(same(p, o, "mul_scalar" + l));
    C.add_scalar(a.c.cref(), k, o.c.ref()), G.add_scalar(a.g.cref(), k, o.g.ref());
    ASSERT_TRUE(same(p, o, "add_scalar" + l));
    C.mul_scalar_add(a.c.cref(), k, bb.c.cref(), o.c.ref());
    G.mul_scalar_add(a.g.cref(), k, bb.g.cref(), o.g.ref());
    ASSERT_TRUE(same(p, o, "mul_scalar_add" + l));
    C.sub_mul_scalar(a.c.cref(), bb.c.cref(), k, o.c.ref());
    G.sub_mul_scalar(a.g.cref(), bb.g.cref(), k, o.g.ref());
    ASSERT_TRUE(same(p, o, "sub_mul_scalar" + l));
    // In place: out aliases a.
    C.mul_add(a.c.cref(), bb.c.cref(), c.c.cref(), a.c.ref());
    G.mul_add(a.g.cref(), bb.g.cref(), c.g.cref(), a.g.ref());
    ASSERT_TRUE(same(p, a, "mul_add in place" + l));
  }
}

TEST(CudaBackend, AddSubBatch) {
  // Batches that split: two bases, an unaligned view in the middle, an in-place triple, and more
  // triples than one launch takes (kMaxBatch).
  for (const Shape& s : {Shape{12, 3}, Shape{13, 33}, Shape{16, 48}}) {
    Pair& p = backends(s.log_n);
    const Basis b = random_basis(s.limbs), b2 = random_basis(s.limbs / 2 + 1);
    const u32 count = s.log_n == 12 ? cuda::kMaxBatch + 5 : 4;
    std::vector<Twin> xs, ys, zs;
    for (u32 k = 0; k < count; ++k) {
      const Basis& bk = k == 1 ? b2 : b;
      xs.emplace_back(p, bk), ys.emplace_back(p, bk), zs.emplace_back(p, bk);
    }
    for (const bool subtract : {false, true}) {
      std::vector<ConstPolyRef> ac, bc, ag, bg;
      std::vector<PolyRef> oc, og;
      for (u32 k = 0; k < count; ++k) {
        ac.push_back(xs[k].c.cref()), bc.push_back(ys[k].c.cref());
        ag.push_back(xs[k].g.cref()), bg.push_back(ys[k].g.cref());
        oc.push_back(zs[k].c.ref()), og.push_back(zs[k].g.ref());
      }
      // In place on the last triple; an unaligned 1-limb view on triple 2.
      oc.back() = xs.back().c.ref(), og.back() = xs.back().g.ref();
      const Basis one = xs[2].c.basis().slice(0, 1);
      ac[2] = {xs[2].c.data() + 1, xs[2].c.n(), one},
      ag[2] = {xs[2].g.data() + 1, xs[2].g.n(), one};
      bc[2] = {ys[2].c.data() + 2, ys[2].c.n(), one},
      bg[2] = {ys[2].g.data() + 2, ys[2].g.n(), one};
      oc[2] = {zs[2].c.data() + 3, zs[2].c.n(), one},
      og[2] = {zs[2].g.data() + 3, zs[2].g.n(), one};
      if (subtract) {
        p.cpu->sub_batch(ac, bc, oc), p.gpu->sub_batch(ag, bg, og);
      } else {
        p.cpu->add_batch(ac, bc, oc), p.gpu->add_batch(ag, bg, og);
      }
      const std::string what = std::string(subtract ? "sub_batch " : "add_batch ") + label(s);
      for (u32 k = 0; k < count; ++k) {
        ASSERT_TRUE(same(p, zs[k], what + " out " + std::to_string(k)));
        ASSERT_TRUE(same(p, xs[k], what + " a " + std::to_string(k)));
      }
    }
  }
  Pair& p = backends(12);
  const Basis b = random_basis(3);
  Twin a0(p, b), a1(p, b);
  const std::vector<ConstPolyRef> as = {a0.g.cref(), a1.g.cref()};
  const std::vector<PolyRef> crossed = {a1.g.ref(), a0.g.ref()};
  EXPECT_THROW(p.gpu->add_batch(as, as, crossed), ParameterError);
}

// Linear combination in one pass: term counts below, at and above one launch's kScalarSumTerms
// (the rest chained with accumulation), odd limb counts, random bases.
TEST(CudaBackend, MulScalarSum) {
  struct Case {
    u32 log_n, limbs, terms;
  };
  const u32 k = cuda::kScalarSumTerms;
  for (const Case& c : {Case{12, 1, 1}, Case{12, 3, k}, Case{13, 7, k + 1}, Case{14, 5, 2 * k + 3},
                        Case{15, 13, 4}, Case{16, 31, 3}, Case{16, 47, k + 4}}) {
    Pair& p = backends(c.log_n);
    const Basis b = random_basis(c.limbs, c.terms % 2 == 0);
    std::vector<Twin> ins;
    std::vector<ConstPolyRef> ci, gi;
    std::vector<u32> s;
    for (u32 t = 0; t < c.terms; ++t) {
      ins.emplace_back(p, b);
      const std::vector<u32> row = random_consts(*p.cpu, b);
      s.insert(s.end(), row.begin(), row.end());
    }
    for (const Twin& t : ins)
      ci.push_back(t.c.cref()), gi.push_back(t.g.cref());
    Twin o(p, b);
    p.cpu->mul_scalar_sum(ci, s, o.c.ref());
    p.gpu->mul_scalar_sum(gi, s, o.g.ref());
    ASSERT_TRUE(same(
        p, o, "mul_scalar_sum " + label({c.log_n, c.limbs}) + " terms=" + std::to_string(c.terms)));
  }
}

// Views: limb slices (16-byte aligned, vector path) and views at odd word offsets (the scalar
// path), for the inputs, the output or both, with more terms than one launch takes.
TEST(CudaBackend, MulScalarSumOnViews) {
  Pair& p = backends(13);
  const Basis b = random_basis(9);
  const u32 terms = cuda::kScalarSumTerms + 2, n = p.cpu->n();
  std::vector<Twin> ins;
  for (u32 t = 0; t < terms; ++t)
    ins.emplace_back(p, b);
  const Basis part = b.slice(2, 5);
  std::vector<u32> s;
  for (u32 t = 0; t < terms; ++t) {
    const std::vector<u32> row = random_consts(*p.cpu, part);
    s.insert(s.end(), row.begin(), row.end());
  }
  // offset = word offset of the view into each poly (limb 2 of the basis, plus `shift` words).
  const auto run = [&](u32 in_shift, u32 out_shift, const std::string& what) {
    std::vector<ConstPolyRef> ci, gi;
    for (u32 t = 0; t < terms; ++t) {
      const u32 at = 2 * n + (t % 2 == 0 ? in_shift : 0);
      ci.push_back({ins[t].c.data() + at, n, part});
      gi.push_back({ins[t].g.data() + at, n, part});
    }
    Twin o(p, b);
    const u32 at = 2 * n + out_shift;
    p.cpu->mul_scalar_sum(ci, s, PolyRef{o.c.data() + at, n, part});
    p.gpu->mul_scalar_sum(gi, s, PolyRef{o.g.data() + at, n, part});
    EXPECT_TRUE(same(p, o, "mul_scalar_sum on " + what));
  };
  run(0, 0, "limb slices");
  run(1, 0, "unaligned inputs");
  run(0, 3, "an unaligned output");
  run(3, 1, "unaligned inputs and output");
  // An output that aliases a term is refused, as on the CPU.
  const std::vector<ConstPolyRef> alias{ins[0].g.slice(0, 3)};
  EXPECT_THROW(p.gpu->mul_scalar_sum(alias, std::vector<u32>(3, 1), ins[0].g.slice(0, 3)),
               ParameterError);
}

TEST(CudaBackend, ElementwiseUnalignedSlices) {
  // Views that start one limb in are still 16-byte aligned; a view built at an odd word offset
  // takes the scalar path. Compare on a hand-made unaligned view.
  Pair& p = backends(12);
  const Basis b = random_basis(3);
  Twin a(p, b), o(p, b);
  PolyRef cu{a.c.data() + 1, a.c.n(), b.slice(0, 2)}, gu{a.g.data() + 1, a.g.n(), b.slice(0, 2)};
  PolyRef co{o.c.data() + 3, o.c.n(), b.slice(0, 2)}, go{o.g.data() + 3, o.g.n(), b.slice(0, 2)};
  p.cpu->mul(cu, cu, co);
  p.gpu->mul(gu, gu, go);
  EXPECT_TRUE(same(p, o, "unaligned mul"));
}

TEST(CudaBackend, Tensor) {
  for (const Shape& s : {Shape{12, 1}, Shape{14, 7}, Shape{16, 31}}) {
    Pair& p = backends(s.log_n);
    const Basis b = random_basis(s.limbs);
    Twin a0(p, b), a1(p, b), b0(p, b), b1(p, b), d0(p, b), d1(p, b), d2(p, b);
    p.cpu->tensor(a0.c.cref(), a1.c.cref(), b0.c.cref(), b1.c.cref(), d0.c.ref(), d1.c.ref(),
                  d2.c.ref());
    p.gpu->tensor(a0.g.cref(), a1.g.cref(), b0.g.cref(), b1.g.cref(), d0.g.ref(), d1.g.ref(),
                  d2.g.ref());
    ASSERT_TRUE(same(p, d0, "tensor d0 " + label(s)));
    ASSERT_TRUE(same(p, d1, "tensor d1 " + label(s)));
    ASSERT_TRUE(same(p, d2, "tensor d2 " + label(s)));
  }
}

// tensor_scaled: an integer factor on (a0, a1) inside the tensor kernel, the CPU's words (its
// default: mul_scalar first, then tensor); fresh random factors, 0 and 1 included.
TEST(CudaBackend, TensorScaled) {
  std::mt19937_64 rng(std::random_device{}());
  for (const Shape& s : {Shape{12, 1}, Shape{14, 7}, Shape{16, 31}}) {
    Pair& p = backends(s.log_n);
    const Basis b = random_basis(s.limbs);
    Twin a0(p, b), a1(p, b), b0(p, b), b1(p, b), d0(p, b), d1(p, b), d2(p, b);
    std::vector<u32> k(s.limbs);
    for (u32 i = 0; i < s.limbs; ++i)
      k[i] = i == 0 ? 0u : i == 1 ? 1u : static_cast<u32>(rng() % p.cpu->modulus(b[i]).q);
    p.cpu->tensor_scaled(a0.c.cref(), a1.c.cref(), b0.c.cref(), b1.c.cref(), d0.c.ref(), d1.c.ref(),
                         d2.c.ref(), k);
    p.gpu->tensor_scaled(a0.g.cref(), a1.g.cref(), b0.g.cref(), b1.g.cref(), d0.g.ref(), d1.g.ref(),
                         d2.g.ref(), k);
    ASSERT_TRUE(same(p, d0, "tensor_scaled d0 " + label(s)));
    ASSERT_TRUE(same(p, d1, "tensor_scaled d1 " + label(s)));
    ASSERT_TRUE(same(p, d2, "tensor_scaled d2 " + label(s)));
  }
}

TEST(CudaBackend, KeyMult) {
  for (const u32 dnum : {1u, 3u, 5u, 17u}) {
    Pair& p = backends(dnum == 17 ? 12 : 15);
    const Basis b = random_basis(dnum == 3 ? 48 : 9);
    std::vector<Twin> d, kb, ka;
    for (u32 k = 0; k < dnum; ++k)
      d.emplace_back(p, b), kb.emplace_back(p, b), ka.emplace_back(p, b);
    Twin o0(p, b), o1(p, b);
    std::vector<ConstPolyRef> cd, ckb, cka, gd, gkb, gka;
    for (u32 k = 0; k < dnum; ++k) {
      cd.push_back(d[k].c.cref()), ckb.push_back(kb[k].c.cref()), cka.push_back(ka[k].c.cref());
      gd.push_back(d[k].g.cref()), gkb.push_back(kb[k].g.cref()), gka.push_back(ka[k].g.cref());
    }
    p.cpu->key_mult(cd, ckb, cka, o0.c.ref(), o1.c.ref());
    p.gpu->key_mult(gd, gkb, gka, o0.g.ref(), o1.g.ref());
    ASSERT_TRUE(same(p, o0, "key_mult out0 dnum " + std::to_string(dnum)));
    ASSERT_TRUE(same(p, o1, "key_mult out1 dnum " + std::to_string(dnum)));
  }
}

TEST(CudaBackend, MulMonomial) {
  for (const u32 log_n : {12u, 16u}) {
    Pair& p = backends(log_n);
    const i64 n = i64{1} << log_n;
    const Basis b = random_basis(5);
    Twin a(p, b), o(p, b);
    for (const i64 k :
         {i64{0}, i64{1}, i64{-1}, n, 2 * n - 1, 3 * n + 5, i64{12345}, i64{-7777777}}) {
      p.cpu->mul_monomial(a.c.cref(), k, o.c.ref());
      p.gpu->mul_monomial(a.g.cref(), k, o.g.ref());
      ASSERT_TRUE(
          same(p, o, "mul_monomial k=" + std::to_string(k) + " N=2^" + std::to_string(log_n)));
    }
  }
}

TEST(CudaBackend, Automorphism) {
  for (const u32 log_n : {12u, 14u, 16u}) {
    Pair& p = backends(log_n);
    const Basis b = random_basis(7);
    Twin a(p, b), o(p, b);
    for (const u32 k :
         {1u, galois_element_for_rotation(1, log_n), galois_element_for_rotation(-3, log_n),
          galois_element_for_rotation(1234, log_n), galois_element_for_conjugation(log_n)}) {
      p.cpu->automorphism(a.c.cref(), k, o.c.ref());
      p.gpu->automorphism(a.g.cref(), k, o.g.ref());
      ASSERT_TRUE(same(p, o, "automorphism k=" + std::to_string(k)));
    }
  }
}

TEST(CudaBackend, AutomorphismSum) {
  for (const u32 terms : {1u, 3u, 20u}) {
    for (const bool acc : {false, true}) {
      Pair& p = backends(terms == 20 ? 12 : 16);
      const u32 log_n = terms == 20 ? 12u : 16u;
      const Basis b = random_basis(terms == 3 ? 13 : 5);
      std::vector<Twin> ins;
      std::vector<ConstPolyRef> ci, gi;
      std::vector<u32> ks;
      for (u32 j = 0; j < terms; ++j) {
        ins.emplace_back(p, b);
        ks.push_back(galois_element_for_rotation(static_cast<i64>(j * 37 + 1), log_n));
      }
      for (auto& t : ins)
        ci.push_back(t.c.cref()), gi.push_back(t.g.cref());
      Twin o(p, b);
      p.cpu->automorphism_sum(ci, ks, o.c.ref(), acc);
      p.gpu->automorphism_sum(gi, ks, o.g.ref(), acc);
      ASSERT_TRUE(same(
          p, o, "automorphism_sum terms=" + std::to_string(terms) + (acc ? " accumulate" : "")));
    }
  }
}

TEST(CudaBackend, BConv) {
  struct Case {
    u32 log_n, src, dst;
  };
  for (const Case& c :
       {Case{12, 1, 1}, Case{12, 2, 3}, Case{13, 5, 8}, Case{14, 12, 12}, Case{14, 13, 17},
        Case{15, 24, 31}, Case{16, 12, 48}, Case{16, 4, 60}, Case{16, 36, 24}}) {
    Pair& p = backends(c.log_n);
    const Basis all = random_basis(c.src + c.dst);
    const Basis s = all.slice(0, c.src), d = all.slice(c.src, c.dst);
    const auto cplan = p.cpu->make_bconv(s, d);
    const auto gplan = p.gpu->make_bconv(s, d);
    Twin x(p, s), y(p, d);
    const std::string l = " src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) +
                          " N=2^" + std::to_string(c.log_n);
    p.cpu->bconv(*cplan, x.c.cref(), y.c.ref());
    p.gpu->bconv(*gplan, x.g.cref(), y.g.ref());
    ASSERT_TRUE(same(p, y, "bconv" + l));
    p.cpu->bconv_matmul(*cplan, x.c.cref(), y.c.ref());
    p.gpu->bconv_matmul(*gplan, x.g.cref(), y.g.ref());
    ASSERT_TRUE(same(p, y, "bconv_matmul" + l));
  }
}

// Every BConv kernel on every shape class: the tile kernel forced for all shapes (blocked = 0), the
// small-source kernel with a row split that leaves a partial block, the blocked kernel with both
// block sizes, and the tensor-core kernel (the default for up to 16 sources; output counts that
// leave partial 16-row tiles, source counts 1..16 and so every flag-word position). The shapes
// cover output counts below the 4 row groups and partial row chunks, source counts that need folds
// (36, 60 sources of up to 31 bits) and that need none, and the 25-bit primes of this ring, which
// take the blocked kernel's general final reduction.
TEST(CudaBackend, BConvKernelVariants) {
  struct Case {
    u32 log_n, src, dst;
  };
  struct Variant {
    u32 blocked, small_rows, threads, tensor;
  };
  for (const Variant& v : {Variant{0, 0, 256, 0}, Variant{0, 3, 256, 0}, Variant{0, 16, 256, 0},
                           Variant{1, 0, 128, 0}, Variant{1, 0, 256, 0}, Variant{1, 0, 256, 1}}) {
    for (const Case& c : {Case{12, 1, 2}, Case{12, 5, 7}, Case{13, 12, 35}, Case{13, 14, 33},
                          Case{14, 16, 9}, Case{12, 36, 13}, Case{12, 60, 3}, Case{14, 12, 48},
                          Case{12, 3, 61}, Case{12, 8, 17}, Case{13, 11, 47}}) {
      Pair& p = backends(c.log_n);
      cuda::Tuning t;
      t.bconv.blocked = v.blocked;
      t.bconv.small_rows = v.small_rows;
      t.bconv.threads = v.threads;
      t.bconv.tensor = v.tensor;
      cuda::set_tuning(*p.gpu, t);
      const Basis all = random_basis(c.src + c.dst);
      const Basis s = all.slice(0, c.src), d = all.slice(c.src, c.dst);
      Twin x(p, s), y(p, d);
      const std::string l = " src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) +
                            " blocked " + std::to_string(v.blocked) + " rows " +
                            std::to_string(v.small_rows) + " threads " + std::to_string(v.threads) +
                            " tensor " + std::to_string(v.tensor);
      for (const bool exact : {false, true}) {
        const auto cplan = p.cpu->make_bconv(s, d, exact);
        const auto gplan = p.gpu->make_bconv(s, d, exact);
        p.cpu->bconv(*cplan, x.c.cref(), y.c.ref());
        p.gpu->bconv(*gplan, x.g.cref(), y.g.ref());
        ASSERT_TRUE(same(p, y, std::string(exact ? "exact " : "") + "bconv" + l));
        p.cpu->bconv_matmul(*cplan, x.c.cref(), y.c.ref());
        p.gpu->bconv_matmul(*gplan, x.g.cref(), y.g.ref());
        ASSERT_TRUE(same(p, y, std::string(exact ? "exact " : "") + "bconv_matmul" + l));
      }
      cuda::set_tuning(*p.gpu, cuda::Tuning{});
    }
  }
}

// Extreme inputs for the accumulators: two of three coefficients have every t_j at its largest
// magnitude ((q - 1) / 2, all positive or all negative), so the row sums reach the largest values
// this table allows; the blocked kernel's fold schedule must keep them exact.
TEST(CudaBackend, BConvExtremeInputs) {
  for (const u32 src : {4u, 12u, 36u, 60u}) {
    Pair& p = backends(12);
    const u32 dst = 64 - src < 16 ? 64 - src : 16;
    const Basis all = random_basis(src + dst);
    const Basis s = all.slice(0, src), d = all.slice(src, dst);
    for (const bool positive : {false, true}) {
      std::vector<u32> w(static_cast<std::size_t>(src) * p.cpu->n());
      for (u32 j = 0; j < src; ++j) {
        const u32 q = p.cpu->modulus(s.ids[j]).q;
        for (u32 i = 0; i < p.cpu->n(); ++i)
          w[static_cast<std::size_t>(j) * p.cpu->n() + i] =
              (i % 3 == 0) ? static_cast<u32>(rng()() % q) : (positive ? q / 2 : q / 2 + 1);
      }
      Twin x(p, s, w), y(p, d);
      for (const bool exact : {false, true}) {
        const auto cplan = p.cpu->make_bconv(s, d, exact);
        const auto gplan = p.gpu->make_bconv(s, d, exact);
        p.cpu->bconv_matmul(*cplan, x.c.cref(), y.c.ref());
        p.gpu->bconv_matmul(*gplan, x.g.cref(), y.g.ref());
        ASSERT_TRUE(same(p, y,
                         "extreme bconv_matmul src " + std::to_string(src) +
                             (positive ? " +" : " -") + (exact ? " exact" : "")));
      }
    }
  }
}

// Exact mode: CPU and CUDA agree word for word (random x, so v spans its whole range), and for
// x = a small signed integer the result is x itself mod every d_i (the overflow e*Q is gone).
TEST(CudaBackend, BConvExact) {
  struct Case {
    u32 log_n, src, dst;
  };
  for (const Case& c :
       {Case{12, 1, 2}, Case{12, 2, 3}, Case{13, 5, 8}, Case{14, 12, 12}, Case{14, 13, 17},
        Case{15, 24, 31}, Case{16, 12, 48}, Case{16, 4, 60}, Case{16, 36, 24}, Case{16, 12, 35}}) {
    Pair& p = backends(c.log_n);
    const Basis all = random_basis(c.src + c.dst);
    const Basis s = all.slice(0, c.src), d = all.slice(c.src, c.dst);
    const auto cplan = p.cpu->make_bconv(s, d, true);
    const auto gplan = p.gpu->make_bconv(s, d, true);
    Twin x(p, s), y(p, d);
    const std::string l = " src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) +
                          " N=2^" + std::to_string(c.log_n);
    p.cpu->bconv(*cplan, x.c.cref(), y.c.ref());
    p.gpu->bconv(*gplan, x.g.cref(), y.g.ref());
    ASSERT_TRUE(same(p, y, "exact bconv" + l));
    p.cpu->bconv_matmul(*cplan, x.c.cref(), y.c.ref());
    p.gpu->bconv_matmul(*gplan, x.g.cref(), y.g.ref());
    ASSERT_TRUE(same(p, y, "exact bconv_matmul" + l));

    // Small signed integers: |x| < min(Q, 2^60) / 4 keeps them far from the +-Q/2 ties.
    double log2_q = 0;
    for (u32 j = 0; j < s.size; ++j)
      log2_q += std::log2(static_cast<double>(p.cpu->modulus(s.ids[j]).q));
    const i64 lim = i64{1} << static_cast<u32>(std::min(58.0, log2_q - 2.0));
    const u32 n = p.cpu->n();
    std::vector<i64> ints(n);
    std::uniform_int_distribution<i64> dist(-lim + 1, lim - 1);
    for (auto& v : ints)
      v = dist(rng());
    const auto residues = [&](const Basis& b) {
      std::vector<u32> w(static_cast<std::size_t>(b.size) * n);
      for (u32 j = 0; j < b.size; ++j) {
        const i64 q = p.cpu->modulus(b.ids[j]).q;
        for (u32 i = 0; i < n; ++i)
          w[static_cast<std::size_t>(j) * n + i] = static_cast<u32>(((ints[i] % q) + q) % q);
      }
      return w;
    };
    Twin xi(p, s, residues(s));
    p.gpu->bconv(*gplan, xi.g.cref(), y.g.ref());
    std::vector<u32> got(y.g.words());
    p.gpu->download(y.g.cref(), got.data());
    const std::vector<u32> expect = residues(d);
    ASSERT_EQ(got, expect) << "exact bconv of small integers" << l;
  }
}

// bconv_matmul_batch: every job of a batch gives the words of its own bconv_matmul on the CPU:
// ModUp-like runs of one source into several destinations, exact ModDown-like pairs, batches over
// kMaxBConvBatch (several launches), mixed exactness and the tile kernel (one launch per job).
TEST(CudaBackend, BConvMatmulBatch) {
  struct Case {
    u32 log_n, jobs, src;
    bool exact, mixed;
    u32 blocked, tensor;
  };
  for (const Case& c : {Case{16, 7, 12, false, false, 1, 1}, Case{16, 2, 12, true, false, 1, 1},
                        Case{13, 20, 5, false, false, 1, 1}, Case{13, 3, 14, false, true, 1, 1},
                        Case{12, 4, 36, true, false, 1, 1}, Case{12, 3, 12, false, false, 0, 0},
                        Case{16, 7, 12, false, false, 1, 0}, Case{13, 20, 5, true, false, 1, 0}}) {
    Pair& p = backends(c.log_n);
    cuda::Tuning t;
    t.bconv.blocked = c.blocked;
    t.bconv.tensor = c.tensor;
    cuda::set_tuning(*p.gpu, t);
    const Basis s = random_basis(c.src);
    std::vector<Basis> dsts;
    std::vector<std::shared_ptr<const BConvPlan>> cplans, gplans;
    std::vector<Twin> outs;
    outs.reserve(c.jobs);
    Twin x(p, s);
    std::vector<PrimeId> rest;  // destinations are disjoint from the source, as in ModUp
    for (u32 id = 0; id < kPrimes; ++id)
      if (s.find(static_cast<PrimeId>(id)) < 0) rest.push_back(static_cast<PrimeId>(id));
    for (u32 k = 0; k < c.jobs; ++k) {
      const u32 dst = 1 + static_cast<u32>(rng()() % std::min<std::size_t>(40, rest.size()));
      std::shuffle(rest.begin(), rest.end(), rng());
      const Basis d(std::span<const PrimeId>(rest.data(), dst));
      const bool exact = c.mixed ? (k % 2 == 1) : c.exact;
      cplans.push_back(p.cpu->make_bconv(s, d, exact));
      gplans.push_back(p.gpu->make_bconv(s, d, exact));
      outs.emplace_back(p, d);
    }
    std::vector<BConvJob> gjobs;
    for (u32 k = 0; k < c.jobs; ++k) {
      p.cpu->bconv_matmul(*cplans[k], x.c.cref(), outs[k].c.ref());
      gjobs.push_back({gplans[k].get(), x.g.cref(), outs[k].g.ref()});
    }
    p.gpu->bconv_matmul_batch(gjobs);
    for (u32 k = 0; k < c.jobs; ++k)
      ASSERT_TRUE(same(p, outs[k],
                       "bconv_matmul_batch job " + std::to_string(k) + " of " +
                           std::to_string(c.jobs) + " src " + std::to_string(c.src) +
                           (c.exact ? " exact" : "") + (c.mixed ? " mixed" : "") + " blocked " +
                           std::to_string(c.blocked) + " tensor " + std::to_string(c.tensor)));
    cuda::set_tuning(*p.gpu, cuda::Tuning{});
  }
  Pair& p = backends(12);
  const Basis all = random_basis(7);
  const Basis s = all.slice(0, 4), d = all.slice(4, 3);
  const auto plan = p.gpu->make_bconv(s, d);
  Twin x(p, s), y(p, d);
  const BConvJob same_out[] = {{plan.get(), x.g.cref(), y.g.ref()},
                               {plan.get(), x.g.cref(), y.g.ref()}};
  EXPECT_THROW(p.gpu->bconv_matmul_batch(same_out), ParameterError);
  const auto cpu_plan = p.cpu->make_bconv(s, d);
  const BConvJob foreign[] = {{cpu_plan.get(), x.g.cref(), y.g.ref()}};
  EXPECT_THROW(p.gpu->bconv_matmul_batch(foreign), ParameterError);
}

TEST(CudaBackend, Errors) {
  Pair& p = backends(12);
  Backend& G = *p.gpu;
  RnsPoly a = G.make_poly(random_basis(3)), b = G.make_poly(random_basis(4));
  RnsPoly o = G.make_poly(a.basis());
  EXPECT_THROW(G.add(a.cref(), b.cref(), o.ref()), ParameterError);
  EXPECT_THROW(G.mul(a.cref(), a.cref(), b.ref()), ParameterError);
  EXPECT_THROW(G.mul_scalar(a.cref(), std::vector<u32>{1, 2}, o.ref()), ParameterError);
  EXPECT_THROW(G.automorphism(a.cref(), 4, o.ref()), ParameterError);
  EXPECT_THROW(G.automorphism(a.cref(), 5, a.ref()), ParameterError);  // aliasing
  const std::vector<PolyRef> two{a.ref(), b.ref()};
  EXPECT_THROW(G.ntt(two, std::vector<u32>{1, 1, 1}), ParameterError);
  const auto cpu_plan = p.cpu->make_bconv(a.basis(), b.basis());
  EXPECT_THROW(G.bconv(*cpu_plan, a.cref(), b.ref()), ParameterError);
  const auto plan = G.make_bconv(a.basis(), b.basis());
  EXPECT_THROW(G.bconv(*plan, b.cref(), a.ref()), ParameterError);
  EXPECT_THROW(G.allocator()->allocate(std::size_t{1} << 42), OutOfMemoryError);
  // The backend is still usable after the errors above.
  G.add(a.cref(), a.cref(), o.ref());
  G.synchronize();
}

}  // namespace
}  // namespace theo
