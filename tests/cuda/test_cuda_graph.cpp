// CUDA Graphs (Context::capture on the CUDA backend): a replay gives the words of eager execution
// on the GPU and of the CPU reference, for an op sequence and for a whole bootstrapping; host ops
// are refused while capturing and leave the backend usable. Prints kernels per graph and the
// time of eager execution against a replay.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "circuits/circuits_test_util.h"
#include "theo/ckks/graph.h"

namespace theo::test {
namespace {

ContextPtr context(BackendChoice backend, const ParameterSet& p) {
  ContextOptions o;
  o.backend = backend;
  o.allow_insecure = true;
  return Context::create(p, o);
}

Ciphertext sequence(const Evaluator& ev, const Ciphertext& a, const Ciphertext& b,
                    const RelinKey& rlk, const GaloisKeys& gk) {
  Ciphertext t = ev.rescale(ev.multiply(a, b, rlk));
  Ciphertext r = ev.rotate(t, 1, gk);
  Ciphertext s = ev.add(r, t);
  s = ev.add_const(s, {0.25, -0.5});
  s = ev.multiply_relin_rescale(s, ev.rotate(s, 3, gk), rlk);
  return ev.sub(s, ev.negate(s));
}

// Keys and inputs from fixed seeds, so that both backends hold the same words.
struct SeqEnv {
  SeqEnv(BackendChoice backend, const std::vector<Cplx>& za, const std::vector<Cplx>& zb)
      : ctx(context(backend, generated_params(12, 4))),
        keygen(ctx, seed_of(7)),
        sk(keygen.create_secret_key()),
        rlk(keygen.create_relin_key(sk)),
        gk(keygen.create_galois_keys(sk, {1, 3})),
        encoder(ctx),
        encryptor(ctx, sk, seed_of(9)),
        ev(ctx) {
    a = encryptor.encrypt(encoder.encode(za, 4));
    b = encryptor.encrypt(encoder.encode(zb, 4));
  }
  Ciphertext eager() const { return sequence(ev, a, b, rlk, gk); }

