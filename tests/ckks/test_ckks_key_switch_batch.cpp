// L2-aware multi-polynomial caching and complementary pipelining (Optimizations, KeySwitcher's
// scheduling, evaluator_batch.h) on the CPU backend: batched ops give the words of the single ops
// they mirror, every combination of switches gives the same words, the footprint model and batch
// planner follow their formulas, and the fork / join protocol is checked.

#include <map>
#include <random>
#include <string>

#include "circuits/circuits_test_util.h"
#include "ckks/key_switch_fixture.h"
#include "theo/backend/factory.h"
#include "theo/circuits/circuits.h"
#include "theo/model/traffic.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

ContextPtr context_with(const ParameterSet& p, const Optimizations& opt) {
  return test::context_with(BackendChoice::kCpu, p, opt);
}

KeySwitchOptions dpob_only() {
  KeySwitchOptions ks;
  ks.dataflow = Dataflow::kDPOB;
  return ks;
}

u64 hash_ext(const Context& ctx, const ExtendedCiphertext& e) {
  return hash_poly(ctx, e.c0, hash_poly(ctx, e.c1));
}

// One CPU Context with fixed seeds: keys, inputs at two levels.
struct Fixture : KeySwitchFixture {
  Fixture(const ParameterSet& p, const Optimizations& opt, const KeySwitchOptions& ks = {})
      : KeySwitchFixture(BackendChoice::kCpu, p, opt, ks) {}
};

// Every mechanism that schedules key switches, hashed.
Hashes run_mechanisms(const ParameterSet& params, const Optimizations& opt) {
  Fixture f(params, opt);
  const Context& ctx = *f.ctx;
  const Evaluator& ev = f.ev;
  Hashes h;
  h["rotate"] = hash_ct(ctx, ev.rotate(f.a[0], 1, f.gk));
  h["conjugate"] = hash_ct(ctx, ev.conjugate(f.a[1], f.gk));
  const auto hoisted = ev.rotate_hoisted(f.a[0], {1, 0, -2, 5, 3}, f.gk);
  for (std::size_t i = 0; i < hoisted.size(); ++i)
    h["rotate_hoisted " + std::to_string(i)] = hash_ct(ctx, hoisted[i]);
  const int rots[] = {1, -2, 0};
  auto ext = ev.rotate_hoisted_extended(f.a[1], rots, f.gk);
  for (std::size_t i = 0; i < ext.size(); ++i)
    h["rotate_hoisted_extended " + std::to_string(i)] = hash_ext(ctx, ext[i]);
  h["mod_down"] = hash_ct(ctx, ev.mod_down(std::move(ext[0])));

  // Batched ops over pairs at two levels (a batch is per level).
  const Ciphertext* xs[] = {&f.a[0], &f.a[1], &f.low, &f.a[2]};
  const Ciphertext* ys[] = {&f.b[0], &f.b[1], &f.b[2], &f.b[2]};
  const auto mult = multiply_batch(ev, xs, ys, f.rlk);
  const auto mrr = multiply_relin_rescale_batch(ev, xs, ys, f.rlk);
  const int shifts[] = {1, 5, -2, 0};
  const auto rot = rotate_batch(ev, xs, shifts, f.gk);
  for (std::size_t i = 0; i < 4; ++i) {
    h["multiply_batch " + std::to_string(i)] = hash_ct(ctx, mult[i]);
    h["multiply_relin_rescale_batch " + std::to_string(i)] = hash_ct(ctx, mrr[i]);
    h["rotate_batch " + std::to_string(i)] = hash_ct(ctx, rot[i]);
  }
  auto giants = ev.rotate_hoisted_extended(f.a[2], rots, f.gk);
  const int giant_shifts[] = {3, 0, -2};
  const auto rotated = mod_down_rotate_extended_batch(ev, giants, giant_shifts, f.gk);
  for (std::size_t i = 0; i < rotated.size(); ++i)
    h["mod_down_rotate_extended_batch " + std::to_string(i)] = hash_ext(ctx, rotated[i]);

  // KeySwitcher::run with explicit batch sizes (the Fig. 7b sweep's entry point).
  const KeySwitcher& ks = ev.key_switcher();
  const LevelData& lv = ctx.level(f.top);
  for (u32 batch : {1u, 2u, 3u}) {
    std::vector<RnsPoly> outs;
    std::vector<ConstPolyRef> d;
    std::vector<const SwitchingKey*> keys;
    std::vector<PolyRef> o0, o1;
    for (int i = 0; i < 3; ++i) {
      outs.push_back(ctx.backend().make_poly(lv.q_basis));
      outs.push_back(ctx.backend().make_poly(lv.q_basis));
      d.push_back(f.b[i].poly(1).cref());
      keys.push_back(&f.rlk.key());
    }
    for (int i = 0; i < 3; ++i) {
      o0.push_back(outs[2 * i].ref());
      o1.push_back(outs[2 * i + 1].ref());
    }
    ks.run({.level = f.top, .inputs = d, .keys = keys, .out0 = o0, .out1 = o1, .batch = batch});
    u64 hh = 1469598103934665603ull;
    for (const RnsPoly& p : outs)
      hh = hash_poly(ctx, p, hh);
    h["switch_keys batch " + std::to_string(batch)] = hh;
  }
  return h;
}

