// Context::capture / Graph on the CPU backend: a replay gives the words of eager execution, reads
// its inputs' current contents, and ops that need the host are refused while capturing.

#include <gtest/gtest.h>

#include <string>

#include "circuits/circuits_test_util.h"
#include "theo/ckks/graph.h"

namespace theo::test {
namespace {

// The captured sequence: HMult + relinearize, rescale, rotation, addition, constants.
Ciphertext sequence(const Evaluator& ev, const Ciphertext& a, const Ciphertext& b,
                    const RelinKey& rlk, const GaloisKeys& gk) {
  Ciphertext t = ev.rescale(ev.multiply(a, b, rlk));
  Ciphertext r = ev.rotate(t, 1, gk);
  Ciphertext s = ev.add(r, t);
  s = ev.add_const(s, {0.25, -0.5});
  s = ev.multiply_relin_rescale(s, ev.rotate(s, 3, gk), rlk);
  return ev.sub(s, ev.negate(s));
}

struct GraphEnv : Env {
  GraphEnv() : Env(generated_params(12, 4), 7), rlk(keygen.create_relin_key(sk)) {
    gk = keygen.create_galois_keys(sk, {1, 3});
    a = encrypt(random_slots(ctx->max_slots()), 4);
    b = encrypt(random_slots(ctx->max_slots()), 4);
  }
  Ciphertext eager() const { return sequence(evaluator, a, b, rlk, gk); }
  Graph capture(Ciphertext& out) const {
    return ctx->capture([&] { out = sequence(evaluator, a, b, rlk, gk); });
  }

  RelinKey rlk;
  GaloisKeys gk;
  Ciphertext a, b;
};

TEST(Graph, ReplayMatchesEager) {
  GraphEnv e;
  const u64 want = hash_ct(*e.ctx, e.eager());
  Ciphertext out;
  Graph g = e.capture(out);
  EXPECT_TRUE(g.captured());
  EXPECT_GT(g.kernel_count(), 10u);
  EXPECT_FALSE(e.ctx->backend().capturing());
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want) << "a second replay must give the same words";
}

TEST(Graph, CaptureRunsNothing) {
  GraphEnv e;
  const u64 before = hash_ct(*e.ctx, e.a);
  Backend& be = e.ctx->backend();
  Graph g =
      e.ctx->capture([&] { be.add(e.a.poly(0).cref(), e.b.poly(0).cref(), e.a.poly(0).ref()); });
  EXPECT_EQ(hash_ct(*e.ctx, e.a), before) << "nothing runs while capturing";
  EXPECT_EQ(g.kernel_count(), 1u);
}

// A backend op that writes its input in place: every replay reads the current contents, so
// replays accumulate exactly as eager calls do.
TEST(Graph, InPlaceWritesAccumulate) {
  GraphEnv e;
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
TEST(Graph, InPlaceEvaluatorCallsRebind) {
  GraphEnv e;
  Ciphertext x = e.evaluator.clone(e.a);
  Graph g = e.ctx->capture([&] { e.evaluator.add_inplace(x, e.b); });
  const u64 once = hash_ct(*e.ctx, e.evaluator.add(e.a, e.b));
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, x), once);
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, x), once);
}

TEST(Graph, OutputsOutliveTheGraph) {
  GraphEnv e;
  const u64 want = hash_ct(*e.ctx, e.eager());
  Ciphertext out;
  {
    Graph g = e.capture(out);
    g.replay();
  }
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
}

