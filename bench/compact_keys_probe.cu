// compact_keys_probe: KeyMult at the bootparam_40 shapes reading full switching keys against
// expanding their uniform halves `a` in the kernel from a seed (math/compact_expand.h), alone and
// beside a DRAM-bound copy or an integer-bound kernel on a second stream (what complementary
// pipelining runs KeyMult next to). Not wired into the key switcher: standalone kernels with the
// library's KeyMult arithmetic (one Montgomery product per digit and key half, as keymult.cu).
//
//   theo_compact_keys_probe [--reps R] [--out file.json] [--quick]   benchmark (JSON lines)
//   theo_compact_keys_probe --check                                  bit-exactness only
//
// Every run first checks, bit for bit: the GPU expansion against the CPU reference
// (compact_expand::expand_limb) for one key at every limb and digit and every round count, and
// every compact KeyMult output against the full-key KeyMult on the same (GPU-expanded, checked)
// keys. Exit 77 without a GPU, 1 on a mismatch. Times: CUDA events, median / p10 / p90.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_commit.h"
#include "cuda_probe_check.h"
#include "math/compact_expand.h"
#include "theo/math/modarith.h"
#include "theo/math/params.h"

namespace {

using theo::i32;
using theo::Modulus;
using theo::u32;
using theo::u64;
namespace ce = theo::compact_expand;

constexpr u32 kN = 1u << 16;
constexpr u32 kAux = 12;  // bootparam_40's alpha

// ---- device arithmetic: the library's KeyMult product (backend/cuda/arith.cuh) ----------------

__device__ __forceinline__ u32 mont_mul(u32 a, u32 w, const Modulus& m) {
  const u32 lo = a * w;
  const i32 hi = __mulhi(static_cast<i32>(a), static_cast<i32>(w));
  const i32 z = static_cast<i32>(lo * static_cast<u32>(m.qinv));
  return theo::canon(hi - __mulhi(z, static_cast<i32>(m.q)), m.q);
}

struct Shape {
  u32 limbs;   // Q limbs of the level; the key switch runs over limbs + kAux
  u32 digits;  // ceil(limbs / alpha)
  u32 keys;    // keys applied to the same digits (1: one key switch; > 1: hoisted rotations)
  u32 width() const { return limbs + kAux; }
  std::size_t poly_words() const { return static_cast<std::size_t>(width()) * kN; }
};

struct Args {
  const u32* x;   // digits [digits][width][N]
  const u32* kb;  // [keys][digits][width][N]
  const u32* ka;  // same (full keys only)
  u32* out0;      // [keys][width][N]
  u32* out1;
  const ce::Key* seeds;  // [keys]
  const Modulus* mods;   // [width]
  u32 digits, keys, n;
  std::size_t poly;  // width * n
};

// Full keys, 4 words per thread (keymult.cu's key_mult_kernel without its options): the next
// digit's words are loaded before this digit's products.
__global__ void __launch_bounds__(256) keymult_full(const __grid_constant__ Args a) {
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  const u32 limb = blockIdx.y;
  const Modulus m = a.mods[limb];
  const std::size_t off = static_cast<std::size_t>(limb) * a.n + idx;
  for (u32 r = 0; r < a.keys; ++r) {
    u32 s0[4] = {}, s1[4] = {};
    const std::size_t kbase = static_cast<std::size_t>(r) * a.digits * a.poly + off;
    uint4 xn = *reinterpret_cast<const uint4*>(a.x + off);
    uint4 bn = *reinterpret_cast<const uint4*>(a.kb + kbase);
    uint4 an = *reinterpret_cast<const uint4*>(a.ka + kbase);
    for (u32 k = 0; k < a.digits; ++k) {
      const uint4 x = xn, b = bn, c = an;
      if (k + 1 < a.digits) {
        const std::size_t o = (k + 1) * a.poly;
        xn = *reinterpret_cast<const uint4*>(a.x + off + o);
        bn = *reinterpret_cast<const uint4*>(a.kb + kbase + o);
        an = *reinterpret_cast<const uint4*>(a.ka + kbase + o);
      }
      const u32 xv[4] = {x.x, x.y, x.z, x.w}, bv[4] = {b.x, b.y, b.z, b.w},
                cv[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        s0[w] = theo::add_mod(s0[w], mont_mul(xv[w], bv[w], m), m.q);
        s1[w] = theo::add_mod(s1[w], mont_mul(xv[w], cv[w], m), m.q);
      }
    }
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      s0[w] = mont_mul(s0[w], m.r2_mod, m);
      s1[w] = mont_mul(s1[w], m.r2_mod, m);
    }
    const std::size_t o = static_cast<std::size_t>(r) * a.poly + off;
    *reinterpret_cast<uint4*>(a.out0 + o) = make_uint4(s0[0], s0[1], s0[2], s0[3]);
    *reinterpret_cast<uint4*>(a.out1 + o) = make_uint4(s1[0], s1[1], s1[2], s1[3]);
  }
}