void expect_same(const Hashes& got, const Hashes& want, const std::string& config) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [what, hash] : want)
    EXPECT_EQ(got.at(what), hash) << what << ": " << config << " changed the words";
}

Optimizations with(bool fusion, bool mpc, bool pipelining, std::size_t cache = 0) {
  Optimizations o = Optimizations::none();
  o.fusion = fusion;
  o.multi_poly_caching = mpc;
  o.pipelining = pipelining;
  o.cache_bytes = cache;
  return o;
}

TEST(KeySwitchBatch, EverySwitchCombinationGivesTheSameWords) {
  const ParameterSet p = generated_params(12, 5);
  const Hashes base = run_mechanisms(p, Optimizations::none());
  // A cache that holds two key switches at the top level: batches of two (and of one below).
  const ContextPtr probe = context_with(p, Optimizations::all());
  const std::size_t two =
      2 * probe->key_switch_planner().footprint(probe->default_encryption_level()).per_switch() + 1;
  // run() ignores how it is batched.
  EXPECT_EQ(base.at("switch_keys batch 1"), base.at("switch_keys batch 2"));
  EXPECT_EQ(base.at("switch_keys batch 1"), base.at("switch_keys batch 3"));
  const std::map<std::string, Optimizations> configs = {
      {"all on", Optimizations::all()},
      {"caching", with(false, true, false)},
      {"pipelining", with(false, false, true)},
      {"fusion + pipelining", with(true, false, true)},
      {"caching + pipelining", with(false, true, true)},
      {"all on, cache of 1 byte (batches of 1)", with(true, true, true, 1)},
      {"all on, cache for 2 key switches", with(true, true, true, two)},
  };
  for (const auto& [name, opt] : configs)
    expect_same(run_mechanisms(p, opt), base, name);
}