TEST(Graph, ReplayReadsCurrentInputs) {
  GraphEnv e;
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

TEST(Graph, DisabledRunsEagerlyWithTheSameWords) {
  GraphEnv e;
  const u64 want = hash_ct(*e.ctx, e.eager());
  ContextOptions o = e.ctx->options();
  o.graphs = false;
  const ContextPtr off = Context::create(e.ctx->params(), o);
  Ciphertext out;
  Graph g = e.capture(out);
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want);

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

TEST(Graph, HostOpsAreRefusedAndTheBackendStaysUsable) {
  GraphEnv e;
  std::vector<u32> host(e.a.poly(0).words());
  try {
    (void)e.ctx->capture([&] {
      const Ciphertext t = e.evaluator.add(e.a, e.b);
      e.ctx->backend().download(t.poly(0).cref(), host.data());
    });
    FAIL() << "download inside a capture must throw";
  } catch (const BackendError& err) {
    EXPECT_NE(std::string(err.what()).find("download is not allowed while capturing"),
              std::string::npos)
        << err.what();
  }
  EXPECT_FALSE(e.ctx->backend().capturing());
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.decrypt(e.a); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.encrypt(random_slots(8), 4); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { e.ctx->backend().synchronize(); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] {
    (void)e.ctx->backend().make_bconv(e.ctx->level(1).q_basis, e.ctx->p_basis());
  }),
               BackendError);
  // Any exception of the function drops the capture.
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.evaluator.rotate(e.a, 2, e.gk); }),
               MissingKeyError);
  EXPECT_FALSE(e.ctx->backend().capturing());
  // Everything still works eagerly and captured.
  const u64 want = hash_ct(*e.ctx, e.eager());
  Ciphertext out;
  Graph g = e.capture(out);
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
}

TEST(Graph, NestingIsRefused) {
  GraphEnv e;
  Ciphertext out;
  Graph g = e.capture(out);
  EXPECT_THROW((void)e.ctx->capture([&] { g.replay(); }), BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.ctx->capture([] {}); }), BackendError);
  EXPECT_THROW(e.ctx->backend().end_capture(), BackendError);
  EXPECT_FALSE(e.ctx->backend().capturing());
}

// An input dropped inside the function: the capture keeps its memory, which the replays read.
TEST(Graph, InputFreedInsideStaysReadable) {
  GraphEnv e;
  Ciphertext x = e.evaluator.clone(e.a);
  const u64 want = hash_ct(*e.ctx, e.evaluator.add(e.a, e.b));
  Ciphertext out;
  Graph g = e.ctx->capture([&] {
    out = e.evaluator.add(x, e.b);
    x = Ciphertext();
  });
  // Temporaries freed during the capture are reused by it; here, more allocations follow.
  Ciphertext junk = e.evaluator.clone(e.b);
  g.replay();
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
}

TEST(Graph, BadArgumentsFailAtCapture) {
  GraphEnv e;
  Backend& be = e.ctx->backend();
  RnsPoly p = be.make_poly(e.ctx->level(1).q_basis), q = be.make_poly(e.ctx->level(2).q_basis);
  EXPECT_THROW((void)e.ctx->capture([&] { be.add(p.cref(), q.cref(), p.ref()); }), ParameterError);
  EXPECT_FALSE(be.capturing());
}

TEST(Graph, SetInputChecksShape) {
  GraphEnv e;
  Ciphertext out;
  Graph g = e.capture(out);
  EXPECT_THROW(g.set_input(e.a, e.encrypt(random_slots(8), 3)), LevelError);
  Graph empty;
  EXPECT_THROW(empty.replay(), ContextError);
}

// Bootstrapping captured once and replayed gives the eager words (the CUDA test compares the
// same on the GPU and against this backend).
TEST(Graph, BootstrapReplayMatchesEager) {
  Env e(boot_test_params(), 5);
  BootstrapConfig cfg;
  cfg.slots = 64;
  const Bootstrapper boot(e.ctx, cfg);
  const BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk, false);
  const auto z = random_slots(cfg.slots);
  const Ciphertext ct = e.encrypt(z, 0);
  const Ciphertext eager = boot.bootstrap(ct, keys);
  Ciphertext out;
  Graph g = e.ctx->capture([&] { out = boot.bootstrap(ct, keys); });
  std::printf("[graph] bootstrap N=2^12 (64 slots): %zu recorded calls\n", g.kernel_count());
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), hash_ct(*e.ctx, eager));
  EXPECT_EQ(out.level(), eager.level());
  EXPECT_GE(bits(e.decrypt(out), z), 12);
}

}  // namespace
}  // namespace theo::test
