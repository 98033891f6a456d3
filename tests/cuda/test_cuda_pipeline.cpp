// Multi-polynomial caching and complementary pipelining on the CUDA backend: the second stream's
// fork / join protocol, the L2 query, and every key-switching mechanism (batched, hoisted,
// pipelined; a whole bootstrapping) word for word against the CPU reference with the
// optimizations off, eagerly and replayed from a CUDA Graph (where the fork becomes parallel
// branches joined by edges).

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "circuits/circuits_test_util.h"
#include "ckks/key_switch_fixture.h"
#include "theo/backend/factory.h"
#include "theo/ckks/evaluator_batch.h"
#include "theo/ckks/graph.h"
#include "theo/math/primes.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

ContextPtr context(BackendChoice backend, const ParameterSet& p, const Optimizations& opt) {
  return context_with(backend, p, opt);
}

Optimizations all_with_cache(std::size_t cache) {
  Optimizations o = Optimizations::all();
  o.cache_bytes = cache;
  return o;
}

// With output-chunked key switching (off by default) wherever the cache does not hold a ModUp.
Optimizations chunked_with_cache(std::size_t cache) {
  Optimizations o = all_with_cache(cache);
  o.output_chunking = true;
  return o;
}

// The tests' Context (N = 2^12, 5 levels) on `backend`.
struct Fixture : KeySwitchFixture {
  Fixture(BackendChoice backend, const Optimizations& opt)
      : KeySwitchFixture(backend, generated_params(12, 5), opt) {}
};

// The scheduled mechanisms, their outputs kept (so that a capture can be replayed and read).
struct Outputs {
  std::vector<Ciphertext> cts;
  std::vector<ExtendedCiphertext> ext;
};

void run_mechanisms(const Fixture& f, Outputs& o) {
  const Evaluator& ev = f.ev;
  o.cts.push_back(ev.rotate(f.a[0], 1, f.gk));
  o.cts.push_back(ev.conjugate(f.a[1], f.gk));
  for (Ciphertext& c : ev.rotate_hoisted(f.a[0], {1, 0, -2, 5, 3}, f.gk))
    o.cts.push_back(std::move(c));
  const int rots[] = {1, -2, 0};
  for (ExtendedCiphertext& e : ev.rotate_hoisted_extended(f.a[1], rots, f.gk))
    o.ext.push_back(std::move(e));
  const Ciphertext* xs[] = {&f.a[0], &f.a[1], &f.low, &f.a[2]};
  const Ciphertext* ys[] = {&f.b[0], &f.b[1], &f.b[2], &f.b[2]};
  for (Ciphertext& c : multiply_batch(ev, xs, ys, f.rlk))
    o.cts.push_back(std::move(c));
  for (Ciphertext& c : multiply_relin_rescale_batch(ev, xs, ys, f.rlk))
    o.cts.push_back(std::move(c));
  const int shifts[] = {1, 5, -2, 0};
  for (Ciphertext& c : rotate_batch(ev, xs, shifts, f.gk))
    o.cts.push_back(std::move(c));
  auto giants = ev.rotate_hoisted_extended(f.a[2], rots, f.gk);
  const int giant_shifts[] = {3, 0, -2};
  for (ExtendedCiphertext& e : mod_down_rotate_extended_batch(ev, giants, giant_shifts, f.gk))
    o.ext.push_back(std::move(e));
}

Hashes hash_outputs(const Context& ctx, const Outputs& o) {
  Hashes h;
  for (std::size_t i = 0; i < o.cts.size(); ++i)
    h["ct " + std::to_string(i)] = hash_ct(ctx, o.cts[i]);
  for (std::size_t i = 0; i < o.ext.size(); ++i)
    h["ext " + std::to_string(i)] = hash_poly(ctx, o.ext[i].c0, hash_poly(ctx, o.ext[i].c1));
  return h;
}

void expect_same(const Hashes& got, const Hashes& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [k, v] : want)
    EXPECT_EQ(got.at(k), v) << k << ": " << what << " differs from the CPU without optimizations";
}

const Hashes& cpu_reference() {
  static const Hashes h = [] {
    Fixture f(BackendChoice::kCpu, Optimizations::none());
    Outputs o;
    run_mechanisms(f, o);
    return hash_outputs(*f.ctx, o);
  }();
  return h;
}

TEST(CudaPipeline, ReportsTheL2AndPlansBatches) {
  Fixture f(BackendChoice::kCuda, Optimizations::all());
  ASSERT_EQ(f.ctx->backend().kind(), BackendKind::kCuda);
  const std::size_t l2 = f.ctx->backend().l2_bytes();
  std::printf("[pipeline] device L2: %.1f MB\n", static_cast<double>(l2) / 1e6);
  EXPECT_GT(l2, std::size_t{1} << 20);
  const KeySwitchPlanner& ks = f.ctx->key_switch_planner();
  EXPECT_EQ(ks.cache_bytes(), l2);
  const std::size_t per = ks.footprint(f.top).per_switch();
  EXPECT_EQ(ks.batch_size(1000, per), std::min<std::size_t>(1000, l2 / per));
}

