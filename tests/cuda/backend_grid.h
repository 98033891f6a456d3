#pragma once
// The backend pairs and the shape grid of the CUDA backend's bit-exactness suites
// (test_cuda_backend.cpp: transfers, element-wise, key_mult, automorphism, errors;
// test_cuda_ntt.cpp; test_cuda_bconv.cpp): one CPU and one CUDA backend per ring degree over
// kPrimes primes, shared by the binary's files.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_test_util.h"
#include "theo/backend/factory.h"

namespace theo::cuda_backend_test {

inline constexpr u32 kPrimes = 64;

using cuda_test::Pair;
using cuda_test::random_consts;
using cuda_test::random_words;
using cuda_test::rng;
using cuda_test::same;
using cuda_test::Twin;

// 64 primes: mostly near 2^30, 12 just below 2^31, 8 near 2^25.
inline RingParams ring_for(u32 log_n) {
  return cuda_test::mixed_ring(log_n, kPrimes, 12, 8);
}

inline Pair& backends(u32 log_n) {
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
inline Basis random_basis(u32 limbs, bool contiguous = false) {
  return cuda_test::random_basis(kPrimes, limbs, contiguous);
}

struct Shape {
  u32 log_n, limbs;
};
// Sampled grid: every N, limb counts 1..60 incl. odd and non-powers of two.
inline const std::vector<Shape> kGrid = {{12, 1}, {12, 3},  {12, 60}, {13, 2},  {13, 7},  {13, 33},
                                         {14, 5}, {14, 12}, {14, 45}, {15, 1},  {15, 13}, {15, 24},
                                         {16, 1}, {16, 3},  {16, 12}, {16, 31}, {16, 48}, {16, 60}};

inline std::string label(const Shape& s) {
  return "N=2^" + std::to_string(s.log_n) + " limbs=" + std::to_string(s.limbs);
}

}  // namespace theo::cuda_backend_test
