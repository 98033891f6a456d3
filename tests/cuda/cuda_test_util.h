#pragma once
// Shared helpers of the CUDA backend's white-box tests: a CPU and a CUDA backend over one ring,
// the same host words on both (Twin), and a word-for-word comparison that names the first
// difference. Inputs come from one fixed-seed generator per test binary, edge values included.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "theo/math/primes.h"
#include "theo/ring/backend.h"

namespace theo::cuda_test {

// `count` primes: mostly near 2^30, `big` just below 2^31 (the extreme for signed Montgomery)
// and `small` near 2^25 (small primes stress centered / lazy bounds differently), interleaved so
// that contiguous id ranges mix sizes.
inline RingParams mixed_ring(u32 log_n, u32 count, u32 big_count, u32 small_count) {
  RingParams r;
  r.log_n = log_n;
  auto big = find_ntt_primes(log_n, 31, big_count);
  auto small = find_ntt_primes(log_n, 25, small_count, big);
  std::vector<u32> ex = big;
  ex.insert(ex.end(), small.begin(), small.end());
  auto mid = find_ntt_primes(log_n, 30, count - big_count - small_count, ex);
  for (u32 i = 0; i < count; ++i) {
    if (i % 5 == 1 && !big.empty()) {
      r.primes.push_back(big.back());
      big.pop_back();
    } else if (i % 7 == 3 && !small.empty()) {
      r.primes.push_back(small.back());
      small.pop_back();
    } else if (!mid.empty()) {
      r.primes.push_back(mid.back());
      mid.pop_back();
    } else if (!big.empty()) {
      r.primes.push_back(big.back());
      big.pop_back();
    } else {
      r.primes.push_back(small.back());
      small.pop_back();
    }
  }
  return r;
}

struct Pair {
  std::unique_ptr<Backend> cpu, gpu;
};

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(0x7e0d051a4ULL);
  return g;
}

// `limbs` distinct prime ids of the first `primes`, in random order (a random contiguous range
// when contiguous = true).
inline Basis random_basis(u32 primes, u32 limbs, bool contiguous = false) {
  if (contiguous) {
    const u32 first = static_cast<u32>(rng()() % (primes - limbs + 1));
    return Basis::range(first, limbs);
  }
  std::vector<PrimeId> ids(primes);
  std::iota(ids.begin(), ids.end(), PrimeId{0});
  std::shuffle(ids.begin(), ids.end(), rng());
  ids.resize(limbs);
  return Basis(std::span<const PrimeId>(ids));
}

inline std::vector<u32> random_words(const Backend& be, const Basis& b) {
  std::vector<u32> v(static_cast<std::size_t>(b.size) * be.n());
  for (u32 l = 0; l < b.size; ++l) {
    const u32 q = be.modulus(b.ids[l]).q;
    std::uniform_int_distribution<u32> d(0, q - 1);
    for (u32 i = 0; i < be.n(); ++i) {
      // Edge values often: 0, 1, q-1, q/2, (q+1)/2.
      const u32 sel = static_cast<u32>(rng()() % 64);
      u32 x = d(rng());
      if (sel == 0) x = 0;
      if (sel == 1) x = q - 1;
      if (sel == 2) x = q / 2;
      if (sel == 3) x = q / 2 + 1;
      if (sel == 4) x = 1;
      v[static_cast<std::size_t>(l) * be.n() + i] = x;
    }
  }
  return v;
}

// One canonical constant per limb, 0 and q - 1 among them.
inline std::vector<u32> random_consts(const Backend& be, const Basis& b) {
  std::vector<u32> c(b.size);
  for (u32 l = 0; l < b.size; ++l)
    c[l] = static_cast<u32>(rng()() % be.modulus(b.ids[l]).q);
  if (b.size > 1) c[1] = 0;
  if (b.size > 2) c[2] = be.modulus(b.ids[2]).q - 1;
  return c;
}

// The same host words on both backends.
struct Twin {
  RnsPoly c, g;
  Twin(Pair& p, const Basis& b, const std::vector<u32>& words)
      : c(p.cpu->make_poly(b)), g(p.gpu->make_poly(b)) {
    p.cpu->upload(words.data(), c.ref());
    p.gpu->upload(words.data(), g.ref());
  }
  Twin(Pair& p, const Basis& b) : Twin(p, b, random_words(*p.cpu, b)) {}
};

inline std::vector<u32> words(Backend& be, const RnsPoly& p) {
  std::vector<u32> w(p.words());
  be.download(p.cref(), w.data());
  return w;
}

inline ::testing::AssertionResult same(Pair& p, const Twin& t, const std::string& what) {
  const std::vector<u32> a = words(*p.cpu, t.c), b = words(*p.gpu, t.g);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return ::testing::AssertionFailure()
             << what << ": first difference at limb " << i / t.c.n() << " (prime id "
             << int(t.c.basis().ids[i / t.c.n()]) << ") coeff " << i % t.c.n() << ": cpu " << a[i]
             << ", cuda " << b[i];
  return ::testing::AssertionSuccess();
}

}  // namespace theo::cuda_test
