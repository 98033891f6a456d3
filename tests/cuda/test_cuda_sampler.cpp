// The set-up work on the GPU: Backend::sample_uniform on the CUDA backend must give the CPU
// backend's words (which tests/math/test_uniform_expand.cpp checks against libsodium), and the
// batched encoder (host residues on a few primes, exact BConv to the rest on the backend) must give
// the words of a CPU encode.

#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "seed_test_util.h"
#include "theo/backend/factory.h"
#include "theo/math/primes.h"
#include "theo/ring/backend.h"

namespace theo::test {
namespace {

std::vector<u32> words_of(Backend& be, const RnsPoly& p) {
  std::vector<u32> w(p.words());
  be.download(p.cref(), w.data());
  return w;
}

// Primes near 2^31 (the largest the ring allows), 2^30 and 2^25, interleaved.
RingParams ring_for(u32 log_n) {
  RingParams r;
  r.log_n = log_n;
  const auto big = find_ntt_primes(log_n, 31, 8);
  const auto mid = find_ntt_primes(log_n, 30, 40, big);
  std::vector<u32> ex = big;
  ex.insert(ex.end(), mid.begin(), mid.end());
  const auto small = find_ntt_primes(log_n, 25, 12, ex);
  for (u32 i = 0; i < 60; ++i) {
    if (i % 5 == 0) {
      r.primes.push_back(big[i / 5 % big.size()]);
    } else if (i % 5 == 3) {
      r.primes.push_back(small[i / 5 % small.size()]);
    } else {
      r.primes.push_back(mid[(i - i / 5) % mid.size()]);
    }
  }
  return r;
}

TEST(CudaSampler, SampleUniformMatchesCpuBitExact) {
  std::mt19937_64 rng(21);
  for (const u32 log_n : {12u, 16u}) {
    const RingParams ring = ring_for(log_n);
    const auto cpu = make_cpu_backend(ring);
    const auto gpu = make_cuda_backend(ring);
    for (const u32 limbs : {1u, 7u, 59u}) {
      std::vector<PrimeId> ids;
      for (u32 i = 0; i < limbs; ++i)
        ids.push_back(static_cast<PrimeId>((i * 37 + limbs) % ring.primes.size()));
      const Basis basis(ids);
      const Seed seed = seed_from(rng);
      const u64 stream = rng();
      RnsPoly a = cpu->make_poly(basis);
      RnsPoly b = gpu->make_poly(basis);
      cpu->sample_uniform(seed, stream, a.ref());
      gpu->sample_uniform(seed, stream, b.ref());
      const auto wa = words_of(*cpu, a), wb = words_of(*gpu, b);
      ASSERT_EQ(wa, wb) << "N = 2^" << log_n << ", " << limbs << " limbs";
      // A slice (an offset view) expands the same limbs.
      RnsPoly c = gpu->make_poly(basis);
      gpu->sample_uniform(seed, stream, c.slice(1, limbs - 1));
      if (limbs > 1) {
        const auto wc = words_of(*gpu, c);
        const std::size_t off = std::size_t{1} << log_n;
        ASSERT_TRUE(std::equal(wc.begin() + off, wc.end(), wb.begin() + off));
      }
    }
  }
}

TEST(CudaSampler, KeySizedExpansionTime) {
  const RingParams ring = ring_for(16);
  const auto gpu = make_cuda_backend(ring);
  std::vector<PrimeId> ids(59);
  for (u32 i = 0; i < 59; ++i)
    ids[i] = static_cast<PrimeId>(i);
  RnsPoly a = gpu->make_poly(Basis(ids));
  gpu->sample_uniform(Seed{}, 0, a.ref());
  gpu->synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kReps = 20;
  for (int r = 0; r < kReps; ++r)
    gpu->sample_uniform(Seed{}, static_cast<u64>(r), a.ref());
  gpu->synchronize();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
      kReps;
  std::printf("[sampler] 59 limbs x 2^16 words: %.3f ms (%.1f Gwords/s)\n", ms,
              59.0 * 65536 / ms / 1e6);
  EXPECT_LT(ms, 50.0);
}

TEST(CudaSampler, EncodeBatchMatchesCpuEncode) {
  const ParameterSet p = generated_params(14, 8);
  ContextOptions o;
  o.allow_insecure = true;
  o.backend = BackendChoice::kCpu;
  const ContextPtr cpu = Context::create(p, o);
  o.backend = BackendChoice::kCuda;
  const ContextPtr gpu = Context::create(p, o);
  const Encoder ecpu(cpu), egpu(gpu);
  std::vector<std::vector<Cplx>> values;
  for (u32 i = 0; i < 9; ++i) {
    std::vector<Cplx> v(i == 3 ? 64 : cpu->max_slots());
    for (std::size_t j = 0; j < v.size(); ++j)
      v[j] = std::polar(0.3 + 0.07 * i, 0.11 * static_cast<double>(j * (i + 1)));
    values.push_back(std::move(v));
  }
  const u32 level = cpu->max_level();
  // Delta^2-sized scales (linear transform diagonals) need several source primes.
  for (const long double scale : {cpu->default_scale(level), cpu->default_scale(level) * 0x1p40L}) {
    const auto batch = egpu.encode_batch(values, level, scale);
    ASSERT_EQ(batch.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const Plaintext want = ecpu.encode(values[i], level, scale);
      EXPECT_EQ(hash_poly(*gpu, batch[i].poly()), hash_poly(*cpu, want.poly()))
          << "vector " << i << " at scale 2^" << static_cast<double>(std::log2(scale));
      EXPECT_EQ(batch[i].slots(), want.slots());
    }
  }
}

}  // namespace
}  // namespace theo::test
