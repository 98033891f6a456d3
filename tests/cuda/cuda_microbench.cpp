// Kernel micro-benchmarks of the CUDA backend: one JSON object per line with the median GPU time
// (CUDA events around each call on the backend's stream) and the achieved bandwidth counted with
// the fewest bytes each op must move (every operand read once, every result written once).
//   theo_cuda_microbench [log_n=16] [reps=30] [--sweep]   (--sweep: NTT tile/thread variants)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "probe_poly.h"
#include "theo/backend/factory.h"
#include "theo/math/primes.h"
#include "theo/ring/automorphism.h"

namespace {

using namespace theo;

struct Timer {
  cudaStream_t s;
  int reps;
  double median_us(const std::function<void()>& fn) {
    for (int i = 0; i < 3; ++i)
      fn();
    std::vector<float> t;
    cudaEvent_t a, b;
    THEO_CUDA_CHECK(cudaEventCreate(&a));
    THEO_CUDA_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < reps; ++i) {
      THEO_CUDA_CHECK(cudaEventRecord(a, s));
      fn();
      THEO_CUDA_CHECK(cudaEventRecord(b, s));
      THEO_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      THEO_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms * 1000.0f);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

void report(const char* op, u32 log_n, u32 limbs, const std::string& extra, double us,
            double bytes) {
  std::printf(
      "{\"op\":\"%s\",\"log_n\":%u,\"limbs\":%u%s,\"median_us\":%.2f,\"bytes_min\":%.0f,"
      "\"gb_per_s\":%.1f}\n",
      op, log_n, limbs, extra.c_str(), us, bytes, bytes / (us * 1e3));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const u32 log_n = argc > 1 ? static_cast<u32>(std::atoi(argv[1])) : 16;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  const bool sweep = argc > 3 && std::strcmp(argv[3], "--sweep") == 0;
  if (!cuda_available()) {
    std::printf("no usable CUDA GPU\n");
    return 77;
  }
  RingParams ring;
  ring.log_n = log_n;
  ring.primes = find_ntt_primes(log_n, 30, 64);
  auto be = cuda::make_backend(ring);
  Backend& G = *be;
  Timer tm{cuda::stream_of(G), reps};
  std::printf("{\"device\":\"%s\"}\n", G.name().c_str());
  const double n = static_cast<double>(G.n());
  std::mt19937 rng(1);
  auto random_poly = [&](const Basis& b) { return probe::random_poly(G, b, rng); };

  // THEO_MB_LIMBS=48 (say) restricts the limb counts, e.g. for a profiler run.
  std::vector<u32> limb_counts{12, 24, 48};
  if (const char* env = std::getenv("THEO_MB_LIMBS"))
    limb_counts = {static_cast<u32>(std::atoi(env))};
  for (const u32 L : limb_counts) {
    const Basis b = Basis::range(0, L);
    RnsPoly x = random_poly(b), y = random_poly(b), z = random_poly(b);
    RnsPoly d0 = G.make_poly(b), d1 = G.make_poly(b), d2 = G.make_poly(b);
    const double poly_bytes = 4.0 * n * L;
    const std::vector<PolyRef> one{x.ref()};
    report("ntt", log_n, L, "", tm.median_us([&] { G.ntt(one); }), 2 * poly_bytes);
    report("intt", log_n, L, "", tm.median_us([&] { G.intt(one); }), 2 * poly_bytes);
    const std::vector<PolyRef> two{x.ref(), y.ref()};
    report("ntt", log_n, L, ",\"batch\":2", tm.median_us([&] { G.ntt(two); }), 4 * poly_bytes);
    // Four polys: the shape of ModUp's NTT at the top level (4 digits of ~48 limbs), several
    // waves, against the one-wave single poly.
    RnsPoly u = random_poly(b);
    const std::vector<PolyRef> four{x.ref(), y.ref(), z.ref(), u.ref()};
    report("ntt", log_n, L, ",\"batch\":4", tm.median_us([&] { G.ntt(four); }), 8 * poly_bytes);
    report("intt", log_n, L, ",\"batch\":4", tm.median_us([&] { G.intt(four); }), 8 * poly_bytes);
    for (const u32 otf : {0u, 1u, 2u, 4u}) {
      // Row twiddles: how many of the second pass's stages make them on the fly (0: the table).
      cuda::Tuning t;
      t.ntt.row_otf = otf;
      cuda::set_tuning(G, t);
      const std::string tag = ",\"row_otf\":" + std::to_string(otf);
      report("ntt", log_n, L, tag, tm.median_us([&] { G.ntt(one); }), 2 * poly_bytes);
      report("intt", log_n, L, tag, tm.median_us([&] { G.intt(one); }), 2 * poly_bytes);
      report("ntt", log_n, L, ",\"batch\":4" + tag, tm.median_us([&] { G.ntt(four); }),
             8 * poly_bytes);
      report("intt", log_n, L, ",\"batch\":4" + tag, tm.median_us([&] { G.intt(four); }),
             8 * poly_bytes);
    }
    cuda::set_tuning(G, cuda::Tuning{});
    {
      // The shared-memory tile kernels (before the register-resident ones), for before/after.
      cuda::Tuning t;
      t.ntt.fast = 0;
      cuda::set_tuning(G, t);
      report("ntt", log_n, L, ",\"kernels\":\"tile\"", tm.median_us([&] { G.ntt(one); }),
             2 * poly_bytes);
      report("intt", log_n, L, ",\"kernels\":\"tile\"", tm.median_us([&] { G.intt(one); }),
             2 * poly_bytes);
      cuda::set_tuning(G, cuda::Tuning{});
    }
    if (sweep) {
      for (u32 radix : {3u, 4u})
        for (u32 tile : {11u, 12u, 13u})
          for (u32 th : {128u, 256u, 512u}) {
            cuda::Tuning t;
            t.ntt.radix_log = radix;
            t.ntt.tile_log = tile;
            t.ntt.threads = th;
            cuda::set_tuning(G, t);
            report("ntt", log_n, L,
                   ",\"radix_log\":" + std::to_string(radix) + ",\"tile_log\":" +
                       std::to_string(tile) + ",\"threads\":" + std::to_string(th),
                   tm.median_us([&] { G.ntt(one); }), 2 * poly_bytes);
          }
      cuda::set_tuning(G, cuda::Tuning{});
    }
    report("add", log_n, L, "", tm.median_us([&] { G.add(x.cref(), y.cref(), z.ref()); }),
           3 * poly_bytes);
    report("mul", log_n, L, "", tm.median_us([&] { G.mul(x.cref(), y.cref(), z.ref()); }),
           3 * poly_bytes);
    const std::vector<u32> k(L, 3);
    report("mul_scalar", log_n, L, "", tm.median_us([&] { G.mul_scalar(x.cref(), k, z.ref()); }),
           2 * poly_bytes);
    report("tensor", log_n, L, "", tm.median_us([&] {
      G.tensor(x.cref(), y.cref(), z.cref(), x.cref(), d0.ref(), d1.ref(), d2.ref());
    }),
           7 * poly_bytes);
    {
      std::vector<RnsPoly> keep;
      std::vector<ConstPolyRef> dg, kb, ka;
      for (int j = 0; j < 3; ++j) {
        keep.push_back(random_poly(b));
        keep.push_back(random_poly(b));
        keep.push_back(random_poly(b));
        dg.push_back(keep[keep.size() - 3].cref());
        kb.push_back(keep[keep.size() - 2].cref());
        ka.push_back(keep.back().cref());
      }
      report("key_mult", log_n, L, ",\"dnum\":3",
             tm.median_us([&] { G.key_mult(dg, kb, ka, d0.ref(), d1.ref()); }), 11 * poly_bytes);
    }
    const u32 g = galois_element_for_rotation(1234, log_n);
    report("automorphism", log_n, L, "",
           tm.median_us([&] { G.automorphism(x.cref(), g, z.ref()); }), 2 * poly_bytes);
    {
      const std::vector<ConstPolyRef> ins{x.cref(), y.cref(), d2.cref(), d1.cref()};
      const std::vector<u32> ks{g, galois_element_for_rotation(5, log_n),
                                galois_element_for_rotation(9, log_n),
                                galois_element_for_rotation(77, log_n)};
      report("automorphism_sum", log_n, L, ",\"terms\":4",
             tm.median_us([&] { G.automorphism_sum(ins, ks, z.ref(), true); }), 6 * poly_bytes);
    }
    // BConv: ModUp-like (12 -> L) and ModDown-like (L -> 12), on disjoint primes.
    {
      const Basis aux = Basis::range(L, 12);
      RnsPoly a = random_poly(aux), ab = G.make_poly(aux);
      const auto up = G.make_bconv(aux, b);
      const auto down = G.make_bconv(b, aux);
      report("bconv", log_n, L, ",\"src\":12,\"dst\":" + std::to_string(L),
             tm.median_us([&] { G.bconv(*up, a.cref(), z.ref()); }), 4.0 * n * (12 + L));
      report("bconv", log_n, L, ",\"src\":" + std::to_string(L) + ",\"dst\":12",
             tm.median_us([&] { G.bconv(*down, x.cref(), ab.ref()); }), 4.0 * n * (12 + L));
      report("bconv_matmul", log_n, L, ",\"src\":" + std::to_string(L) + ",\"dst\":12",
             tm.median_us([&] { G.bconv_matmul(*down, x.cref(), ab.ref()); }), 4.0 * n * (12 + L));
      {
        // The small-source kernel (not the default) against the tile kernel on the ModUp-like case,
        // and the exact ModDown-shaped conversion (12 -> L) both ways.
        const auto up_exact = G.make_bconv(aux, b, true);
        report("bconv_exact", log_n, L, ",\"src\":12,\"dst\":" + std::to_string(L),
               tm.median_us([&] { G.bconv_matmul(*up_exact, a.cref(), z.ref()); }),
               4.0 * n * (12 + L));
        cuda::Tuning t;
        t.bconv.small_rows = 8;
        cuda::set_tuning(G, t);
        report("bconv", log_n, L,
               ",\"src\":12,\"dst\":" + std::to_string(L) + ",\"kernels\":\"small\"",
               tm.median_us([&] { G.bconv(*up, a.cref(), z.ref()); }), 4.0 * n * (12 + L));
        report("bconv_exact", log_n, L,
               ",\"src\":12,\"dst\":" + std::to_string(L) + ",\"kernels\":\"small\"",
               tm.median_us([&] { G.bconv_matmul(*up_exact, a.cref(), z.ref()); }),
               4.0 * n * (12 + L));
        cuda::set_tuning(G, cuda::Tuning{});
      }
      const auto down_exact = G.make_bconv(b, aux, true);
      report("bconv_exact", log_n, L, ",\"src\":" + std::to_string(L) + ",\"dst\":12",
             tm.median_us([&] { G.bconv(*down_exact, x.cref(), ab.ref()); }), 4.0 * n * (12 + L));
      if (sweep) {
        for (u32 tile : {4u, 8u, 16u})
          for (u32 th : {128u, 256u}) {
            cuda::Tuning t;
            t.bconv.dst_tile = tile;
            t.bconv.threads = th;
            cuda::set_tuning(G, t);
            const std::string ex =
                ",\"dst_tile\":" + std::to_string(tile) + ",\"threads\":" + std::to_string(th);
            report("bconv", log_n, L, ",\"src\":12,\"dst\":" + std::to_string(L) + ex,
                   tm.median_us([&] { G.bconv(*up, a.cref(), z.ref()); }), 4.0 * n * (12 + L));
            report("bconv", log_n, L, ",\"src\":" + std::to_string(L) + ",\"dst\":12" + ex,
                   tm.median_us([&] { G.bconv(*down, x.cref(), ab.ref()); }), 4.0 * n * (12 + L));
          }
        cuda::set_tuning(G, cuda::Tuning{});
      }
    }
  }
  G.synchronize();
  return 0;
}
