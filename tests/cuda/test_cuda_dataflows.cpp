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
#include "theo/backend/factory.h"
#include "theo/ckks/graph.h"
#include "theo/math/parameter_grid.h"

namespace theo::test {
namespace {

std::vector<ParameterSet> sets() {
  return {generated_params(12, 5), generate_grid_parameters({12, 10, 4})};
}

ContextPtr context(BackendChoice backend, const ParameterSet& p, const Optimizations& opt,
                   const KeySwitchOptions& ks) {
  ContextOptions o;
  o.backend = backend;
  o.allow_insecure = true;
  o.optimizations = opt;
  o.key_switching = ks;
  o.key_switching.tuning.use_table = false;
  return Context::create(p, o);
}

KeySwitchOptions prepared() {
  KeySwitchOptions ks;
  ks.prepare_all = true;
  return ks;
}

// The keys of every Context in this run: one fresh seed per process, printed, and shared by the
// reference and the Contexts compared with it (they must hold the same keys).
const Prng::Seed& key_seed() {
  static const Prng::Seed seed = [] {
    Prng::Seed s{};
    std::random_device rd;
    for (std::uint8_t& b : s)
      b = static_cast<std::uint8_t>(rd());
    std::printf("[key seed] ");
    for (const std::uint8_t b : s)
      std::printf("%02x", b);
    std::printf("\n");
    return s;
  }();
  return seed;
}

struct Keys {
  explicit Keys(const ContextPtr& c)
      : ctx(c),
        kg(ctx, key_seed()),
        sk(kg.create_secret_key()),
        rlk(kg.create_relin_key(sk)),
        gk(kg.create_galois_keys(sk, {3}, false)),
        ev(ctx) {}
  ContextPtr ctx;
  KeyGenerator kg;
  SecretKey sk;
  RelinKey rlk;
  GaloisKeys gk;
  Evaluator ev;
};

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
  RnsPoly in = be.make_poly(lv.q_basis), o0 = be.make_poly(lv.q_basis),
          o1 = be.make_poly(lv.q_basis);
  be.upload(words.data(), in.ref());
  const KeySwitcher& ks = k.ev.key_switcher();
  if (forced == nullptr) {
    ks.switch_key(in.cref(), level, k.rlk.key(), o0.ref(), o1.ref());
  } else {
    const ConstPolyRef ins[] = {in.cref()};
    const SwitchingKey* keys[] = {&k.rlk.key()};
    const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};
    ks.run({.level = level,
            .inputs = ins,
            .keys = keys,
            .out0 = out0,
            .out1 = out1,
            .dataflow = *forced});
  }
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
  Encoder enc(cpu.ctx);
  Encryptor encryptor(cpu.ctx, cpu.sk, seed_of(43));
  const u32 top = cpu.ctx->default_encryption_level();
  const Ciphertext a = encryptor.encrypt(enc.encode(random_slots(cpu.ctx->max_slots()), top));
  const Ciphertext b = encryptor.encrypt(enc.encode(random_slots(cpu.ctx->max_slots()), top));
  const u64 want_mult = hash_ct(*cpu.ctx, cpu.ev.multiply(a, b, cpu.rlk));
  const u64 want_mrr = hash_ct(*cpu.ctx, cpu.ev.multiply_relin_rescale(a, b, cpu.rlk));
  const u64 want_rot = hash_ct(*cpu.ctx, cpu.ev.rotate(a, 3, cpu.gk));
  const auto copy = [&](const Context& ctx, const Ciphertext& ct) {
    std::vector<RnsPoly> polys;
    for (const RnsPoly& q : ct.polys()) {
      std::vector<u32> w(q.words());
      cpu.ctx->backend().download(q.cref(), w.data());
      polys.push_back(ctx.backend().make_poly(q.basis()));
      ctx.backend().upload(w.data(), polys.back().ref());
    }
    return Ciphertext(ctx.id(), ct.level(), ct.scale(), ct.slots(), std::move(polys));
  };
  for (const DataflowChoice& c : dataflow_candidates()) {
    KeySwitchOptions ks;
    ks.dataflow = c.dataflow;
    ks.chunks = is_chunked(c.dataflow) ? c.chunks : 0;
    const Keys gpu(context(BackendChoice::kCuda, p, Optimizations::all(), ks));
    const Ciphertext ga = copy(*gpu.ctx, a), gb = copy(*gpu.ctx, b);
    EXPECT_EQ(hash_ct(*gpu.ctx, gpu.ev.multiply(ga, gb, gpu.rlk)), want_mult) << choice_name(c);
    EXPECT_EQ(hash_ct(*gpu.ctx, gpu.ev.multiply_relin_rescale(ga, gb, gpu.rlk)), want_mrr)
        << choice_name(c);
    EXPECT_EQ(hash_ct(*gpu.ctx, gpu.ev.rotate(ga, 3, gpu.gk)), want_rot) << choice_name(c);
    Ciphertext m, r;
    Graph g = gpu.ctx->capture([&] {
      m = gpu.ev.multiply_relin_rescale(ga, gb, gpu.rlk);
      r = gpu.ev.rotate(ga, 3, gpu.gk);
    });
    ASSERT_TRUE(g.captured()) << choice_name(c);
    for (int rep = 0; rep < 2; ++rep) {
      g.replay();
      EXPECT_EQ(hash_ct(*gpu.ctx, m), want_mrr) << choice_name(c) << " replay " << rep;
      EXPECT_EQ(hash_ct(*gpu.ctx, r), want_rot) << choice_name(c) << " replay " << rep;
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
