// Bit-exactness of the CUDA backend's basis conversion against the CPU reference backend: every
// BConv kernel on every shape class, extreme inputs for the accumulators, exact mode and batches
// of conversions.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "theo/ring/backend.h"

#include "cuda/backend_grid.h"

namespace theo {
namespace {

using namespace cuda_backend_test;

// A conversion from `src` to `dst` limbs at N = 2^log_n.
struct Case {
  u32 log_n, src, dst;
};

// s and d: `src` and `dst` distinct primes of the ring in random order; x over s (random words) and
// y over d on both backends.
struct Conversion {
  Conversion(Pair& p, u32 src, u32 dst, const Basis& all)
      : s(all.slice(0, src)), d(all.slice(src, dst)), x(p, s), y(p, d) {}
  Conversion(Pair& p, u32 src, u32 dst) : Conversion(p, src, dst, random_basis(src + dst)) {}
  Basis s, d;
  Twin x, y;
};

// bconv, then bconv_matmul of k.x into k.y by plans (exact or not) of each backend: the GPU's words
// are the CPU's after each (a failure names the op between prefix and suffix).
::testing::AssertionResult bconv_same(Pair& p, Conversion& k, bool exact, const std::string& prefix,
                                      const std::string& suffix) {
  const auto cplan = p.cpu->make_bconv(k.s, k.d, exact);
  const auto gplan = p.gpu->make_bconv(k.s, k.d, exact);
  p.cpu->bconv(*cplan, k.x.c.cref(), k.y.c.ref());
  p.gpu->bconv(*gplan, k.x.g.cref(), k.y.g.ref());
  if (::testing::AssertionResult r = same(p, k.y, prefix + "bconv" + suffix); !r) return r;
  p.cpu->bconv_matmul(*cplan, k.x.c.cref(), k.y.c.ref());
  p.gpu->bconv_matmul(*gplan, k.x.g.cref(), k.y.g.ref());
  return same(p, k.y, prefix + "bconv_matmul" + suffix);
}

std::string label(const Case& c) {
  return " src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) + " N=2^" +
         std::to_string(c.log_n);
}

TEST(CudaBackend, BConv) {
  for (const Case& c :
       {Case{12, 1, 1}, Case{12, 2, 3}, Case{13, 5, 8}, Case{14, 12, 12}, Case{14, 13, 17},
        Case{15, 24, 31}, Case{16, 12, 48}, Case{16, 4, 60}, Case{16, 36, 24}}) {
    Pair& p = backends(c.log_n);
    Conversion k(p, c.src, c.dst);
    ASSERT_TRUE(bconv_same(p, k, false, "", label(c)));
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
      Conversion k(p, c.src, c.dst);
      const std::string l = " src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) +
                            " blocked " + std::to_string(v.blocked) + " rows " +
                            std::to_string(v.small_rows) + " threads " + std::to_string(v.threads) +
                            " tensor " + std::to_string(v.tensor);
      for (const bool exact : {false, true})
        ASSERT_TRUE(bconv_same(p, k, exact, exact ? "exact " : "", l));
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
  for (const Case& c :
       {Case{12, 1, 2}, Case{12, 2, 3}, Case{13, 5, 8}, Case{14, 12, 12}, Case{14, 13, 17},
        Case{15, 24, 31}, Case{16, 12, 48}, Case{16, 4, 60}, Case{16, 36, 24}, Case{16, 12, 35}}) {
    Pair& p = backends(c.log_n);
    Conversion k(p, c.src, c.dst);
    const std::string l = label(c);
    ASSERT_TRUE(bconv_same(p, k, true, "exact ", l));
    const Basis& s = k.s;
    const Basis& d = k.d;
    Twin& y = k.y;
    const auto gplan = p.gpu->make_bconv(s, d, true);

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
  struct BatchCase {
    u32 log_n, jobs, src;
    bool exact, mixed;
    u32 blocked, tensor;
  };
  for (const BatchCase& c :
       {BatchCase{16, 7, 12, false, false, 1, 1}, BatchCase{16, 2, 12, true, false, 1, 1},
        BatchCase{13, 20, 5, false, false, 1, 1}, BatchCase{13, 3, 14, false, true, 1, 1},
        BatchCase{12, 4, 36, true, false, 1, 1}, BatchCase{12, 3, 12, false, false, 0, 0},
        BatchCase{16, 7, 12, false, false, 1, 0}, BatchCase{13, 20, 5, true, false, 1, 0}}) {
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

}  // namespace
}  // namespace theo
