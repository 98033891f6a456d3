// CUDA Graphs beyond the backend-parameterised suites of tests/ckks/test_graph.cpp (built into
// this binary too): programmatic dependent launch on and off gives the CPU's words, eager and
// from a graph, and chains the graph's kernels by programmatic edges on sm_90+.

#include <gtest/gtest.h>

#include <cstdio>

#include "backend/cuda/cuda_backend.h"
#include "ckks/graph_test_env.h"

namespace theo::test {
namespace {

TEST(CudaGraph, ProgrammaticLaunchOnAndOffGiveTheSameWords) {
  const auto za = random_slots(2048), zb = random_slots(2048);
  GraphEnv cpu(BackendChoice::kCpu, za, zb), gpu(BackendChoice::kCuda, za, zb);
  ASSERT_EQ(gpu.ctx->backend().kind(), BackendKind::kCuda);
  int dev = 0;
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, dev), cudaSuccess);
  const u64 want = hash_ct(*cpu.ctx, cpu.eager());
  for (const u32 on : {0u, 1u, 0u}) {
    cuda::Tuning t;
    t.programmatic_launch = on;
    cuda::set_tuning(gpu.ctx->backend(), t);
    EXPECT_EQ(hash_ct(*gpu.ctx, gpu.eager()), want) << "eager, programmatic_launch " << on;
    Ciphertext out;
    Graph g = gpu.ctx->capture([&] { out = gpu.eager(); });
    ASSERT_TRUE(g.captured());
    g.replay();
    EXPECT_EQ(hash_ct(*gpu.ctx, out), want) << "graph, programmatic_launch " << on;
    std::printf("[graph] programmatic_launch %u: %zu kernels, %zu programmatic edges\n", on,
                g.kernel_count(), g.programmatic_edge_count());
    if (on != 0 && prop.major >= 9)
      EXPECT_GT(g.programmatic_edge_count(), g.kernel_count() / 2);
    else
      EXPECT_EQ(g.programmatic_edge_count(), 0u);
  }
  cuda::set_tuning(gpu.ctx->backend(), cuda::Tuning{});
}

}  // namespace
}  // namespace theo::test
