#pragma once
// Backend-parameterised tests: one test body, run on the backend under test and compared word for
// word with the CPU reference. A source file of such suites is built twice: into its CPU test
// binary (label cpu), which runs them on the CPU backend, and, when the CUDA backend is built,
// into a GPU test binary of tests/cuda/ (label gpu; THEO_TEST_ON_GPU defined; the binary exits 77
// without a GPU, tests/gpu_main.cpp), which runs them on the CUDA backend.
//
//   class CkksFusion : public OnBackend {};
//   TEST_P(CkksFusion, MechanismsBitExact) { ... backend() ... }
//   THEO_INSTANTIATE_ON_BACKEND(CkksFusion);   // test names end in /cpu or /cuda

#include <gtest/gtest.h>

#include <string>

#include "theo/theodosian.h"

namespace theo::test {

#ifdef THEO_TEST_ON_GPU
inline constexpr BackendChoice kBackendUnderTest = BackendChoice::kCuda;
#else
inline constexpr BackendChoice kBackendUnderTest = BackendChoice::kCpu;
#endif

// The fixture of a backend-parameterised suite.
class OnBackend : public ::testing::TestWithParam<BackendChoice> {
 protected:
  void SetUp() override {
    if (backend() == BackendChoice::kCuda && !cuda_available())
      GTEST_SKIP() << "no usable CUDA GPU (or built without CUDA)";
  }
  // The backend under test.
  BackendChoice backend() const { return GetParam(); }
  // Whether it is the CPU reference itself (a comparison with the CPU then compares two runs).
  bool on_cpu() const { return backend() == BackendChoice::kCpu; }
};

inline std::string backend_label(const ::testing::TestParamInfo<BackendChoice>& info) {
  return info.param == BackendChoice::kCuda ? "cuda" : "cpu";
}

}  // namespace theo::test

#define THEO_INSTANTIATE_ON_BACKEND(Suite)                                                \
  INSTANTIATE_TEST_SUITE_P(On, Suite, ::testing::Values(::theo::test::kBackendUnderTest), \
                           ::theo::test::backend_label)