TEST(KeySwitchBatch, BatchedOpsMatchTheSingleOps) {
  Fixture f(generated_params(12, 5), Optimizations::all());
  const Context& ctx = *f.ctx;
  const Evaluator& ev = f.ev;
  const Ciphertext* xs[] = {&f.a[0], &f.low, &f.a[1]};
  const Ciphertext* ys[] = {&f.b[0], &f.b[1], &f.b[2]};
  const auto mult = multiply_batch(ev, xs, ys, f.rlk);
  const auto mrr = multiply_relin_rescale_batch(ev, xs, ys, f.rlk);
  const int shifts[] = {5, 0, -2};
  const auto rot = rotate_batch(ev, xs, shifts, f.gk);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(hash_ct(ctx, mult[i]), hash_ct(ctx, ev.multiply(*xs[i], *ys[i], f.rlk))) << i;
    EXPECT_EQ(mult[i].level(), std::min(xs[i]->level(), ys[i]->level()));
    EXPECT_EQ(hash_ct(ctx, mrr[i]), hash_ct(ctx, ev.multiply_relin_rescale(*xs[i], *ys[i], f.rlk)))
        << i;
    EXPECT_EQ(mrr[i].scale(), ev.multiply_relin_rescale(*xs[i], *ys[i], f.rlk).scale());
    EXPECT_EQ(hash_ct(ctx, rot[i]), hash_ct(ctx, ev.rotate(*xs[i], shifts[i], f.gk))) << i;
  }
  // Several ciphertexts rotated by one step share the key's reads (one key for the batch).
  const Ciphertext* same_level[] = {&f.a[0], &f.a[1], &f.b[0]};
  const int one_step[] = {5, 5, 5};
  const auto rot_one = rotate_batch(ev, same_level, one_step, f.gk);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(hash_ct(ctx, rot_one[i]), hash_ct(ctx, ev.rotate(*same_level[i], 5, f.gk))) << i;
  // Giant steps: ModDown then one hoisted rotation each.
  const int rots[] = {1, -2};
  auto batch_in = ev.rotate_hoisted_extended(f.a[0], rots, f.gk);
  auto single_in = ev.rotate_hoisted_extended(f.a[0], rots, f.gk);
  const int giant_shifts[] = {3, 0};
  const auto batched = mod_down_rotate_extended_batch(ev, batch_in, giant_shifts, f.gk);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(batch_in[i].empty());  // consumed
    const Ciphertext down = ev.mod_down(std::move(single_in[i]));
    const int s[] = {giant_shifts[i]};
    const auto single = ev.rotate_hoisted_extended(down, s, f.gk);
    EXPECT_EQ(hash_ext(ctx, batched[i]), hash_ext(ctx, single[0])) << i;
    EXPECT_EQ(batched[i].scale, single[0].scale);
  }
  // And the values are right.
  const auto want = f.enc.decode(Decryptor(f.ctx, f.sk).decrypt(mult[0]));
  std::vector<Cplx> x = fixed_slots(ctx.max_slots(), 0.0), y = fixed_slots(ctx.max_slots(), 0.5);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] *= y[i];
  EXPECT_LT(report("multiply_batch", 12, want, x), -15.0);
}

TEST(KeySwitchBatch, FootprintAndBatchSizeFollowTheModel) {
  Fixture f(generated_params(12, 5), Optimizations::all());
  const Context& ctx = *f.ctx;
  const KeySwitchPlanner& ks = f.ctx->key_switch_planner();
  const LevelData& lv = ctx.level(f.top);
  const std::size_t limb = std::size_t{ctx.n()} * 4;
  const std::size_t l = lv.limbs, alpha = ctx.alpha(), beta = lv.digits.size();
  const KeySwitchFootprint fp = ks.footprint(f.top);
  EXPECT_EQ(fp.mod_up, (l + beta * (l + alpha)) * limb);
  EXPECT_EQ(fp.mod_down, (2 * alpha + 4 * l) * limb);
  EXPECT_EQ(fp.hoisted, beta * (l + alpha) * limb);
  EXPECT_EQ(fp.per_switch(), std::max(fp.mod_up, fp.mod_down));
  // The CPU reports no cache: whole batches.
  EXPECT_EQ(ctx.backend().l2_bytes(), 0u);
  EXPECT_EQ(ks.cache_bytes(), 0u);
  EXPECT_EQ(ks.batch_size(7, fp.per_switch()), 7u);
  EXPECT_EQ(ks.batch_size(0, fp.per_switch()), 1u);

  Fixture g(generated_params(12, 5), with(true, true, true, 3 * fp.per_switch() + 5));
  const KeySwitchPlanner& gs = g.ctx->key_switch_planner();
  EXPECT_EQ(gs.cache_bytes(), 3 * fp.per_switch() + 5);
  EXPECT_EQ(gs.batch_size(16, fp.per_switch()), 3u);
  EXPECT_EQ(gs.batch_size(2, fp.per_switch()), 2u);
  EXPECT_EQ(gs.batch_size(16, fp.per_switch(), fp.per_switch()), 2u);  // shared data first
  EXPECT_EQ(gs.batch_size(16, 10 * fp.per_switch()), 1u);              // never below 1

  Fixture off(generated_params(12, 5), with(true, false, true, 1u << 30));
  EXPECT_EQ(off.ctx->key_switch_planner().batch_size(16, fp.per_switch()), 1u);
}

