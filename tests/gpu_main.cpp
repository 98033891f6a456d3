// main() of every GPU test binary: skip (exit 77, reported by ctest as skipped) without a GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include "theo/backend/factory.h"
#include "theo/ring/backend.h"

int main(int argc, char** argv) {
  if (!theo::cuda_available()) {
    std::printf("no usable CUDA GPU (or built without CUDA): GPU tests skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
