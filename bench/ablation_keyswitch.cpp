// theo_bench --ablation: KeySwitch per step (Fig. 7a) and the batching sweep (Fig. 7b).
//
// KeySwitch = KeySwitcher::run of one ciphertext's c1 with the relinearization key, as scheduled
// by the step's switches, replayed from a graph when the step has CUDA Graphs. Its `time` is the
// device clock (CUDA events) and `wall` the host clock around the op and a synchronize (one launch
// + sync round trip included). The stages are timed apart, eagerly: stages 1 + 2 (ModUp and
// KeyMult, the switch left extended) and stage 3 (ModDown of a kept extended pair). Traffic
// is the model's bytes of one KeySwitch (docs/traffic-model.md) and the bound its time at the L2
// read + write bandwidth.

#include <complex>
#include <cstdio>

#include "ablation_bench.h"
#include "model_bench.h"
#include "theo/ring/automorphism.h"
#include "timing.h"

namespace theo::bench {

namespace {

std::vector<std::complex<double>> slots_for(const Context& ctx, double phase) {
  std::vector<std::complex<double>> z(ctx.max_slots());
  for (std::size_t i = 0; i < z.size(); ++i)
    z[i] = std::polar(0.7, phase + 0.001 * static_cast<double>(i));
  return z;
}

nlohmann::json timing_json(const Timing& t) {
  return {{"median_us", t.median_us},     {"p10_us", t.p10_us},
          {"p90_us", t.p90_us},           {"clock", t.clock},
          {"wall_us", t.wall_us},         {"wall_p10_us", t.wall_p10_us},
          {"wall_p90_us", t.wall_p90_us}, {"clock_timeouts", t.timeouts}};
}

nlohmann::json traffic_json(const TrafficTotals& t, const GpuDescriptor& gpu) {
  return {{"calls", t.calls}, {"bytes", t.bytes()}, {"bound_l2_us", gpu.l2_us(t.bytes())}};
}

}  // namespace

nlohmann::json keyswitch_step(const AblationOptions& o, const AblationStep& step) {
  auto rec = std::make_shared<TrafficRecorder>();
  rec->set_enabled(false);
  const ContextPtr ctx = ablation_context(o, o.keyswitch_preset, step.opt, rec);
  KeyGenerator kg(ctx, ablation_seed(1));
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk, ablation_seed(2));
  const Evaluator ev(ctx);
  const KeySwitcher& ks = ev.key_switcher();
  Backend& be = ctx->backend();
  Backend& timed = unwrap_recording_backend(be);
  const GpuDescriptor gpu = model_gpu(o.gpu, timed);
  nlohmann::json levels = nlohmann::json::array();
  for (const u32 want : o.keyswitch_limbs) {
    const u32 level = level_closest_to(*ctx, want);
    const LevelData& lv = ctx->level(level);
    const Ciphertext ct = encryptor.encrypt(enc.encode(slots_for(*ctx, 0.1), level));
    RnsPoly r0 = be.make_poly(lv.q_basis), r1 = be.make_poly(lv.q_basis);
    const ConstPolyRef d[] = {ct.poly(1).cref()};
    const SwitchingKey* keys[] = {&rlk.key()};
    const PolyRef out0[] = {r0.ref()}, out1[] = {r1.ref()};
    const auto op = [&] {
      ks.run({.level = level, .inputs = d, .keys = keys, .out0 = out0, .out1 = out1});
    };

    // The model's traffic of one KeySwitch, per stage.
    rec->clear();
    rec->set_enabled(true);
    op();
    rec->set_enabled(false);
    be.synchronize();
    const u64 hash = hash_words(*ctx, {r0.cref(), r1.cref()});

    Graph g;
    std::function<void()> run = op;
    if (step.opt.graphs) {
      g = ctx->capture(op);
      run = [&g] { g.replay(); };
    }
    const Timing whole = time_op(timed, run, o.warmup, o.reps);
    // Stages, eagerly: ModUp + KeyMult (left extended), then ModDown of a kept extended pair (its
    // P limbs are scratch, so each ModDown gets a fresh copy of them).
    RnsPoly e0 = be.make_poly(lv.pq_basis), e1 = be.make_poly(lv.pq_basis);
    RnsPoly k0 = be.make_poly(lv.pq_basis), k1 = be.make_poly(lv.pq_basis);
    const PolyRef ext0[] = {e0.ref()}, ext1[] = {e1.ref()}, pair[] = {k0.ref(), k1.ref()};
    const auto extended = [&] {
      ks.run({.level = level,
              .inputs = d,
              .keys = keys,
              .finish = KeySwitchFinish::kExtended,
              .out0 = ext0,
              .out1 = ext1});
    };
    const Timing stage12 = time_op(timed, extended, o.warmup, o.reps);
    const Timing stage3 = time_op(
        timed,
        [&] {
          be.copy(e0.cref(), k0.ref());
          be.copy(e1.cref(), k1.ref());
          ks.run({.level = level, .extended = pair, .out0 = out0, .out1 = out1});
        },
        o.warmup, o.reps);

    const KeySwitchFootprint fp =
        key_switch_footprint(lv.limbs, ctx->alpha(), lv.digits.size(), ctx->n());
    nlohmann::json rec_json = {
        {"level", level},
        {"limbs", lv.limbs},
        {"requested_limbs", want},
        {"digits", lv.digits.size()},
        {"alpha", ctx->alpha()},
        {"footprint_bytes", {{"mod_up", fp.mod_up}, {"mod_down", fp.mod_down}}},
        {"time", timing_json(whole)},
        {"graph",
         {{"captured", g.captured()}, {"kernels", g.kernel_count()}, {"nodes", g.node_count()}}},
        {"stage12_modup_keymult", timing_json(stage12)},
        {"stage3_copy_moddown", timing_json(stage3)},
        {"traffic",
         {{"total", traffic_json(rec->total(), gpu)},
          {"mod_up", traffic_json(rec->total_in("ModUp"), gpu)},
          {"key_mult", traffic_json(rec->total_in("KeyMult"), gpu)},
          {"mod_down", traffic_json(rec->total_in("ModDown"), gpu)}}},
        {"output_hash", std::to_string(hash)}};
    rec_json["x_l2_bound"] =
        whole.median_us / rec_json["traffic"]["total"]["bound_l2_us"].get<double>();
    std::printf("  KeySwitch L=%u (level %u)  %-22s %8.1f us (events)  %8.1f us (wall)\n", lv.limbs,
                level, step.name.c_str(), whole.median_us, whole.wall_us);
    std::fflush(stdout);
    levels.push_back(std::move(rec_json));
  }
  return levels;
}

