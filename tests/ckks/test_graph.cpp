// Context::capture / Graph on the backend under test (a list of recorded calls on the CPU, a CUDA
// Graph on the GPU): a replay gives the words of eager execution and of the CPU reference, reads
// its inputs' current contents, and ops that need the host are refused while capturing and leave
// the backend usable. Built for the CPU and into test_cuda_graph for the GPU
// (tests/backend_test.h).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backend_test.h"
#include "ckks/graph_test_env.h"

namespace theo::test {
namespace {

class GraphCapture : public OnBackend {};

TEST_P(GraphCapture, ReplayMatchesEagerAndTheCpu) {
  const auto za = random_slots(2048), zb = random_slots(2048), zc = random_slots(2048);
  // The CPU's words of the sequence, then again after a = encrypt(zc) (the third encryption of
  // the seeded encryptor, as set_input's below).
  u64 want = 0, want2 = 0;
  {
    GraphEnv cpu(BackendChoice::kCpu, za, zb);
    want = hash_ct(*cpu.ctx, cpu.eager());
    cpu.a = cpu.encrypt(zc, 4);
    want2 = hash_ct(*cpu.ctx, cpu.eager());
  }
  EXPECT_NE(want2, want);
  GraphEnv e(backend(), za, zb);
  EXPECT_EQ(hash_ct(*e.ctx, e.eager()), want) << "eager execution differs from the CPU";
  Ciphertext out;
  Graph g = e.capture(out);
  ASSERT_TRUE(g.captured());
  std::printf("[graph] sequence: %zu kernels, %zu nodes\n", g.kernel_count(), g.node_count());
  EXPECT_GT(g.kernel_count(), 10u);
  EXPECT_FALSE(e.ctx->backend().capturing());
  for (int rep = 0; rep < 2; ++rep) {
    g.replay();
    EXPECT_EQ(hash_ct(*e.ctx, out), want) << "replay " << rep;
  }
  // New input data is picked up by the next replay.
  g.set_input(e.a, e.encrypt(zc, 4));
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want2);
}

TEST_P(GraphCapture, CaptureRunsNothing) {
  GraphEnv e(backend());
  const u64 before = hash_ct(*e.ctx, e.a);
  Backend& be = e.ctx->backend();
  Graph g =
      e.ctx->capture([&] { be.add(e.a.poly(0).cref(), e.b.poly(0).cref(), e.a.poly(0).ref()); });
  EXPECT_EQ(hash_ct(*e.ctx, e.a), before) << "nothing runs while capturing";
  EXPECT_EQ(g.kernel_count(), 1u);
}

// A backend op that writes its input in place: every replay reads the current contents, so
// replays accumulate exactly as eager calls do.
TEST_P(GraphCapture, InPlaceWritesAccumulate) {
  GraphEnv e(backend());
  Backend& be = e.ctx->backend();
  const Ciphertext x0 = e.evaluator.clone(e.a);
  Ciphertext x = e.evaluator.clone(e.a);
  Graph g = e.ctx->capture([&] {
    for (u32 i = 0; i < 2; ++i)
      be.add(x.poly(i).cref(), e.b.poly(i).cref(), x.poly(i).ref());
  });
  g.replay();
  g.replay();
  const Ciphertext want = e.evaluator.add(e.evaluator.add(x0, e.b), e.b);
  EXPECT_EQ(hash_ct(*e.ctx, x), hash_ct(*e.ctx, want));
}

// Evaluator::*_inplace rebinds its argument (x = add(x, b)): inside a capture x becomes an output
// computed from x's memory before the capture, which the graph keeps; replays do not accumulate.
TEST_P(GraphCapture, InPlaceEvaluatorCallsRebind) {
  GraphEnv e(backend());
  Ciphertext x = e.evaluator.clone(e.a);
  Graph g = e.ctx->capture([&] { e.evaluator.add_inplace(x, e.b); });
  const u64 once = hash_ct(*e.ctx, e.evaluator.add(e.a, e.b));
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, x), once);
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, x), once);
}

TEST_P(GraphCapture, OutputsOutliveTheGraph) {
  GraphEnv e(backend());
  EXPECT_EQ(e.replayed_hash(), hash_ct(*e.ctx, e.eager()));
}