TEST(KeySwitchBatch, ModUpDigitGroupsFitTheCache) {
  Fixture f(generated_params(12, 5), Optimizations::all());
  const Context& ctx = *f.ctx;
  const LevelData& lv = ctx.level(f.top);
  const std::size_t limb = std::size_t{ctx.n()} * 4;
  const std::size_t l = lv.limbs, alpha = ctx.alpha(), beta = lv.digits.size();
  ASSERT_GE(beta, 3u) << "the test needs a level with three digits or more";
  const KeySwitchPlanner& ks = f.ctx->key_switch_planner();
  EXPECT_EQ(ks.mod_up_digit_groups(f.top, 1), 1u);  // no cache on the CPU: one group
  const std::size_t fp = ks.footprint(f.top).mod_up;
  const auto groups = [&](std::size_t cache, std::size_t inputs) {
    Fixture g(generated_params(12, 5), with(true, true, true, cache));
    return g.ctx->key_switch_planner().mod_up_digit_groups(g.top, inputs);
  };
  EXPECT_EQ(groups(fp, 1), 1u);      // the whole stage fits
  EXPECT_EQ(groups(1, 1), beta);     // nothing fits: one digit at a time
  EXPECT_EQ(groups(fp - 1, 1), 2u);  // all but one digit fit: two groups
  const std::size_t two_digits = (l + 2 * (l + alpha)) * limb;
  EXPECT_EQ(groups(two_digits, 1), (beta + 1) / 2);
  EXPECT_EQ(groups(fp, 2), groups(fp / 2, 1));  // two inputs need twice the room
  EXPECT_EQ(Fixture(generated_params(12, 5), with(true, false, true, 1))
                .ctx->key_switch_planner()
                .mod_up_digit_groups(f.top, 1),
            1u);  // without multi-poly caching mod_up is not scheduled by the cache
}

// Output chunking (Optimizations::output_chunking: with Dataflow::kAuto, DPOC with digits + 1
// chunks) exactly where the ModUp working set exceeds the cache, and the words of the
// output-bulk order at every level, with and without pipelining.
TEST(KeySwitchBatch, OutputChunkedKeySwitchGivesTheSameWords) {
  const ParameterSet p = generated_params(12, 5);
  Fixture bulk(p, with(true, true, true, 1), dpob_only());
  Optimizations on_opt = with(true, true, true, 1);
  on_opt.output_chunking = true;
  Optimizations serial_opt = on_opt;
  serial_opt.pipelining = false;
  Fixture on(p, on_opt), serial(p, serial_opt);
  const Context& ctx = *on.ctx;
  const KeySwitchPlanner& ks = on.ctx->key_switch_planner();
  EXPECT_FALSE(bulk.ctx->key_switch_planner().output_chunked(bulk.top));  // DPOB asked for
  u32 chunked_levels = 0;
  for (u32 level = 0; level <= on.top; ++level) {
    const LevelData& lv = ctx.level(level);
    // A cache of one byte holds nothing: every level with two digits or more is DPOC; the others
    // keep the footprint model's choice.
    const DataflowChoice c = ks.dataflow(level).choice;
    if (lv.digits.size() > 1) {
      EXPECT_EQ(c, (DataflowChoice{Dataflow::kDPOC, static_cast<u32>(lv.digits.size()) + 1}))
          << "level " << level;
      ++chunked_levels;
    } else {
      EXPECT_EQ(c, model_choice(ks.key_switch_shape(level), 1)) << "level " << level;
    }
    // A fresh random input each run (the keys are seeded: the three contexts must agree).
    std::vector<u32> words(std::size_t{lv.limbs} * ctx.n());
    std::mt19937_64 rng(std::random_device{}());
    for (std::size_t i = 0; i < words.size(); ++i)
      words[i] = static_cast<u32>(rng() % ctx.prime(lv.q_basis[static_cast<u32>(i / ctx.n())]));
    const auto switched = [&](Fixture& f) {
      const LevelData& l = f.ctx->level(level);
      RnsPoly in = f.ctx->backend().make_poly(l.q_basis);
      f.ctx->backend().upload(words.data(), in.ref());
      RnsPoly o0 = f.ctx->backend().make_poly(l.q_basis),
              o1 = f.ctx->backend().make_poly(l.q_basis);
      f.ev.key_switcher().switch_key(in.cref(), level, f.rlk.key(), o0.ref(), o1.ref());
      return hash_poly(*f.ctx, o0, hash_poly(*f.ctx, o1));
    };
    const u64 want = switched(bulk);
    EXPECT_EQ(switched(on), want) << "level " << level;
    EXPECT_EQ(switched(serial), want) << "level " << level << ", no pipelining";
  }
  EXPECT_GE(chunked_levels, 2u);
  // The evaluator's key switches take the chunked path too.
  EXPECT_EQ(hash_ct(ctx, on.ev.multiply(on.a[0], on.b[0], on.rlk)),
            hash_ct(*bulk.ctx, bulk.ev.multiply(bulk.a[0], bulk.b[0], bulk.rlk)));
  EXPECT_EQ(hash_ct(ctx, on.ev.rotate(on.a[1], 5, on.gk)),
            hash_ct(*bulk.ctx, bulk.ev.rotate(bulk.a[1], 5, bulk.gk)));
  // A cache that holds the top level's ModUp twice over: not chunked there.
  Optimizations roomy = on_opt;
  roomy.cache_bytes = 2 * ks.footprint(on.top).mod_up;
  EXPECT_FALSE(Fixture(p, roomy).ctx->key_switch_planner().output_chunked(on.top));
}

