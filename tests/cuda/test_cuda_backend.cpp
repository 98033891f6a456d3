// Bit-exactness of the CUDA backend against the CPU reference backend: every ring op, same random
// inputs on both, identical words required. The grid samples N = 2^12..2^16 and limb counts 1..60
// (odd, non-power-of-two, scattered prime ids) so that the suite runs in well under two minutes.
// This file: transfers, element-wise ops, the tensor, key_mult, automorphisms and the errors; the
// NTT in test_cuda_ntt.cpp, BConv in test_cuda_bconv.cpp (one binary, backend_grid.h).

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "cuda/backend_grid.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/backend.h"

namespace theo {
namespace {

using namespace cuda_backend_test;

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
