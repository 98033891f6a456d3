// bandwidth_probe: what a two-read, one-write stream (out = a + b mod q, HAdd's pattern) reaches
// on this GPU, and which load / store flavour, bytes in flight per thread and grid shape get there.
// A standalone executable (not a test, no library dependency): every CUDA call is checked, every
// output is verified on the device, times are CUDA events with the launches already queued behind
// a spinning kernel (so host enqueue time is not counted), median / p10 / p90 of `reps` samples.
//
//   bandwidth_probe [reps=50] [csv=path]
//
// Sizes: the three arrays of HAdd at 35 and 47 limbs (2 polys x L x 2^16 words each, 55 / 74 MB
// in all) and ~1 GB. L2 state: "hot" re-runs on the same buffers (what theo_bench's HAdd does);
// "cold" rotates over enough buffer sets that a rep's operands were last touched > 4 x L2 ago.
// Bandwidth counts 3 x array bytes (two reads, one write) over the median time.

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "cuda_probe_check.h"

namespace {

using u32 = std::uint32_t;
constexpr u32 kQ = 1073479681u;  // a 30-bit prime; the op is add_mod like theo's add kernel

enum class Ld { kPlain, kNc, kCs, kLu, kCg, kNc256, kEvictLast };
enum class St { kPlain, kCs, kCg };
// The PTX of each flavour, in the enums' order.
constexpr const char* kLdNames[] = {
    "ld", "ld.nc", "ld.cs", "ld.lu", "ld.cg", "ld.nc.L2::256B", "ld.L2::evict_last"};
constexpr const char* kStNames[] = {"st", "st.cs", "st.cg"};
const char* name(Ld l) {
  return kLdNames[static_cast<int>(l)];
}
const char* name(St s) {
  return kStNames[static_cast<int>(s)];
}

template <Ld kLd>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (kLd == Ld::kPlain) return *p;
  if constexpr (kLd == Ld::kNc) return __ldg(p);
  if constexpr (kLd == Ld::kCs) return __ldcs(p);
  if constexpr (kLd == Ld::kLu) return __ldlu(p);
  if constexpr (kLd == Ld::kCg) return __ldcg(p);
  if constexpr (kLd == Ld::kNc256) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  }
  if constexpr (kLd == Ld::kEvictLast) {
    uint4 v;
    asm volatile(
        "{\n\t.reg .b64 pol;\n\t"
        "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
        "ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], pol;\n\t}"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
  }
  return uint4{};
}

template <St kSt>
__device__ __forceinline__ void store(uint4* p, uint4 v) {
  if constexpr (kSt == St::kPlain) *p = v;
  if constexpr (kSt == St::kCs) __stcs(p, v);
  if constexpr (kSt == St::kCg) __stcg(p, v);
}

__device__ __forceinline__ u32 add_q(u32 a, u32 b) {
  const u32 s = a + b;
  return s >= kQ ? s - kQ : s;
}
__device__ __forceinline__ uint4 add_q(uint4 a, uint4 b) {
  return make_uint4(add_q(a.x, b.x), add_q(a.y, b.y), add_q(a.z, b.z), add_q(a.w, b.w));
}

// out = a + b on the kU vectors first, first + step, ... (those below total): all 2 kU loads
// issued before the first add.
template <Ld kLd, St kSt, int kU>
__device__ __forceinline__ void add_vectors(const uint4* __restrict__ a,
                                            const uint4* __restrict__ b, uint4* __restrict__ out,
                                            size_t total, size_t first, size_t step) {
  uint4 x[kU], y[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const size_t v = first + u * step;
    if (v < total) x[u] = load<kLd>(a + v), y[u] = load<kLd>(b + v);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const size_t v = first + u * step;
    if (v < total) store<kSt>(out + v, add_q(x[u], y[u]));
  }
}

// Grid-stride ("persistent"): grid = k x SMs blocks, kU vectors per thread per step.
template <Ld kLd, St kSt, int kU>
__global__ void __launch_bounds__(256)
    stride_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b, uint4* __restrict__ out,
                  size_t total) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t v0 = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; v0 < total;
       v0 += kU * stride)
    add_vectors<kLd, kSt, kU>(a, b, out, total, v0, stride);
}

// One-shot: each thread kU vectors (block-contiguous chunks), grid covers the arrays once.
template <Ld kLd, St kSt, int kU>
__global__ void __launch_bounds__(256)
    oneshot_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b,
                   uint4* __restrict__ out, size_t total) {
  const size_t base = blockIdx.x * static_cast<size_t>(blockDim.x) * kU + threadIdx.x;
  add_vectors<kLd, kSt, kU>(a, b, out, total, base, blockDim.x);
}

