// The four key-switching dataflows on the CUDA backend: every dataflow and chunk count (DSOB,
// DPOB, DSOC and DPOC with 2..10 chunks), forced at every level, word for word against the CPU
// reference with every optimization off, with and without pipelining; the evaluator's key
// switches (relinearization, ModDown merged with the rescale, rotation) under each fixed dataflow,
// eagerly and replayed from a CUDA Graph; Auto's choices on this GPU's L2.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "ckks/dataflow_test_util.h"
#include "theo/backend/factory.h"
#include "theo/ckks/graph.h"
#include "theo/math/parameter_grid.h"

namespace theo::test {
namespace {

std::vector<ParameterSet> sets() {
  return {generated_params(12, 5), generate_grid_parameters({12, 10, 4})};
}

using dataflows::context;
using dataflows::fixed;
using dataflows::Keys;
using dataflows::prepared;

std::vector<u32> random_words(const Context& ctx, u32 level, std::mt19937_64& rng) {
  const LevelData& lv = ctx.level(level);
  std::vector<u32> w(std::size_t{lv.limbs} * ctx.n());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<u32>(rng() % ctx.prime(lv.q_basis[static_cast<u32>(i / ctx.n())]));
  return w;
}

u64 switched(const Keys& k, u32 level, const std::vector<u32>& words,
             const DataflowChoice* forced) {
  const Context& ctx = *k.ctx;
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
  RnsPoly in = be.make_poly(lv.q_basis);
  be.upload(words.data(), in.ref());
  const KeySwitcher& ks = k.ev.key_switcher();
  if (forced != nullptr)
    return dataflows::switched_hash(ctx, ks, k.rlk.key(), level, in.cref(), *forced);
  RnsPoly o0 = be.make_poly(lv.q_basis), o1 = be.make_poly(lv.q_basis);
  ks.switch_key(in.cref(), level, k.rlk.key(), o0.ref(), o1.ref());
  return hash_poly(ctx, o0, hash_poly(ctx, o1));
}

TEST(CudaDataflows, EveryDataflowAndChunkCountMatchesCpu) {
  const u64 seed = std::random_device{}();
  std::printf("[seed] %llu\n", static_cast<unsigned long long>(seed));
  for (const ParameterSet& p : sets()) {
    const Keys cpu(context(BackendChoice::kCpu, p, Optimizations::none(), {}));
    Optimizations serial = Optimizations::all();
    serial.pipelining = false;
    for (const Optimizations& opt : {Optimizations::all(), serial}) {
      const Keys gpu(context(BackendChoice::kCuda, p, opt, prepared()));
      ASSERT_EQ(gpu.ctx->backend().kind(), BackendKind::kCuda);
      std::mt19937_64 rng(seed);
      for (u32 level = 0; level <= gpu.ctx->max_level(); ++level) {
        const std::vector<u32> words = random_words(*cpu.ctx, level, rng);
        const u64 want = switched(cpu, level, words, nullptr);
        for (const DataflowChoice& c : dataflow_candidates())
          EXPECT_EQ(switched(gpu, level, words, &c), want)
              << p.name << " level " << level << " " << choice_name(c) << " pipelining "
              << opt.pipelining;
      }
    }
  }
}

TEST(CudaDataflows, EvaluatorOpsEagerAndReplayed) {
  const ParameterSet p = generate_grid_parameters({12, 10, 4});
  const Keys cpu(context(BackendChoice::kCpu, p, Optimizations::none(), {}));
  const dataflows::EvaluatorReference want = dataflows::evaluator_reference(cpu);
  for (const DataflowChoice& c : dataflow_candidates()) {
    const Keys gpu(context(BackendChoice::kCuda, p, Optimizations::all(), fixed(c)));
    const dataflows::Operands in =
        dataflows::expect_reference_words(gpu, *cpu.ctx, want, choice_name(c));
    Ciphertext m, r;
    Graph g = gpu.ctx->capture([&] {
      m = gpu.ev.multiply_relin_rescale(in.a, in.b, gpu.rlk);
      r = gpu.ev.rotate(in.a, 3, gpu.gk);
    });
    ASSERT_TRUE(g.captured()) << choice_name(c);
    for (int rep = 0; rep < 2; ++rep) {
      g.replay();
      EXPECT_EQ(hash_ct(*gpu.ctx, m), want.multiply_relin_rescale)
          << choice_name(c) << " replay " << rep;
      EXPECT_EQ(hash_ct(*gpu.ctx, r), want.rotate) << choice_name(c) << " replay " << rep;
    }
  }
}

// Auto on this GPU: the footprint model against the device's L2 at every level of a large set
// (no table), printed, and the words of the CPU reference at the top level.
TEST(CudaDataflows, AutoOnThisDevice) {
  const ParameterSet p = generate_grid_parameters({16, 30, 4});
  const Keys gpu(context(BackendChoice::kCuda, p, Optimizations::all(), {}));
  const KeySwitchPlanner& planner = gpu.ctx->key_switch_planner();
  std::printf("[dataflows] L2 %.1f MB; Auto (model) by level:",
              static_cast<double>(planner.cache_bytes()) / 1e6);
  for (u32 l = 0; l <= gpu.ctx->max_level(); ++l) {
    const LevelDataflow& d = planner.dataflow(l);
    EXPECT_EQ(d.source, ChoiceSource::kModel);
    EXPECT_EQ(d.choice, model_choice(planner.key_switch_shape(l), planner.cache_bytes()));
    std::printf(" %u:%s", l, choice_name(d.choice).c_str());
  }
  std::printf("\n");
  const Keys cpu(context(BackendChoice::kCpu, p, Optimizations::none(), {}));
  std::mt19937_64 rng(std::random_device{}());
  const u32 top = gpu.ctx->max_level();
  const std::vector<u32> words = random_words(*cpu.ctx, top, rng);
  EXPECT_EQ(switched(gpu, top, words, nullptr), switched(cpu, top, words, nullptr));
}

}  // namespace
}  // namespace theo::test