template <int W>
__device__ __forceinline__ void load16(const u32* p, u32 (&v)[W]) {
#pragma unroll
  for (int i = 0; i < W / 4; ++i) {
    const uint4 t = reinterpret_cast<const uint4*>(p)[i];
    v[4 * i] = t.x, v[4 * i + 1] = t.y, v[4 * i + 2] = t.z, v[4 * i + 3] = t.w;
  }
}
template <int W>
__device__ __forceinline__ void store16(u32* p, const u32 (&v)[W]) {
#pragma unroll
  for (int i = 0; i < W / 4; ++i)
    reinterpret_cast<uint4*>(p)[i] = make_uint4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
}

// 16 words per thread (one ChaCha block of `a`). kRounds 0: `a` read from memory (the same
// mapping with full keys); else expanded from the key's seed, the key's digits in order sharing
// the spill pool of the thread's 16 positions.
template <int kRounds>
__global__ void __launch_bounds__(128) keymult_16(const __grid_constant__ Args a) {
  constexpr int W = 16;
  const u32 idx = (blockIdx.x * blockDim.x + threadIdx.x) * W;
  const u32 limb = blockIdx.y;
  const Modulus m = a.mods[limb];
  const ce::Sampler smp{m.q, m.r_mod};  // r_mod = 2^32 mod q = the rejection count
  // The first spill block before the digits when a warp (512 positions per digit) will likely
  // need one: computed in step by every lane instead of at each lane's first rejection (a warp
  // round per digit in which some lane has its first one). Warp-uniform (one limb per block).
  const bool eager = static_cast<float>(smp.t) * 2.3283064e-10f * 512.0f * a.digits >= 1.0f;
  const std::size_t off = static_cast<std::size_t>(limb) * a.n + idx;
  for (u32 r = 0; r < a.keys; ++r) {
    u32 s0[W] = {}, s1[W] = {};
    const std::size_t kbase = static_cast<std::size_t>(r) * a.digits * a.poly + off;
    ce::Key key{};
    ce::SpillPool pool;
    if constexpr (kRounds != 0) {
      key = a.seeds[r];
      if (eager) ce::refill<kRounds>(key, r, smp, idx / W, pool);
    }
    for (u32 k = 0; k < a.digits; ++k) {
      u32 x[W], b[W], c[W];
      load16(a.x + off + k * a.poly, x);
      load16(a.kb + kbase + k * a.poly, b);
      if constexpr (kRounds == 0) {
        load16(a.ka + kbase + k * a.poly, c);
      } else {
        ce::expand_block<kRounds>(key, r, k, smp, idx / W, pool, c);
      }
#pragma unroll
      for (int w = 0; w < W; ++w) {
        s0[w] = theo::add_mod(s0[w], mont_mul(x[w], b[w], m), m.q);
        s1[w] = theo::add_mod(s1[w], mont_mul(x[w], c[w], m), m.q);
      }
    }
#pragma unroll
    for (int w = 0; w < W; ++w) {
      s0[w] = mont_mul(s0[w], m.r2_mod, m);
      s1[w] = mont_mul(s1[w], m.r2_mod, m);
    }
    const std::size_t o = static_cast<std::size_t>(r) * a.poly + off;
    store16(a.out0 + o, s0);
    store16(a.out1 + o, s1);
  }
}