__global__ void copy_kernel(const uint4* __restrict__ a, uint4* __restrict__ out, size_t total) {
  const size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (v < total) out[v] = a[v];
}

__global__ void fill_kernel(uint4* p, size_t total, u32 seed) {
  const size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (v >= total) return;
  u32 w[4];
  for (int k = 0; k < 4; ++k) {
    u32 h = static_cast<u32>(v * 4 + k) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    w[k] = h % kQ;
  }
  p[v] = make_uint4(w[0], w[1], w[2], w[3]);
}

__global__ void verify_kernel(const uint4* a, const uint4* b, const uint4* out, size_t total,
                              unsigned long long* bad) {
  const size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (v >= total) return;
  const uint4 want = add_q(a[v], b[v]), got = out[v];
  if (want.x != got.x || want.y != got.y || want.z != got.z || want.w != got.w)
    atomicAdd(bad, 1ull);
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

struct Stats {
  double med, p10, p90;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double f) {
    const double x = f * static_cast<double>(v.size() - 1);
    const size_t i = static_cast<size_t>(x);
    const double r = x - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] * (1 - r) + v[i + 1] * r : v[i];
  };
  return {at(0.5), at(0.1), at(0.9)};
}

// Times reps calls of enqueue(rep) with the launches queued behind a spinning kernel; pre(rep) is
// issued before each rep's start event (not timed).
Stats time_us(cudaStream_t s, int reps, const std::function<void(int)>& pre,
              const std::function<void(int)>& enqueue) {
  for (int w = 0; w < 5; ++w) {
    pre(w);
    enqueue(w);
  }
  CK(cudaStreamSynchronize(s));
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev)
    CK(cudaEventCreate(&e));
  spin_kernel<<<1, 1, 0, s>>>(2'000'000ull + 60'000ull * reps);
  CK(cudaGetLastError());
  for (int r = 0; r < reps; ++r) {
    pre(r);
    CK(cudaEventRecord(ev[2 * r], s));
    enqueue(r);
    CK(cudaEventRecord(ev[2 * r + 1], s));
  }
  CK(cudaStreamSynchronize(s));
  std::vector<double> us(reps);
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    us[r] = ms * 1e3;
  }
  for (auto& e : ev)
    CK(cudaEventDestroy(e));
  return stats(us);
}

struct Set {
  uint4 *a, *b, *out;
};

struct Probe {
  cudaStream_t s;
  int sms;
  int reps;
  FILE* csv;
  unsigned long long* bad;

  // One measured row: prints to the CSV, returns the median in us.
  double row(const char* size, const char* l2, const std::string& variant, size_t vecs,
             const Stats& t) {
    const double bytes = 3.0 * 16.0 * static_cast<double>(vecs);
    if (csv)
      std::fprintf(csv, "%s,%s,%s,%.3f,%.3f,%.3f,%.1f\n", size, l2, variant.c_str(), t.med, t.p10,
                   t.p90, bytes / (t.med * 1e3));
    return t.med;
  }

  void check(const Set& st, size_t vecs, const std::string& what) {
    CK(cudaMemsetAsync(bad, 0, sizeof(*bad), s));
    verify_kernel<<<static_cast<unsigned>((vecs + 255) / 256), 256, 0, s>>>(st.a, st.b, st.out,
                                                                            vecs, bad);
    CK(cudaGetLastError());
    unsigned long long h = 0;
    CK(cudaMemcpyAsync(&h, bad, sizeof(h), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (h != 0) {
      std::fprintf(stderr, "WRONG OUTPUT: %s (%llu bad vectors)\n", what.c_str(), h);
      std::exit(EXIT_FAILURE);
    }
  }
};

template <Ld kLd, St kSt, int kU>
void launch(bool stride, int blocks_per_sm, int sms, const Set& st, size_t vecs, cudaStream_t s) {
  if (stride) {
    stride_kernel<kLd, kSt, kU><<<blocks_per_sm * sms, 256, 0, s>>>(st.a, st.b, st.out, vecs);
  } else {
    const size_t per_block = 256 * static_cast<size_t>(kU);
    oneshot_kernel<kLd, kSt, kU>
        <<<static_cast<unsigned>((vecs + per_block - 1) / per_block), 256, 0, s>>>(st.a, st.b,
                                                                                   st.out, vecs);
  }
  CK(cudaGetLastError());
}

using Launcher = void (*)(bool, int, int, const Set&, size_t, cudaStream_t);

template <Ld kLd, St kSt>
Launcher by_u(int u) {
  switch (u) {
    case 1:
      return launch<kLd, kSt, 1>;
    case 2:
      return launch<kLd, kSt, 2>;
    case 4:
      return launch<kLd, kSt, 4>;
    default:
      return launch<kLd, kSt, 8>;
  }
}
template <Ld kLd>
Launcher by_st(St st, int u) {
  switch (st) {
    case St::kPlain:
      return by_u<kLd, St::kPlain>(u);
    case St::kCs:
      return by_u<kLd, St::kCs>(u);
    default:
      return by_u<kLd, St::kCg>(u);
  }
}
// by_st<ld> of every Ld, in the enum's order.
template <std::size_t... kLds>
constexpr auto by_ld(std::index_sequence<kLds...>) {
  return std::array{&by_st<static_cast<Ld>(kLds)>...};
}
Launcher pick(Ld ld, St st, int u) {
  static constexpr auto kByLd = by_ld(std::make_index_sequence<std::size(kLdNames)>());
  return kByLd[static_cast<std::size_t>(ld)](st, u);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  FILE* csv = argc > 2 ? std::fopen(argv[2], "w") : nullptr;
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, dev));
  std::printf("bandwidth_probe: %s, %d SMs, L2 %.1f MiB, %d reps per row\n", p.name,
              p.multiProcessorCount, p.l2CacheSize / 1048576.0, reps);
  if (csv) std::fprintf(csv, "size,l2,variant,median_us,p10_us,p90_us,GBps\n");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long* bad = nullptr;
  CK(cudaMalloc(&bad, sizeof(*bad)));
  Probe pr{s, p.multiProcessorCount, reps, csv, bad};