  ContextPtr ctx;
  KeyGenerator keygen;
  SecretKey sk;
  RelinKey rlk;
  GaloisKeys gk;
  Encoder encoder;
  Encryptor encryptor;
  Evaluator ev;
  Ciphertext a, b;
};

TEST(CudaGraph, SequenceMatchesEagerAndCpu) {
  const auto za = random_slots(2048), zb = random_slots(2048), zc = random_slots(2048);
  SeqEnv cpu(BackendChoice::kCpu, za, zb), gpu(BackendChoice::kCuda, za, zb);
  ASSERT_EQ(gpu.ctx->backend().kind(), BackendKind::kCuda);
  const u64 want = hash_ct(*cpu.ctx, cpu.eager());
  EXPECT_EQ(hash_ct(*gpu.ctx, gpu.eager()), want) << "eager CUDA differs from the CPU";

  Ciphertext out_cpu, out_gpu;
  Graph g_cpu = cpu.ctx->capture([&] { out_cpu = cpu.eager(); });
  Graph g_gpu = gpu.ctx->capture([&] { out_gpu = gpu.eager(); });
  ASSERT_TRUE(g_gpu.captured());
  std::printf("[graph] sequence: %zu kernels, %zu nodes on CUDA; %zu calls on the CPU\n",
              g_gpu.kernel_count(), g_gpu.node_count(), g_cpu.kernel_count());
  EXPECT_GT(g_gpu.kernel_count(), 10u);
  for (int rep = 0; rep < 2; ++rep) {
    g_gpu.replay();
    g_cpu.replay();
    EXPECT_EQ(hash_ct(*gpu.ctx, out_gpu), want) << "CUDA replay " << rep;
    EXPECT_EQ(hash_ct(*cpu.ctx, out_cpu), want) << "CPU replay " << rep;
  }
  // New input data is picked up by the next replay, on both backends alike.
  g_gpu.set_input(gpu.a, gpu.encryptor.encrypt(gpu.encoder.encode(zc, 4)));
  g_cpu.set_input(cpu.a, cpu.encryptor.encrypt(cpu.encoder.encode(zc, 4)));
  g_gpu.replay();
  g_cpu.replay();
  const u64 want2 = hash_ct(*cpu.ctx, cpu.eager());
  EXPECT_NE(want2, want);
  EXPECT_EQ(hash_ct(*gpu.ctx, out_gpu), want2);
  EXPECT_EQ(hash_ct(*cpu.ctx, out_cpu), want2);
}

// Programmatic dependent launch (cuda::Tuning::programmatic_launch) on and off: the CPU's words,
// eager and from a graph; with it on, the graph's kernels are chained by programmatic edges
// (sm_90+).
TEST(CudaGraph, ProgrammaticLaunchOnAndOffGiveTheSameWords) {
  const auto za = random_slots(2048), zb = random_slots(2048);
  SeqEnv cpu(BackendChoice::kCpu, za, zb), gpu(BackendChoice::kCuda, za, zb);
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

TEST(CudaGraph, HostOpsAreRefusedAndTheBackendStaysUsable) {
  const auto za = random_slots(2048), zb = random_slots(2048);
  SeqEnv e(BackendChoice::kCuda, za, zb);
  Backend& be = e.ctx->backend();
  std::vector<u32> host(e.a.poly(0).words());
  try {
    (void)e.ctx->capture([&] {
      const Ciphertext t = e.ev.add(e.a, e.b);
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
  EXPECT_THROW((void)e.ctx->capture([&] { be.synchronize(); }), BackendError);
  EXPECT_THROW(
      (void)e.ctx->capture([&] { (void)be.make_bconv(e.ctx->level(1).q_basis, e.ctx->p_basis()); }),
      BackendError);
  EXPECT_THROW((void)e.ctx->capture([&] { (void)e.ev.rotate(e.a, 2, e.gk); }), MissingKeyError);
  Ciphertext out;
  Graph g = e.ctx->capture([&] { out = e.eager(); });
  EXPECT_THROW((void)e.ctx->capture([&] { g.replay(); }), BackendError);
  EXPECT_FALSE(be.capturing());
  // Eager and captured work still run correctly afterwards.
  const u64 want = hash_ct(*e.ctx, e.eager());
  g.replay();
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
}

// Memory: temporaries reuse blocks within the capture, inputs dropped inside stay readable,
// outputs outlive the graph, and graphs die while other captures run.
TEST(CudaGraph, MemoryLifetimes) {
  const auto za = random_slots(2048), zb = random_slots(2048);
  SeqEnv e(BackendChoice::kCuda, za, zb);
  const u64 sum = hash_ct(*e.ctx, e.ev.add(e.a, e.b));
  Ciphertext x = e.ev.clone(e.a);
  Ciphertext out;
  auto g = std::make_unique<Graph>(e.ctx->capture([&] {
    out = e.ev.add(x, e.b);
    x = Ciphertext();
  }));
  Ciphertext junk = e.ev.clone(e.b);  // pool reuse must not hand out x's old memory
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A whole bootstrapping (test_boot_n12, 64 slots) captured once: replays equal eager execution
// word for word, and both equal the CPU.
TEST(CudaGraph, BootstrapMatchesEagerAndCpu) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  const auto z = random_slots(cfg.slots);
  u64 cpu_hash = 0;
  {
    const ContextPtr ctx = context(BackendChoice::kCpu, boot_test_params());
    KeyGenerator keygen(ctx, seed_of(5));
    const SecretKey sk = keygen.create_secret_key();
    Encoder encoder(ctx);
    Encryptor enc(ctx, sk, seed_of(9));
    const Bootstrapper boot(ctx, cfg);
    const BootstrappingKeys keys = boot.generate_keys(keygen, sk, false);
    cpu_hash = hash_ct(*ctx, boot.bootstrap(enc.encrypt(encoder.encode(z, 0)), keys));
  }
  const ContextPtr ctx = context(BackendChoice::kCuda, boot_test_params());
  KeyGenerator keygen(ctx, seed_of(5));
  const SecretKey sk = keygen.create_secret_key();
  Encoder encoder(ctx);
  Encryptor enc(ctx, sk, seed_of(9));
  Decryptor dec(ctx, sk);
  const Bootstrapper boot(ctx, cfg);
  const BootstrappingKeys keys = boot.generate_keys(keygen, sk, false);
  const Ciphertext ct = enc.encrypt(encoder.encode(z, 0));
  const u64 eager_hash = hash_ct(*ctx, boot.bootstrap(ct, keys));
  EXPECT_EQ(eager_hash, cpu_hash) << "eager CUDA bootstrapping differs from the CPU";

  Ciphertext out;
  Graph g = ctx->capture([&] { out = boot.bootstrap(ct, keys); });
  std::printf("[graph] bootstrap test_boot_n12 (64 slots): %zu kernels, %zu nodes\n",
              g.kernel_count(), g.node_count());
  for (int rep = 0; rep < 3; ++rep) {
    g.replay();
    EXPECT_EQ(hash_ct(*ctx, out), eager_hash) << "replay " << rep;
  }
  EXPECT_GE(bits(encoder.decode(dec.decrypt(out)), z), 12);

  // Launch overhead removed, at this small size (bench/graph_cases.cpp measures bootparam_40).
  Backend& be = ctx->backend();
  std::vector<double> eager_us, graph_us;
  for (int rep = 0; rep < 11; ++rep) {
    be.synchronize();
    auto t0 = std::chrono::steady_clock::now();
    { const Ciphertext r = boot.bootstrap(ct, keys); }
    be.synchronize();
    auto t1 = std::chrono::steady_clock::now();
    eager_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    t0 = std::chrono::steady_clock::now();
    g.replay();
    be.synchronize();
    t1 = std::chrono::steady_clock::now();
    graph_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::printf(
      "[graph] bootstrap test_boot_n12: eager %.1f us, graph replay %.1f us (median of 11)\n",
      median(eager_us), median(graph_us));
}

}  // namespace
}  // namespace theo::test