// Expansion alone: `a` of every (key, digit, limb) written to ka. grid (n / 16 / 128, width,
// keys); a thread walks the key's digits.
template <int kRounds>
__global__ void __launch_bounds__(128) expand_only(const __grid_constant__ Args a, u32* ka) {
  const u32 blk = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 limb = blockIdx.y, r = blockIdx.z;
  const Modulus m = a.mods[limb];
  const ce::Key key = a.seeds[r];
  ce::SpillPool pool;
  for (u32 k = 0; k < a.digits; ++k) {
    u32 c[16];
    ce::expand_block<kRounds>(key, r, k, ce::Sampler{m.q, m.r_mod}, blk, pool, c);
    store16(ka + (static_cast<std::size_t>(r) * a.digits + k) * a.poly +
                static_cast<std::size_t>(limb) * a.n + 16 * blk,
            c);
  }
}

// The companions on the second stream.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n16) {
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n16;
       i += static_cast<u64>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}
// Integer work in registers, like an NTT's butterflies: Montgomery products and modular sums.
__global__ void alu_kernel(u32* out, u32 iters, Modulus m) {
  u32 a = threadIdx.x + 1, b = blockIdx.x + 3, c = 7;
  for (u32 i = 0; i < iters; ++i) {
    const u32 t = mont_mul(a, b, m);
    a = theo::add_mod(t, c, m.q);
    b = theo::sub_mod(b, t, m.q) | 1u;
    c ^= a;
  }
  if (a == 0xFFFFFFFFu) out[0] = b ^ c;  // never true (a < q): keeps the loop
}

// ---- host ----------------------------------------------------------------------------------

struct Timing {
  double median, p10, p90;
};
Timing stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double p) {
    const double x = p * (v.size() - 1);
    const std::size_t i = static_cast<std::size_t>(x);
    return i + 1 < v.size() ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[i];
  };
  return {at(0.5), at(0.1), at(0.9)};
}

struct Buffers {
  Shape s;
  u32 *x = nullptr, *kb = nullptr, *ka = nullptr, *out0 = nullptr, *out1 = nullptr, *ref0 = nullptr,
      *ref1 = nullptr;
  ce::Key* seeds = nullptr;
  Modulus* mods = nullptr;
  std::vector<Modulus> host_mods;
  std::vector<ce::Key> host_seeds;
  Args args(bool full) const {
    return {x,      kb, full ? ka : nullptr, out0, out1, seeds, mods, s.digits,
            s.keys, kN, s.poly_words()};
  }
};

// The primes of a level of `limbs` Q limbs (the first main primes, then terminal ones, as
// bootparam_40's levels take them) and the auxiliary primes.
std::vector<u32> level_primes(u32 limbs) {
  const theo::ParameterSet p = theo::load_preset("bootparam_40");
  std::vector<u32> q;
  for (u32 i = 0; i < limbs; ++i) {
    const std::size_t m = p.main_primes.size();
    q.push_back(static_cast<u32>(i < m ? p.main_primes[i] : p.terminal_primes[i - m]));
  }
  for (u32 i = 0; i < kAux; ++i)
    q.push_back(static_cast<u32>(p.auxiliary_primes[i]));
  return q;
}

u32* dalloc(std::size_t words) {
  u32* p = nullptr;
  CK(cudaMalloc(&p, words * 4));
  return p;
}

void fill_random(u32* d, std::size_t poly_words, u32 polys, const std::vector<u32>& q,
                 std::mt19937_64& rng) {
  std::vector<u32> h(poly_words);
  for (u32 p = 0; p < polys; ++p) {
    for (std::size_t i = 0; i < poly_words; ++i)
      h[i] = static_cast<u32>(rng() % q[i / kN]);
    CK(cudaMemcpy(d + p * poly_words, h.data(), poly_words * 4, cudaMemcpyHostToDevice));
  }
}