TEST(KeySwitchBatch, ForkProtocolIsChecked) {
  RingParams ring;
  ring.log_n = 10;
  ring.primes = {12289};
  const auto be = make_cpu_backend(ring, 1);
  RnsPoly p = be->make_poly(Basis::range(0, 1));
  std::vector<u32> host(p.words(), 1);
  EXPECT_THROW(be->join(), BackendError);
  EXPECT_THROW(be->end_fork(), BackendError);
  be->fork();
  EXPECT_THROW(be->fork(), BackendError);
  EXPECT_THROW(be->upload(host.data(), p.ref()), BackendError);
  EXPECT_THROW(be->download(p.cref(), host.data()), BackendError);
  EXPECT_THROW(be->begin_capture(), BackendError);
  be->fill_zero(p.ref());  // ops run in issue order on the branch
  be->end_fork();
  EXPECT_THROW(be->end_fork(), BackendError);
  be->synchronize();
  be->join();
  EXPECT_THROW(be->join(), BackendError);
  be->download(p.cref(), host.data());
  EXPECT_EQ(host[0], 0u);
  be->fork();  // join right after fork is allowed
  be->join();
}

// The pipelined key switch captured into a Graph replays the eager words; the recording backend
// (traffic model) forwards the fork and the cache query.
TEST(KeySwitchBatch, PipelinedKeySwitchCapturesAndRecords) {
  const ParameterSet p = generated_params(12, 5);
  Fixture f(p, Optimizations::all());
  const Context& ctx = *f.ctx;
  const u64 eager = hash_ct(ctx, f.ev.rotate(f.a[0], 5, f.gk));
  Ciphertext out;
  Graph g = ctx.capture([&] { out = f.ev.rotate(f.a[0], 5, f.gk); });
  EXPECT_TRUE(g.captured());
  g.replay();
  EXPECT_EQ(hash_ct(ctx, out), eager);

  ContextOptions o = test_options();
  o.wrap_backend = record_traffic(std::make_shared<TrafficRecorder>());
  const ContextPtr rctx = Context::create(p, o);
  EXPECT_EQ(rctx->backend().l2_bytes(), 0u);
  KeyGenerator kg(rctx, seed_of(42));
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);  // the Fixture's order of draws
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, -2, 5, 3}, true);
  Encryptor encryptor(rctx, sk, seed_of(43));
  Encoder enc(rctx);
  Evaluator ev(rctx);
  const Ciphertext a = encryptor.encrypt(enc.encode(fixed_slots(rctx->max_slots(), 0.0), f.top));
  EXPECT_EQ(hash_ct(*rctx, ev.rotate(a, 5, gk)), eager);
}

