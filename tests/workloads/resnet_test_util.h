#pragma once
// Shared helpers of the ResNet workload tests.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "circuits/circuits_test_util.h"
#include "theo/ring/automorphism.h"
#include "theo/workloads/resnet.h"

namespace theo::test {

inline u64 fresh_seed(const char* what) {
  const u64 seed = std::random_device{}();
  std::printf("[seed] %s %llu\n", what, static_cast<unsigned long long>(seed));
  return seed;
}

inline std::vector<double> random_image(const ResNetModel& m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> img(m.input_size());
  for (auto& x : img)
    x = u(rng);
  return img;
}

inline double logit_bits(const std::vector<double>& got, const std::vector<double>& want) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    e = std::max(e, std::abs(got.at(i) - want[i]));
  return e > 0 ? -std::log2(e) : 1000.0;
}

inline u32 argmax(const std::vector<double>& v) {
  return static_cast<u32>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace theo::test