  struct Size {
    const char* label;
    size_t vecs;  // 16-byte vectors per array
  };
  const size_t n16 = 65536 / 4;
  const std::vector<Size> sizes = {
      {"55MB(L=35)", 2 * 35 * n16}, {"74MB(L=47)", 2 * 47 * n16}, {"1GB", (size_t{1} << 30) / 48}};
  const size_t l2 = static_cast<size_t>(p.l2CacheSize);
  const std::vector<Ld> lds = {Ld::kPlain, Ld::kNc, Ld::kCs, Ld::kLu, Ld::kNc256, Ld::kEvictLast};
  const std::vector<St> sts = {St::kPlain, St::kCs};
  const auto none = [](int) {};

  std::printf("\n%-11s %-4s %-58s %8s %8s %8s %8s\n", "size", "L2", "variant", "med_us", "p10",
              "p90", "GB/s");
  for (const Size& sz : sizes) {
    const size_t bytes = sz.vecs * 16;
    // Cold: enough sets that one rep's operands were last touched > 4 x L2 bytes ago.
    const int sets_cold = static_cast<int>(std::max<size_t>(1, (4 * l2) / (3 * bytes) + 1));
    std::vector<Set> sets(sets_cold);
    for (int k = 0; k < sets_cold; ++k) {
      CK(cudaMalloc(&sets[k].a, bytes));
      CK(cudaMalloc(&sets[k].b, bytes));
      CK(cudaMalloc(&sets[k].out, bytes));
      const unsigned g = static_cast<unsigned>((sz.vecs + 255) / 256);
      fill_kernel<<<g, 256, 0, s>>>(sets[k].a, sz.vecs, 17u * k + 1);
      fill_kernel<<<g, 256, 0, s>>>(sets[k].b, sz.vecs, 31u * k + 7);
      CK(cudaMemsetAsync(sets[k].out, 0xff, bytes, s));
    }
    CK(cudaStreamSynchronize(s));
    struct Best {
      double us = 1e30;
      std::string what;
    };
    for (const bool cold : {false, true}) {
      const int nsets = cold ? sets_cold : 1;
      const char* l2s = cold ? "cold" : "hot";
      Best best;
      const auto report = [&](const std::string& v, const Stats& t, bool print) {
        const double us = pr.row(sz.label, l2s, v, sz.vecs, t);
        if (us < best.us) best = {us, v};
        if (print)
          std::printf("%-11s %-4s %-58s %8.2f %8.2f %8.2f %8.0f\n", sz.label, l2s, v.c_str(), t.med,
                      t.p10, t.p90, 48.0 * sz.vecs / (t.med * 1e3));
      };
      // Reference: a 1R1W copy of the same array size (counts 2 x bytes; scaled to 3 arrays'
      // worth in the GB/s column would be wrong, so print its own rate).
      {
        const Stats t = time_us(s, reps, none, [&](int r) {
          const Set& st = sets[r % nsets];
          copy_kernel<<<static_cast<unsigned>((sz.vecs + 255) / 256), 256, 0, s>>>(st.a, st.out,
                                                                                   sz.vecs);
          CK(cudaGetLastError());
        });
        std::printf("%-11s %-4s %-58s %8.2f %8.2f %8.2f %8.0f (1R1W)\n", sz.label, l2s,
                    "copy a->out (reference, 2 x bytes)", t.med, t.p10, t.p90,
                    32.0 * sz.vecs / (t.med * 1e3));
        if (csv)
          std::fprintf(csv, "%s,%s,copy_1R1W,%.3f,%.3f,%.3f,%.1f\n", sz.label, l2s, t.med, t.p10,
                       t.p90, 32.0 * sz.vecs / (t.med * 1e3));
      }
      for (const Ld ld : lds)
        for (const St st : sts)
          for (const int u : {1, 2, 4})
            for (const int grid : {0, 2, 8}) {  // 0 = one-shot, else blocks per SM
              const Launcher f = pick(ld, st, u);
              const std::string v = std::string(name(ld)) + " " + name(st) +
                                    " U=" + std::to_string(u) +
                                    (grid ? " grid=" + std::to_string(grid) + "xSM" : " oneshot");
              const Stats t = time_us(s, reps, none, [&](int r) {
                f(grid != 0, grid, pr.sms, sets[r % nsets], sz.vecs, s);
              });
              pr.check(sets[0], sz.vecs, v);
              const bool print =
                  (u == 1 && grid == 0) || (ld == Ld::kPlain && st == St::kPlain && u == 4);
              report(v, t, print);
            }
      // theo_bench's HAdd: its EventTimer holds the stream with a kernel before each op, and the
      // op allocates its two output polys from a stream-ordered pool (freed after the kernel)
      // inside the events. Here: a 20 us spin before every rep (untimed), then the kernel alone
      // (fixed output), or two pool allocations + the kernel on each half + two frees. Kernel:
      // ld.nc st.cs U=1 one-shot.
      {
        cudaMemPool_t pool;
        cudaMemPoolProps pp{};
        pp.allocType = cudaMemAllocationTypePinned;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = dev;
        CK(cudaMemPoolCreate(&pool, &pp));
        unsigned long long thr = ~0ull;
        CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
        const Launcher f = pick(Ld::kNc, St::kCs, 1);
        for (const int mode : {0, 1, 2}) {
          const auto spin = [&](int) {
            if (mode == 0) return;
            spin_kernel<<<1, 1, 0, s>>>(20'000ull);
            CK(cudaGetLastError());
          };
          const Stats t = time_us(s, reps, spin, [&](int r) {
            const Set& st = sets[r % nsets];
            if (mode < 2) {
              f(false, 0, pr.sms, st, sz.vecs, s);
              return;
            }
            void *o0 = nullptr, *o1 = nullptr;
            CK(cudaMallocFromPoolAsync(&o0, bytes / 2, pool, s));
            CK(cudaMallocFromPoolAsync(&o1, bytes / 2, pool, s));
            Set h0 = st, h1 = st;
            h0.out = static_cast<uint4*>(o0);
            h1.a += sz.vecs / 2, h1.b += sz.vecs / 2, h1.out = static_cast<uint4*>(o1);
            f(false, 0, pr.sms, h0, sz.vecs / 2, s);
            f(false, 0, pr.sms, h1, sz.vecs / 2, s);
            CK(cudaFreeAsync(o0, s));
            CK(cudaFreeAsync(o1, s));
          });
          const char* v = mode == 0   ? "ld.nc st.cs U=1 oneshot, back to back"
                          : mode == 1 ? "  same, 20 us spin before each rep"
                                      : "  spin + 2 pool allocs + 2 launches + 2 frees";
          std::printf("%-11s %-4s %-58s %8.2f %8.2f %8.2f %8.0f\n", sz.label, l2s, v, t.med, t.p10,
                      t.p90, 48.0 * sz.vecs / (t.med * 1e3));
          if (csv)
            std::fprintf(csv, "%s,%s,%s,%.3f,%.3f,%.3f,%.1f\n", sz.label, l2s, v, t.med, t.p10,
                         t.p90, 48.0 * sz.vecs / (t.med * 1e3));
        }
        CK(cudaMemPoolDestroy(pool));
      }
      std::printf("%-11s %-4s BEST %-53s %8.2f us = %.0f GB/s\n", sz.label, l2s, best.what.c_str(),
                  best.us, 48.0 * sz.vecs / (best.us * 1e3));
    }
    for (Set& st : sets) {
      CK(cudaFree(st.a));
      CK(cudaFree(st.b));
      CK(cudaFree(st.out));
    }
  }
  if (csv) std::fclose(csv);
  CK(cudaFree(bad));
  CK(cudaStreamDestroy(s));
  std::printf("done\n");
  return 0;
}
