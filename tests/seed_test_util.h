#pragma once
// 32-byte seeds drawn from a test's generator, for the seed expansion tests
// (tests/math/test_uniform_expand.cpp, tests/cuda/test_cuda_sampler.cpp).

#include <array>
#include <cstdint>
#include <random>

namespace theo::test {

using Seed = std::array<std::uint8_t, 32>;

inline Seed seed_from(std::mt19937_64& rng) {
  Seed s;
  for (auto& b : s)
    b = static_cast<std::uint8_t>(rng());
  return s;
}

}  // namespace theo::test