TEST_P(GraphCapture, ReplayReadsCurrentInputs) {
  GraphEnv e(backend());
  Ciphertext out;
  Graph g = e.capture(out);
  g.replay();
  const u64 first = hash_ct(*e.ctx, out);
  // New data in the same objects: the next replay computes on it.
  const auto z = random_slots(e.ctx->max_slots());
  g.set_input(e.a, e.encrypt(z, 4));
  g.replay();
  const u64 second = hash_ct(*e.ctx, out);
  EXPECT_NE(first, second);
  EXPECT_EQ(second, hash_ct(*e.ctx, e.eager()));
  // And the values decrypt to what the sequence computes.
  const Ciphertext plain_eager = e.eager();
  EXPECT_LT(max_abs_error(e.decrypt(out), e.decrypt(plain_eager)), 1e-9);
}

TEST_P(GraphCapture, DisabledRunsEagerlyWithTheSameWords) {
  GraphEnv e(backend());
  EXPECT_EQ(e.replayed_hash(), hash_ct(*e.ctx, e.eager()));
  ContextOptions o = e.ctx->options();
  o.graphs = false;
  const ContextPtr off = Context::create(e.ctx->params(), o);

  // The same program on a Context with graphs off.
  KeyGenerator kg(off, seed_of(7));
  const SecretKey sk = kg.create_secret_key();
  Evaluator ev(off);
  Encoder enc(off);
  Encryptor encr(off, sk, seed_of(3));
  const RelinKey rlk = kg.create_relin_key(sk);
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, 3});
  const Ciphertext a = encr.encrypt(enc.encode(random_slots(off->max_slots()), 4));
  const Ciphertext b = encr.encrypt(enc.encode(random_slots(off->max_slots()), 4));
  const u64 eager_off = hash_ct(*off, sequence(ev, a, b, rlk, gk));
  Ciphertext out_off;
  Graph g_off = off->capture([&] { out_off = sequence(ev, a, b, rlk, gk); });
  EXPECT_FALSE(g_off.captured());
  EXPECT_EQ(g_off.kernel_count(), 0u);
  EXPECT_TRUE(out_off.empty()) << "with graphs off, the function runs only at replay";
  g_off.replay();
  EXPECT_EQ(hash_ct(*off, out_off), eager_off);
}

TEST_P(GraphCapture, HostOpsAreRefusedAndTheBackendStaysUsable) {
  GraphEnv e(backend());
  Backend& be = e.ctx->backend();
  std::vector<u32> host(e.a.poly(0).words());
  try {
    (void)e.ctx->capture([&] {
      const Ciphertext t = e.evaluator.add(e.a, e.b);
      be.download(t.poly(0).cref(), host.data());
    });
    FAIL() << "download inside a capture must throw";
  } catch (const BackendError& err) {
    EXPECT_NE(std::string(err.what()).find("download is not allowed while capturing"),
              std::string::npos)
        << err.what();
  }
  EXPECT_FALSE(be.capturing());
  EXPECT_THROW((void)e.ctx->capture([&] { be.upload(host.data(), e.a.poly(0).ref()); }),
               BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.decrypt(e.a); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.encrypt(random_slots(8), 4); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { be.synchronize(); }), BackendError);
  EXPECT_THROW(
      (void)e.ctx->capture([&] { (void)be.make_bconv(e.ctx->level(1).q_basis, e.ctx->p_basis()); }),
      BackendError);
  // Any exception of the function drops the capture.
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.evaluator.rotate(e.a, 2, e.gk); }),
               MissingKeyError);
  EXPECT_FALSE(be.capturing());
  // Everything still works eagerly and captured.
  EXPECT_EQ(e.replayed_hash(), hash_ct(*e.ctx, e.eager()));
}

TEST_P(GraphCapture, NestingIsRefused) {
  GraphEnv e(backend());
  Ciphertext out;
  Graph g = e.capture(out);
  EXPECT_THROW((void)e.ctx->capture([&] { g.replay(); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.ctx->capture([] {}); }), BackendError);
  EXPECT_THROW(e.ctx->backend().end_capture(), BackendError);
  EXPECT_FALSE(e.ctx->backend().capturing());
}

// Memory: an input dropped inside the function keeps its memory, which the replays read;
// temporaries freed during the capture are reused by it while more allocations follow; outputs
// outlive their graph, and a graph may die while another capture runs.
TEST_P(GraphCapture, MemoryLifetimes) {
  GraphEnv e(backend());
  Ciphertext x = e.evaluator.clone(e.a);
  const u64 sum = hash_ct(*e.ctx, e.evaluator.add(e.a, e.b));
  Ciphertext out;
  auto g = std::make_unique<Graph>(e.ctx->capture([&] {
    out = e.evaluator.add(x, e.b);
    x = Ciphertext();
  }));
  Ciphertext junk = e.evaluator.clone(e.b);  // pool reuse must not hand out x's old memory
  g->replay();
  g->replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), sum);
  Ciphertext out2;
  Graph g2 = e.ctx->capture([&] {
    g.reset();  // a graph destroyed during another capture
    out2 = e.eager();
  });
  g2.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out2), hash_ct(*e.ctx, e.eager()));
  EXPECT_EQ(hash_ct(*e.ctx, out), sum) << "outputs outlive their graph";
}