template <int R>
void launch_expand(const Buffers& b, u32* ka, cudaStream_t st) {
  const dim3 grid(kN / 16 / 128, b.s.width(), b.s.keys);
  expand_only<R><<<grid, 128, 0, st>>>(b.args(false), ka);
  CK(cudaGetLastError());
}
void launch_expand_rounds(u32 rounds, const Buffers& b, u32* ka, cudaStream_t st) {
  if (rounds == 8) launch_expand<8>(b, ka, st);
  if (rounds == 12) launch_expand<12>(b, ka, st);
  if (rounds == 20) launch_expand<20>(b, ka, st);
}

// variant: "full4" (library mapping), "full16", "compact8", "compact12", "compact20".
void launch_keymult(const std::string& v, const Buffers& b, cudaStream_t st) {
  if (v == "full4") {
    keymult_full<<<dim3(kN / 4 / 256, b.s.width()), 256, 0, st>>>(b.args(true));
  } else {
    const dim3 grid(kN / 16 / 128, b.s.width());
    if (v == "full16") keymult_16<0><<<grid, 128, 0, st>>>(b.args(true));
    if (v == "compact8") keymult_16<8><<<grid, 128, 0, st>>>(b.args(false));
    if (v == "compact12") keymult_16<12><<<grid, 128, 0, st>>>(b.args(false));
    if (v == "compact20") keymult_16<20><<<grid, 128, 0, st>>>(b.args(false));
  }
  CK(cudaGetLastError());
}

bool equal_device(const u32* a, const u32* b, std::size_t words) {
  std::vector<u32> ha(words), hb(words);
  CK(cudaMemcpy(ha.data(), a, words * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, words * 4, cudaMemcpyDeviceToHost));
  return ha == hb;
}

// GPU expansion of key 0 (every digit and limb) against the CPU reference, threads over limbs.
bool check_expansion(const Buffers& b, u32 rounds) {
  launch_expand_rounds(rounds, b, b.ka, nullptr);
  CK(cudaDeviceSynchronize());
  const std::size_t words = static_cast<std::size_t>(b.s.digits) * b.s.poly_words();
  std::vector<u32> gpu(words), cpu(words);
  CK(cudaMemcpy(gpu.data(), b.ka, words * 4, cudaMemcpyDeviceToHost));
  std::vector<std::thread> pool;
  std::vector<int> bad(b.s.width(), 0);
  const u32 threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  for (u32 t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<u32> limb_words(static_cast<std::size_t>(b.s.digits) * kN);
      for (u32 limb = t; limb < b.s.width(); limb += threads) {
        ce::expand_limb(b.host_seeds[0], rounds, 0, b.s.digits, b.host_mods[limb].q, kN,
                        limb_words);
        for (u32 k = 0; k < b.s.digits; ++k)
          for (u32 i = 0; i < kN; ++i)
            cpu[k * b.s.poly_words() + static_cast<std::size_t>(limb) * kN + i] =
                limb_words[static_cast<std::size_t>(k) * kN + i];
      }
    });
  }
  for (auto& th : pool)
    th.join();
  return gpu == cpu;
}

std::string g_device;
std::vector<std::string> g_records;

void emit(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  g_records.push_back(json);
}