TEST(KeySwitchBatch, RejectsBadArguments) {
  Fixture f(generated_params(12, 5), Optimizations::all());
  const Evaluator& ev = f.ev;
  const KeySwitcher& ks = ev.key_switcher();
  const ConstPolyRef d[] = {f.a[0].poly(1).cref()};
  const SwitchingKey* keys[] = {&f.rlk.key(), &f.rlk.key()};
  const SwitchingKey* null_key[] = {nullptr};
  RnsPoly o = f.ctx->backend().make_poly(f.ctx->level(f.top).q_basis);
  const PolyRef outs[] = {o.ref()};
  EXPECT_THROW(ks.run({.level = f.top, .inputs = d, .keys = keys, .out0 = outs, .out1 = outs}),
               ParameterError);
  EXPECT_THROW(ks.run({.level = f.top, .inputs = d, .keys = null_key, .out0 = outs, .out1 = outs}),
               ParameterError);
  const u32 identity[] = {1};
  const SwitchingKey* one_key[] = {&f.rlk.key()};
  EXPECT_THROW(ks.run({.level = f.top,
                       .inputs = d,
                       .keys = one_key,
                       .galois = identity,
                       .out0 = outs,
                       .out1 = outs}),
               ParameterError);

  const Ciphertext* xs[] = {&f.a[0], nullptr};
  const Ciphertext* ys[] = {&f.b[0], &f.b[1]};
  EXPECT_THROW(multiply_batch(ev, xs, ys, f.rlk), ParameterError);
  EXPECT_THROW(multiply_batch(ev, std::span(xs, 1), ys, f.rlk), ParameterError);
  const int shift[] = {1};
  EXPECT_THROW(rotate_batch(ev, std::span(xs, 1), std::span<const int>(), f.gk), ParameterError);
  const Ciphertext* level0[] = {&f.a[0]};
  const Ciphertext zero = f.encryptor.encrypt(f.enc.encode(fixed_slots(8, 0.0), 0));
  const Ciphertext* zeros[] = {&zero};
  EXPECT_THROW(multiply_relin_rescale_batch(ev, level0, zeros, f.rlk), LevelError);

  const int rots[] = {1};
  auto e1 = ev.rotate_hoisted_extended(f.a[0], rots, f.gk);
  auto e0 = ev.rotate_hoisted_extended(f.low, rots, f.gk);
  std::vector<ExtendedCiphertext> mixed;
  mixed.push_back(std::move(e1[0]));
  mixed.push_back(std::move(e0[0]));
  const int two[] = {1, 1};
  EXPECT_THROW(mod_down_rotate_extended_batch(ev, mixed, two, f.gk), LevelError);
  EXPECT_THROW(mod_down_rotate_extended_batch(ev, mixed, shift, f.gk), ParameterError);
  const int missing[] = {7, 7};
  EXPECT_THROW(rotate_batch(ev, std::span(ys, 2), missing, f.gk), MissingKeyError);
}

// A whole bootstrapping (double-hoisted linear transforms: giant steps batched) under the ablation
// baseline, everything on, and everything on in batches of one.
TEST(KeySwitchBatch, BootstrapBitExactUnderEveryOptimization) {
  const auto run = [](const Optimizations& opt) {
    BootstrapConfig cfg;
    cfg.slots = 16;
    SeededBootEnv e(context_with(load_preset("test_boot_n12"), opt), cfg, 7, 8);
    const Ciphertext ct = e.encrypt(fixed_slots(16, 0.2), 0);
    return hash_ct(*e.ctx, e.boot.bootstrap(ct, e.keys));
  };
  const u64 base = run(Optimizations::none());
  EXPECT_EQ(run(Optimizations::all()), base);
  EXPECT_EQ(run(with(true, true, true, 1)), base);
  Optimizations chunked = with(true, true, true, 1);
  chunked.output_chunking = true;  // every key switch with two digits or more is chunked
  EXPECT_EQ(run(chunked), base);
  Optimizations batched = Optimizations::all();
  batched.batched_evalmod = true;  // EvalMod's parts as one group despite the second stream
  EXPECT_EQ(run(batched), base);
}

}  // namespace
}  // namespace theo::test