TEST_P(GraphCapture, BadArgumentsFailAtCapture) {
  GraphEnv e(backend());
  Backend& be = e.ctx->backend();
  RnsPoly p = be.make_poly(e.ctx->level(1).q_basis), q = be.make_poly(e.ctx->level(2).q_basis);
  EXPECT_THROW((void)e.ctx->capture([&] { be.add(p.cref(), q.cref(), p.ref()); }), ParameterError);
  EXPECT_FALSE(be.capturing());
}

TEST_P(GraphCapture, SetInputChecksShape) {
  GraphEnv e(backend());
  Ciphertext out;
  Graph g = e.capture(out);
  EXPECT_THROW(g.set_input(e.a, e.encrypt(random_slots(8), 3)), LevelError);
  Graph empty;
  EXPECT_THROW(empty.replay(), ContextError);
}

// A unit with a plaintext operand that changes between replays (a per-step factor): each replay
// after set_input gives the words of eager execution with the new plaintext, on fresh inputs too.
TEST_P(GraphCapture, PlaintextInputsReplayLikeEager) {
  GraphEnv e(backend());
  auto unit = [&](const Ciphertext& x, const Plaintext& m) {
    const Ciphertext t = e.evaluator.rescale(e.evaluator.multiply_plain(x, m));
    return e.evaluator.add(e.evaluator.rotate(t, 1, e.gk), t);
  };
  Plaintext mask = e.encoder.encode(random_slots(2048), 4);
  Ciphertext out;
  Graph g = e.ctx->capture([&] { out = unit(e.a, mask); });
  for (int step = 0; step < 3; ++step) {
    const Plaintext m = e.encoder.encode(random_slots(2048), 4);
    const Ciphertext x = e.encrypt(random_slots(2048), 4);
    g.set_input(mask, m);
    g.set_input(e.a, x);
    g.replay();
    EXPECT_EQ(hash_ct(*e.ctx, out), hash_ct(*e.ctx, unit(x, m))) << "step " << step;
  }
  EXPECT_THROW(g.set_input(mask, e.encoder.encode(random_slots(2048), 3)), LevelError);
  Plaintext scaled = e.encoder.encode(random_slots(2048), 4);
  scaled.set_scale(scaled.scale() * 2);
  EXPECT_THROW(g.set_input(mask, scaled), ScaleError);
  EXPECT_THROW(g.set_input(mask, Plaintext()), ContextError);
}

// A whole bootstrapping (test_boot_n12, 64 slots) captured once: replays give the eager words,
// which are the CPU's, and decrypt to the input.
TEST_P(GraphCapture, BootstrapReplayMatchesEagerAndTheCpu) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  const auto z = random_slots(cfg.slots);
  const auto eager_words = [&](BackendChoice b) {
    SeededBootEnv ref(context_on(b, boot_test_params()), cfg);
    return hash_ct(*ref.ctx, ref.boot.bootstrap(ref.encrypt(z, 0), ref.keys));
  };
  // On the CPU the eager run below is the reference.
  const u64 cpu_hash = on_cpu() ? 0 : eager_words(BackendChoice::kCpu);

  SeededBootEnv e(context_on(backend(), boot_test_params()), cfg);
  const Ciphertext ct = e.encrypt(z, 0);
  const Ciphertext eager = e.boot.bootstrap(ct, e.keys);
  const u64 want = on_cpu() ? hash_ct(*e.ctx, eager) : cpu_hash;
  EXPECT_EQ(hash_ct(*e.ctx, eager), want) << "eager bootstrapping differs from the CPU";

  Ciphertext out;
  Graph g = e.ctx->capture([&] { out = e.boot.bootstrap(ct, e.keys); });
  std::printf("[graph] bootstrap test_boot_n12 (64 slots): %zu kernels, %zu nodes\n",
              g.kernel_count(), g.node_count());
  for (int rep = 0; rep < 3; ++rep) {
    g.replay();
    EXPECT_EQ(hash_ct(*e.ctx, out), want) << "replay " << rep;
  }
  EXPECT_EQ(out.level(), eager.level());
  EXPECT_GE(bits(e.decrypt(out), z), 12);
}

THEO_INSTANTIATE_ON_BACKEND(GraphCapture);

}  // namespace
}  // namespace theo::test