TEST(CudaPipeline, EagerMatchesCpuUnderEveryOptimization) {
  const Hashes& want = cpu_reference();
  const std::map<std::string, Optimizations> configs = {
      {"none", Optimizations::none()},
      {"all", Optimizations::all()},
      {"all, batches of 1", all_with_cache(1)},
      {"all, cache of 1 MB", all_with_cache(1u << 20)},
      {"all + output chunking, batches of 1", chunked_with_cache(1)},
  };
  for (const auto& [name, opt] : configs) {
    Fixture f(BackendChoice::kCuda, opt);
    Outputs o;
    run_mechanisms(f, o);
    expect_same(hash_outputs(*f.ctx, o), want, "eager CUDA (" + name + ")");
  }
}

TEST(CudaPipeline, GraphReplayMatchesCpu) {
  const Hashes& want = cpu_reference();
  for (const Optimizations& opt :
       {Optimizations::all(), all_with_cache(1u << 20), chunked_with_cache(1u << 20)}) {
    Fixture f(BackendChoice::kCuda, opt);
    Outputs o;
    Graph g = f.ctx->capture([&] { run_mechanisms(f, o); });
    ASSERT_TRUE(g.captured());
    std::printf("[pipeline] mechanisms captured: %zu kernels, %zu nodes\n", g.kernel_count(),
                g.node_count());
    for (int rep = 0; rep < 2; ++rep) {
      g.replay();
      expect_same(hash_outputs(*f.ctx, o), want, "CUDA graph replay " + std::to_string(rep));
    }
  }
}

// N = 2^log_n with `count` NTT primes of 30 bits.
RingParams fork_ring(u32 log_n, u32 count) {
  RingParams ring;
  ring.log_n = log_n;
  ring.primes = find_ntt_primes(log_n, 30, count);
  return ring;
}

// Two inputs of `limbs` limbs over the first primes of `ring`, with canonical words that differ
// from limb to limb.
void fork_inputs(const RingParams& ring, u32 limbs, std::vector<u32>& x, std::vector<u32>& y) {
  const std::size_t n = std::size_t{1} << ring.log_n;
  x.resize(limbs * n);
  y.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const u64 q = ring.primes[i / n];
    x[i] = static_cast<u32>((i * 7919 + 13) % q);
    y[i] = static_cast<u32>((i * 104729 + 5) % q);
  }
}

// A branch and the main stream run concurrently on disjoint polys; the join orders what follows.
TEST(CudaPipeline, ForkRunsBranchesAndChecksTheProtocol) {
  const RingParams ring = fork_ring(12, 4);
  const auto cpu = make_cpu_backend(ring, 1);
  const auto gpu = make_cuda_backend(ring);
  EXPECT_EQ(cpu->l2_bytes(), 0u);
  EXPECT_GT(gpu->l2_bytes(), 0u);
  const Basis basis = Basis::range(0, 4);
  std::vector<u32> x, y;
  fork_inputs(ring, 4, x, y);
  const auto run = [&](Backend& be) {
    RnsPoly a = be.make_poly(basis), b = be.make_poly(basis), c = be.make_poly(basis);
    be.upload(x.data(), a.ref());
    be.upload(y.data(), b.ref());
    for (int rep = 0; rep < 3; ++rep) {
      be.fork();
      const PolyRef pa[] = {a.ref()};
      be.ntt(pa);  // branch
      be.end_fork();
      const PolyRef pb[] = {b.ref()};
      be.intt(pb);  // main, concurrently
      be.join();
      be.mul(a.cref(), b.cref(), c.ref());  // after both
      be.copy(c.cref(), a.ref());
    }
    std::vector<u32> out(x.size());
    be.download(c.cref(), out.data());
    return out;
  };
  EXPECT_EQ(run(*gpu), run(*cpu));

  RnsPoly p = gpu->make_poly(basis);
  EXPECT_THROW(gpu->join(), BackendError);
  EXPECT_THROW(gpu->end_fork(), BackendError);
  gpu->fork();
  EXPECT_THROW(gpu->fork(), BackendError);
  EXPECT_THROW(gpu->upload(x.data(), p.ref()), BackendError);
  EXPECT_THROW(gpu->begin_capture(), BackendError);
  gpu->synchronize();  // waits for both streams
  gpu->join();
  gpu->download(p.cref(), y.data());  // usable again
}