std::string date_utc() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// The spill pools at this shape, from the CPU reference over the level's primes: the fraction
// of pools (16 positions x the key's digits) that need a spill block, and the ChaCha blocks per
// 16 words a warp computes when its lanes compute their pools' blocks in step (digits + the most
// blocks any of its 32 lanes needs, over digits): the expected cost of the expansion.
void spill_record(const Shape& s, const std::vector<u32>& q, u32 rounds) {
  const ce::Key key{{1, 2, 3, 4, 5, 6, 7, 8}};
  u64 pools = 0, spilled = 0, warps = 0;
  double rounds_sum = 0;
  for (const u32 p : q) {
    const ce::Sampler smp = ce::make_sampler(p);
    u32 out[16];
    for (u32 w = 0; w < kN / 16 / 32; ++w) {
      u32 most = 0;
      for (u32 l = 0; l < 32; ++l) {
        ce::SpillPool pool;
        for (u32 k = 0; k < s.digits; ++k)
          ce::expand_block_rounds(rounds, key, 0, k, smp, w * 32 + l, pool, out);
        spilled += pool.blocks > 0;
        most = std::max(most, pool.blocks);
        ++pools;
      }
      rounds_sum += static_cast<double>(s.digits + most) / s.digits;
      ++warps;
    }
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"op\": \"spill_pools\", \"preset\": \"bootparam_40\", \"limbs\": %u, "
                "\"aux\": %u, \"digits\": %u, \"rounds\": %u, \"pools_with_spill\": %.5f, "
                "\"chacha_blocks_per_16_words\": %.4f, \"device\": \"cpu reference\", "
                "\"git_commit\": \"%s\"}",
                s.limbs, kAux, s.digits, rounds, static_cast<double>(spilled) / pools,
                rounds_sum / warps, THEO_BENCH_GIT_COMMIT);
  emit(buf);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  bool check_only = false, quick = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::atoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--check") {
      check_only = true;
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: theo_compact_keys_probe [--reps R] [--out file.json] [--quick] "
                   "[--check]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "theo_compact_keys_probe: no CUDA device, skipped\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  g_device = prop.name;
  std::fprintf(stderr, "theo_compact_keys_probe on %s, %d SMs, commit %s\n", prop.name,
               prop.multiProcessorCount, THEO_BENCH_GIT_COMMIT);

  std::vector<Shape> shapes = {{14, 2, 1}, {23, 2, 1}, {35, 3, 1},
                               {47, 4, 1}, {23, 2, 8}, {47, 4, 8}};
  if (check_only || quick) shapes = {{14, 2, 1}, {47, 4, 2}};
  const std::vector<u32> round_counts = {8, 12, 20};
  const std::vector<std::string> variants = {"full4", "full16", "compact8", "compact12",
                                             "compact20"};
  std::mt19937_64 rng(std::random_device{}());
  bool ok = true;
  cudaStream_t s1, s2;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t e0, e1, e2;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventCreate(&e2));

  for (const Shape& s : shapes) {
    Buffers b;
    b.s = s;
    const std::vector<u32> q = level_primes(s.limbs);
    for (const u32 p : q)
      b.host_mods.push_back(theo::make_modulus(p));
    for (u32 r = 0; r < s.keys; ++r) {
      ce::Key k{};
      for (u32& w : k.w)
        w = static_cast<u32>(rng());
      b.host_seeds.push_back(k);
    }
    const std::size_t pw = s.poly_words();
    const std::size_t key_words = static_cast<std::size_t>(s.keys) * s.digits * pw;
    b.x = dalloc(s.digits * pw);
    b.kb = dalloc(key_words);
    b.ka = dalloc(key_words);
    b.out0 = dalloc(s.keys * pw);
    b.out1 = dalloc(s.keys * pw);
    b.ref0 = dalloc(s.keys * pw);
    b.ref1 = dalloc(s.keys * pw);
    CK(cudaMalloc(&b.seeds, s.keys * sizeof(ce::Key)));
    CK(cudaMalloc(&b.mods, q.size() * sizeof(Modulus)));
    CK(cudaMemcpy(b.seeds, b.host_seeds.data(), s.keys * sizeof(ce::Key), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.mods, b.host_mods.data(), q.size() * sizeof(Modulus), cudaMemcpyHostToDevice));
    fill_random(b.x, pw, s.digits, q, rng);
    fill_random(b.kb, pw, s.keys * s.digits, q, rng);

    for (const u32 rounds : round_counts) {
      // The expansion against the CPU, then every KeyMult variant against full4 on those keys.
      const bool exp_ok = check_expansion(b, rounds);
      launch_expand_rounds(rounds, b, b.ka, nullptr);
      launch_keymult("full4", b, nullptr);
      CK(cudaMemcpy(b.ref0, b.out0, s.keys * pw * 4, cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(b.ref1, b.out1, s.keys * pw * 4, cudaMemcpyDeviceToDevice));
      const std::string compact = "compact" + std::to_string(rounds);
      bool km_ok = true;
      for (const std::string& v : {std::string("full16"), compact}) {
        CK(cudaMemset(b.out0, 0, s.keys * pw * 4));
        CK(cudaMemset(b.out1, 0, s.keys * pw * 4));
        launch_keymult(v, b, nullptr);
        CK(cudaDeviceSynchronize());
        km_ok = km_ok && equal_device(b.out0, b.ref0, s.keys * pw) &&
                equal_device(b.out1, b.ref1, s.keys * pw);
      }
      ok = ok && exp_ok && km_ok;
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "{\"op\": \"bit_exact\", \"device\": \"%s\", \"preset\": \"bootparam_40\", "
                    "\"limbs\": %u, \"aux\": %u, \"digits\": %u, \"keys\": %u, \"rounds\": %u, "
                    "\"expansion_equals_cpu\": %s, \"keymult_equals_full_keys\": %s, "
                    "\"git_commit\": \"%s\"}",
                    g_device.c_str(), s.limbs, kAux, s.digits, s.keys, rounds,
                    exp_ok ? "true" : "false", km_ok ? "true" : "false", THEO_BENCH_GIT_COMMIT);
      emit(buf);
    }
    if (check_only) {
      for (u32* p : {b.x, b.kb, b.ka, b.out0, b.out1, b.ref0, b.ref1})
        CK(cudaFree(p));
      CK(cudaFree(b.seeds));
      CK(cudaFree(b.mods));
      continue;
    }
    // The full variants read the ChaCha8 expansion (any keys would do).
    launch_expand_rounds(8, b, b.ka, nullptr);
    CK(cudaDeviceSynchronize());
    spill_record(s, q, 8);  // the same pools for every round count, up to the keystream

    // Companions sized like the full KeyMult's traffic: a copy of the same bytes, and integer
    // work of about the same time.
    const std::size_t full_bytes =
        4 * (s.digits * pw + 2 * key_words + 2 * static_cast<std::size_t>(s.keys) * pw);
    const std::size_t compact_bytes = full_bytes - 4 * key_words;
    const u64 copy16 = full_bytes / 2 / 16;
    uint4 *csrc = nullptr, *cdst = nullptr;
    CK(cudaMalloc(&csrc, copy16 * 16));
    CK(cudaMalloc(&cdst, copy16 * 16));
    CK(cudaMemset(csrc, 1, copy16 * 16));
    u32* sink = dalloc(1);
    const Modulus m0 = b.host_mods[0];
    u32 alu_iters = 256;
    const auto run_companion = [&](const std::string& c, cudaStream_t st) {
      if (c == "copy")
        copy_kernel<<<prop.multiProcessorCount * 8, 256, 0, st>>>(csrc, cdst, copy16);
      if (c == "alu") alu_kernel<<<prop.multiProcessorCount * 8, 256, 0, st>>>(sink, alu_iters, m0);
      CK(cudaGetLastError());
    };
    // Times one launch of `a` on s1 and of `b` on s2 (either may be empty), started together:
    // elapsed until both are done.
    const auto time_pair = [&](const std::string& a, const std::string& c) {
      std::vector<double> v;
      for (int i = 0; i < reps + 2; ++i) {
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e0, s1));
        CK(cudaStreamWaitEvent(s2, e0, 0));
        if (!a.empty()) launch_keymult(a, b, s1);
        if (!c.empty()) run_companion(c, s2);
        CK(cudaEventRecord(e1, s1));
        CK(cudaEventRecord(e2, s2));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventSynchronize(e2));
        float t1 = 0, t2 = 0;
        CK(cudaEventElapsedTime(&t1, e0, e1));
        CK(cudaEventElapsedTime(&t2, e0, e2));
        if (i >= 2) v.push_back(1e3 * std::max(t1, t2));
      }
      return stats(v);
    };
    // The integer companion takes about the full KeyMult's time alone.
    {
      const double target = time_pair("full4", "").median;
      const double t256 = time_pair("", "alu").median;
      alu_iters = static_cast<u32>(std::max(16.0, 256 * target / std::max(t256, 1.0)));
    }
    const Timing copy_alone = time_pair("", "copy"), alu_alone = time_pair("", "alu");
    for (const std::string& v : variants) {
      const bool full = v.rfind("full", 0) == 0;
      const u32 rounds = full ? 0 : static_cast<u32>(std::atoi(v.c_str() + 7));
      const std::size_t bytes = full ? full_bytes : compact_bytes;
      const Timing alone = time_pair(v, "");
      for (const std::string& c : {std::string("none"), std::string("copy"), std::string("alu")}) {
        const Timing t = c == "none" ? alone : time_pair(v, c);
        const Timing comp = c == "copy" ? copy_alone : alu_alone;
        char buf[1024];
        std::snprintf(
            buf, sizeof buf,
            "{\"op\": \"key_mult\", \"variant\": \"%s\", \"rounds\": %u, \"device\": \"%s\", "
            "\"preset\": \"bootparam_40\", \"n\": %u, \"limbs\": %u, \"aux\": %u, \"digits\": %u, "
            "\"keys\": %u, \"concurrent\": \"%s\", \"median_us\": %.2f, \"p10_us\": %.2f, "
            "\"p90_us\": %.2f, \"alone_us\": %.2f, \"companion_alone_us\": %.2f, "
            "\"companion_bytes\": %zu, \"alu_iters\": %u, \"bytes_moved_model\": %zu, "
            "\"achieved_GBps\": %.1f, \"reps\": %d, \"clock\": \"cuda_events\", "
            "\"git_commit\": \"%s\", \"date\": \"%s\"}",
            v.c_str(), rounds, g_device.c_str(), kN, s.limbs, kAux, s.digits, s.keys, c.c_str(),
            t.median, t.p10, t.p90, alone.median, c == "none" ? 0.0 : comp.median,
            c == "copy" ? 2 * copy16 * 16 : 0, alu_iters, bytes, bytes / (alone.median * 1e3), reps,
            THEO_BENCH_GIT_COMMIT, date_utc().c_str());
        emit(buf);
      }
    }
    {  // The expansion alone, writing `a` (bytes: the words written).
      for (const u32 rounds : round_counts) {
        std::vector<double> v;
        for (int i = 0; i < reps + 2; ++i) {
          CK(cudaEventRecord(e0, s1));
          launch_expand_rounds(rounds, b, b.ka, s1);
          CK(cudaEventRecord(e1, s1));
          CK(cudaEventSynchronize(e1));
          float t = 0;
          CK(cudaEventElapsedTime(&t, e0, e1));
          if (i >= 2) v.push_back(1e3 * t);
        }
        const Timing t = stats(v);
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "{\"op\": \"expand_a\", \"rounds\": %u, \"device\": \"%s\", "
                      "\"preset\": \"bootparam_40\", \"limbs\": %u, \"aux\": %u, \"digits\": %u, "
                      "\"keys\": %u, \"median_us\": %.2f, \"p10_us\": %.2f, \"p90_us\": %.2f, "
                      "\"Gwords_per_s\": %.1f, \"git_commit\": \"%s\", \"date\": \"%s\"}",
                      rounds, g_device.c_str(), s.limbs, kAux, s.digits, s.keys, t.median, t.p10,
                      t.p90, key_words / (t.median * 1e3), THEO_BENCH_GIT_COMMIT,
                      date_utc().c_str());
        emit(buf);
      }
    }
    for (u32* p : {b.x, b.kb, b.ka, b.out0, b.out1, b.ref0, b.ref1, sink})
      CK(cudaFree(p));
    CK(cudaFree(csrc));
    CK(cudaFree(cdst));
    CK(cudaFree(b.seeds));
    CK(cudaFree(b.mods));
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "[\n";
    for (std::size_t i = 0; i < g_records.size(); ++i)
      f << "  " << g_records[i] << (i + 1 < g_records.size() ? ",\n" : "\n");
    f << "]\n";
  }
  std::fprintf(stderr, "theo_compact_keys_probe: bit-exact %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