nlohmann::json batching_sweep(const AblationOptions& o) {
  const ContextPtr ctx = ablation_context(o, o.keyswitch_preset, Optimizations::all());
  const u32 level = level_closest_to(*ctx, o.batch_limbs);
  const LevelData& lv = ctx->level(level);
  KeyGenerator kg(ctx, ablation_seed(1));
  const SecretKey sk = kg.create_secret_key();
  // One key per key switch (a shared key would sit in L2 across the batch).
  std::vector<int> rotations;
  for (u32 r = 1; r <= o.max_batch; ++r)
    rotations.push_back(static_cast<int>(r));
  const GaloisKeys gk = kg.create_galois_keys(sk, rotations);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk, ablation_seed(2));
  const Evaluator ev(ctx);
  const KeySwitcher& ks = ev.key_switcher();
  Backend& be = ctx->backend();
  std::vector<Ciphertext> cts;
  std::vector<RnsPoly> outs;
  std::vector<ConstPolyRef> d;
  std::vector<const SwitchingKey*> keys;
  std::vector<PolyRef> out0, out1;
  for (u32 i = 0; i < o.max_batch; ++i) {
    cts.push_back(encryptor.encrypt(enc.encode(slots_for(*ctx, 0.3 * i), level)));
    outs.push_back(be.make_poly(lv.q_basis));
    outs.push_back(be.make_poly(lv.q_basis));
    keys.push_back(gk.find(galois_element_for_rotation(rotations[i], ctx->log_n())));
  }
  for (u32 i = 0; i < o.max_batch; ++i) {
    d.push_back(cts[i].poly(1).cref());
    out0.push_back(outs[2 * i].ref());
    out1.push_back(outs[2 * i + 1].ref());
  }
  const KeySwitchFootprint fp =
      key_switch_footprint(lv.limbs, ctx->alpha(), lv.digits.size(), ctx->n());
  nlohmann::json points = nlohmann::json::array();
  for (u32 b = 1; b <= o.max_batch; ++b) {
    const std::span<const ConstPolyRef> db(d.data(), b);
    const std::span<const SwitchingKey* const> kb(keys.data(), b);
    const std::span<const PolyRef> ob0(out0.data(), b), ob1(out1.data(), b);
    Graph g = ctx->capture([&] {
      ks.run({.level = level, .inputs = db, .keys = kb, .out0 = ob0, .out1 = ob1, .batch = b});
    });
    const Timing t = time_op(
        unwrap_recording_backend(be), [&g] { g.replay(); }, o.warmup, o.reps);
    points.push_back({{"batch", b},
                      {"time", timing_json(t)},
                      {"per_keyswitch_us", t.median_us / b},
                      {"footprint_bytes", b * fp.per_switch()},
                      {"kernels", g.kernel_count()}});
    std::printf("  batch B=%2u at L=%u: %8.1f us, %7.1f us per key switch, footprint %6.1f MB\n", b,
                lv.limbs, t.median_us, t.median_us / b,
                static_cast<double>(b * fp.per_switch()) / 1e6);
    std::fflush(stdout);
  }
  return {{"preset", o.keyswitch_preset},
          {"level", level},
          {"limbs", lv.limbs},
          {"digits", lv.digits.size()},
          {"l2_bytes", be.l2_bytes()},
          {"footprint_per_keyswitch_bytes", fp.per_switch()},
          {"footprint_bytes", {{"mod_up", fp.mod_up}, {"mod_down", fp.mod_down}}},
          {"planner_batch",
           ks.plan({.level = level, .inputs = d, .keys = keys, .out0 = out0, .out1 = out1})
               .batches.front()
               .count},
          {"points", points}};
}

}  // namespace theo::bench