// Both lanes of a fork make and drop temporaries. A poly made before the fork and dropped by the
// branch while its reads may still be queued must not be handed to the main lane before the join
// (the pool would let the main lane overwrite it); a lane's own temporaries are reused by that
// lane. Eager and captured (replayed three times), word for word against the CPU, and the eager
// run gives back every byte it took.
TEST(CudaPipeline, ForkLanesMakeAndDropTemporaries) {
  const RingParams ring = fork_ring(16, 12);
  const auto cpu = make_cpu_backend(ring, 1);
  const auto gpu = make_cuda_backend(ring);
  const Basis basis = Basis::range(0, 12);
  std::vector<u32> x, y;
  fork_inputs(ring, 12, x, y);
  const auto body = [&](Backend& be, ConstPolyRef a, ConstPolyRef b, PolyRef ra, PolyRef rb) {
    auto pre = std::make_unique<RnsPoly>(be.make_poly(basis));
    be.copy(a, pre->ref());
    be.fork();  // branch: reads pre many times, then drops it
    {
      RnsPoly t = be.make_poly(basis);
      for (int i = 0; i < 8; ++i) {
        be.copy(pre->cref(), t.ref());
        const PolyRef pt[] = {t.ref()};
        be.ntt(pt);
        be.intt(pt);
      }
      pre.reset();
      RnsPoly t2 = be.make_poly(basis);
      be.mul(t.cref(), t.cref(), t2.ref());
      be.add(t2.cref(), a, ra);
    }
    be.end_fork();  // main lane: makes polys while the branch may still read pre
    for (int i = 0; i < 3; ++i) {
      RnsPoly u = be.make_poly(basis);
      be.mul(b, b, u.ref());
      const PolyRef pu[] = {u.ref()};
      be.intt(pu);
      be.add(u.cref(), b, rb);
    }
    be.join();
  };
  const auto run = [&](Backend& be, bool capture) {
    RnsPoly a = be.make_poly(basis), b = be.make_poly(basis);
    RnsPoly ra = be.make_poly(basis), rb = be.make_poly(basis), c = be.make_poly(basis);
    be.upload(x.data(), a.ref());
    be.upload(y.data(), b.ref());
    std::vector<std::vector<u32>> outs;
    const auto read = [&] {
      be.mul(ra.cref(), rb.cref(), c.ref());
      std::vector<u32> out(x.size());
      be.download(c.cref(), out.data());
      outs.push_back(std::move(out));
    };
    if (!capture) {
      be.synchronize();
      const std::size_t live = be.memory_report().live_bytes;
      body(be, a.cref(), b.cref(), ra.ref(), rb.ref());
      be.synchronize();
      EXPECT_EQ(be.memory_report().live_bytes, live) << "a fork kept memory after its join";
      read();
      return outs;
    }
    be.begin_capture();
    body(be, a.cref(), b.cref(), ra.ref(), rb.ref());
    const std::unique_ptr<CapturedWork> work = be.end_capture();
    for (int r = 0; r < 3; ++r) {
      be.fill_zero(ra.ref());
      be.fill_zero(rb.ref());
      work->replay();
      read();
    }
    return outs;
  };
  const std::vector<u32> want = run(*cpu, false).front();
  for (int rep = 0; rep < 3; ++rep)
    EXPECT_EQ(run(*gpu, false).front(), want) << "eager, repetition " << rep;
  for (const auto& out : run(*gpu, true))
    EXPECT_EQ(out, want) << "graph replay";
}

// A whole bootstrapping (double-hoisted, giant steps batched, pipelined ModDowns) with everything
// on, eager and from a graph, against the CPU with everything off.
TEST(CudaPipeline, BootstrapMatchesCpuWithEverythingOn) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  const auto z = fixed_slots(cfg.slots, 0.3);
  const auto run = [&](BackendChoice backend, const Optimizations& opt, bool graph) {
    const ContextPtr ctx = context(backend, boot_test_params(), opt);
    KeyGenerator keygen(ctx, seed_of(5));
    const SecretKey sk = keygen.create_secret_key();
    Encoder encoder(ctx);
    Encryptor enc(ctx, sk, seed_of(9));
    const Bootstrapper boot(ctx, cfg);
    const BootstrappingKeys keys = boot.generate_keys(keygen, sk, false);
    const Ciphertext ct = enc.encrypt(encoder.encode(z, 0));
    if (!graph) return hash_ct(*ctx, boot.bootstrap(ct, keys));
    Ciphertext out;
    Graph g = ctx->capture([&] { out = boot.bootstrap(ct, keys); });
    std::printf("[pipeline] bootstrap test_boot_n12 captured: %zu kernels, %zu nodes\n",
                g.kernel_count(), g.node_count());
    g.replay();
    const u64 first = hash_ct(*ctx, out);
    g.replay();
    EXPECT_EQ(hash_ct(*ctx, out), first);
    return first;
  };
  const u64 want = run(BackendChoice::kCpu, Optimizations::none(), false);
  EXPECT_EQ(run(BackendChoice::kCuda, Optimizations::all(), false), want);
  EXPECT_EQ(run(BackendChoice::kCuda, Optimizations::all(), true), want);
  EXPECT_EQ(run(BackendChoice::kCuda, Optimizations::none(), false), want);
}

}  // namespace
}  // namespace theo::test
