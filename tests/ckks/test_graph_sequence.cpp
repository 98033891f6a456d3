// CaptureSequence (theo/ckks/graph.h) on the backend under test: a chain of graphs sharing one
// scratch workspace replays with the words of eager execution (fresh inputs, repeated replays, a
// fork inside a unit), holds less memory than the same graphs captured alone, and refuses
// misuse. Built for the CPU into test_graph and for the GPU into test_cuda_graph.

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "backend_test.h"
#include "ckks/graph_test_env.h"

namespace theo::test {
namespace {

class GraphSequence : public OnBackend {};

// Three units of a chain, each reading the one before: y from the inputs, z from y (its two
// rotations on the two lanes of a fork), w from z.
struct Chain {
  Ciphertext y, z, w;
};

void unit1(const GraphEnv& e, Chain& c) {
  c.y = sequence(e.evaluator, e.a, e.b, e.rlk, e.gk);
}

void unit2(const GraphEnv& e, Chain& c) {
  Backend& be = e.ctx->backend();
  be.fork();
  const Ciphertext r = e.evaluator.rotate(c.y, 1, e.gk);
  be.end_fork();
  const Ciphertext q = e.evaluator.rotate(c.y, 3, e.gk);
  be.join();
  c.z = e.evaluator.multiply_relin_rescale(r, q, e.rlk);
}

void unit3(const GraphEnv& e, Chain& c) {
  c.w = e.evaluator.sub(e.evaluator.rotate(c.z, 1, e.gk), e.evaluator.add_const(c.z, {0.5, -0.25}));
}

struct Hashes {
  u64 y, z, w;
  bool operator==(const Hashes&) const = default;
};

Hashes hashes(const GraphEnv& e, const Chain& c) {
  return {hash_ct(*e.ctx, c.y), hash_ct(*e.ctx, c.z), hash_ct(*e.ctx, c.w)};
}

Hashes eager_chain(const GraphEnv& e) {
  Chain c;
  unit1(e, c);
  unit2(e, c);
  unit3(e, c);
  return hashes(e, c);
}

TEST_P(GraphSequence, ReplayMatchesEagerOnFreshInputs) {
  GraphEnv e(backend());
  const Hashes want = eager_chain(e);
  Chain c;
  CaptureSequence seq(e.ctx);
  std::vector<Graph> graphs;
  graphs.push_back(seq.capture([&] { unit1(e, c); }));
  graphs.push_back(seq.capture([&] { unit2(e, c); }));
  graphs.push_back(seq.capture([&] { unit3(e, c); }));
  EXPECT_EQ(seq.size(), 3u);
  for (const Graph& g : graphs)
    ASSERT_TRUE(g.captured());
  EXPECT_GT(seq.free_bytes(), 0u) << "no scratch was handed on";
  for (int rep = 0; rep < 2; ++rep) {
    for (Graph& g : graphs)
      g.replay();
    EXPECT_EQ(hashes(e, c), want) << "replay " << rep;
  }
  // Fresh random inputs, written into the first unit's operands.
  for (int round = 0; round < 2; ++round) {
    const Ciphertext a = e.encrypt(random_slots(2048), 4), b = e.encrypt(random_slots(2048), 4);
    graphs.front().set_input(e.a, a);
    graphs.front().set_input(e.b, b);
    const Hashes fresh = eager_chain(e);
    EXPECT_NE(fresh, want);
    for (int rep = 0; rep < 2; ++rep) {
      for (Graph& g : graphs)
        g.replay();
      EXPECT_EQ(hashes(e, c), fresh) << "round " << round << ", replay " << rep;
    }
  }
}

// The same unit captured kUnits times, alone and as a sequence: each output is right, and the
// sequence holds about one unit's scratch plus the outputs instead of kUnits units' scratch.
TEST_P(GraphSequence, HoldsLessThanGraphsCapturedAlone) {
  constexpr int kUnits = 4;
  const auto za = random_slots(2048), zb = random_slots(2048);
  struct Result {
    std::size_t held = 0, peak = 0, workspace = 0;
  };
  const auto run = [&](bool shared) {
    // A fresh backend each, so that the peaks compare.
    GraphEnv e(backend(), za, zb);
    Backend& be = e.ctx->backend();
    const u64 want = hash_ct(*e.ctx, e.eager());  // tables and plans are made before measuring
    be.synchronize();
    const MemoryReport before = be.memory_report();
    std::vector<Ciphertext> outs(kUnits);
    std::vector<Graph> graphs;
    CaptureSequence seq(e.ctx);
    for (int i = 0; i < kUnits; ++i) {
      auto fn = [&e, &outs, i] { outs[i] = e.eager(); };
      graphs.push_back(shared ? seq.capture(fn) : e.ctx->capture(fn));
    }
    for (Graph& g : graphs)
      g.replay();
    be.synchronize();
    for (int i = 0; i < kUnits; ++i)
      EXPECT_EQ(hash_ct(*e.ctx, outs[i]), want) << (shared ? "shared" : "alone") << ", unit " << i;
    const MemoryReport after = be.memory_report();
    return Result{after.live_bytes - before.live_bytes, after.peak_bytes - before.live_bytes,
                  seq.workspace_bytes()};
  };
  const Result alone = run(false), shared = run(true);
  std::printf(
      "[graph] %d units: held %zu bytes alone, %zu as a sequence (workspace %zu); peak "
      "%zu / %zu\n",
      kUnits, alone.held, shared.held, shared.workspace, alone.peak, shared.peak);
  ASSERT_GT(alone.held, 0u) << "the backend reports no memory";
  EXPECT_EQ(alone.workspace, 0u);
  EXPECT_GT(shared.workspace, 0u);
  EXPECT_LE(shared.workspace, shared.held);
  // Scratch dominates a unit (key switching at level 4, the outputs are at level 2).
  EXPECT_LT(shared.held, alone.held / 2);
  EXPECT_LT(shared.peak, alone.peak);
}

TEST_P(GraphSequence, MisuseIsRefused) {
  GraphEnv e(backend());
  Backend& be = e.ctx->backend();
  CaptureSequence empty;
  EXPECT_THROW((void)empty.capture([] {}), ContextError);
  EXPECT_THROW((void)CaptureSequence(nullptr), ContextError);

  CaptureSequence seq(e.ctx);
  EXPECT_THROW((void)seq.capture(nullptr), ParameterError);
  Ciphertext out;
  // Inside another capture, and inside one of its own: refused, and the backend stays usable.
  EXPECT_THROW((void)e.ctx->capture([&] { (void)seq.capture([&] { out = e.eager(); }); }),
               BackendError);
  EXPECT_FALSE(be.capturing());
  EXPECT_THROW((void)seq.capture([&] { (void)seq.capture([&] { out = e.eager(); }); }),
               BackendError);
  EXPECT_FALSE(be.capturing());
  Graph g = seq.capture([&] { out = e.eager(); });
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), hash_ct(*e.ctx, e.eager()));

  // A workspace of another backend.
  GraphEnv other(backend());
  EXPECT_THROW(be.begin_capture(other.ctx->backend().make_capture_workspace()), BackendError);
  EXPECT_FALSE(be.capturing());
}

TEST_P(GraphSequence, GraphsOffRunTheFunctions) {
  GraphEnv e(backend());
  ContextOptions o = e.ctx->options();
  o.graphs = false;
  const ContextPtr off = Context::create(e.ctx->params(), o);
  CaptureSequence seq(off);
  int calls = 0;
  Graph g = seq.capture([&] { ++calls; });
  EXPECT_FALSE(g.captured());
  EXPECT_EQ(calls, 0);
  g.replay();
  g.replay();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seq.size(), 1u);
  EXPECT_EQ(seq.workspace_bytes(), 0u);
}

THEO_INSTANTIATE_ON_BACKEND(GraphSequence);

}  // namespace
}  // namespace theo::test
