// CUDA Graphs benchmark cases (Theodosian §IV-C): one full-slot bootstrapping of bootparam_40, the
// anchor's parameters, issued op by op (`bootstrap`) and replayed from a graph captured once
// (`bootstrap_graph`). wall_us (host clock around the op and a synchronize) of the two is the
// launch overhead the graph removes; median_us of `bootstrap_graph` is its GPU time by events.
// The eager case's event timing holds the stream while the host enqueues over a thousand
// launches, which can outlast the hold's timeout (`clock_timeouts`): read its wall_us.
//
// `hmult_rescale_graph` and `hrot_graph` replay one key-switching op from a graph; compare them
// with the eager `hmult_rescale` and `hrot` of scheme_cases.cpp at the same --limbs.
//
// The bootstrap records carry the graph's kernel and node counts (kernels per bootstrapping) and
// those of each stage captured alone. `--limbs` does not apply (run with `--limbs 12`). With
// THEO_GRAPHS=0 the graph case runs eagerly (`captured: false`), the ablation baseline.

#include <algorithm>
#include <chrono>
#include <complex>
#include <map>
#include <memory>
#include <vector>

#include "bench_case.h"
#include "scheme_env.h"
#include "theo/circuits/circuits.h"
#include "theo/ckks/graph.h"
#include "theo/theodosian.h"

namespace theo::bench {

namespace {

struct BootEnv {
  ContextPtr ctx;
  std::unique_ptr<Bootstrapper> boot;
  std::unique_ptr<BootstrappingKeys> keys;
  Ciphertext input;  // level 0
  nlohmann::json counts;
};

nlohmann::json graph_counts(const Graph& g) {
  return {{"captured", g.captured()}, {"kernels", g.kernel_count()}, {"nodes", g.node_count()}};
}

BootEnv make_boot_env(BackendKind kind) {
  BootEnv e;
  ContextOptions o = context_options(kind);
  o.allow_insecure = true;  // bootparam_40 exceeds the 128-bit bound for N = 2^16
  e.ctx = Context::create(load_preset("bootparam_40"), o);
  KeyGenerator kg(e.ctx);
  const SecretKey sk = kg.create_secret_key();
  e.boot = std::make_unique<Bootstrapper>(e.ctx);
  e.keys = std::make_unique<BootstrappingKeys>(e.boot->generate_keys(kg, sk, false));
  Encoder enc(e.ctx);
  Encryptor encr(e.ctx, sk);
  std::vector<std::complex<double>> z(e.ctx->max_slots());
  for (std::size_t i = 0; i < z.size(); ++i)
    z[i] = std::polar(0.8, 0.001 * static_cast<double>(i));
  e.input = encr.encrypt(enc.encode(z, 0));
  // Kernels per stage, each captured alone (nothing runs while capturing).
  const Bootstrapper& b = *e.boot;
  const BootstrappingKeys& k = *e.keys;
  Ciphertext raised, cts, mod, out;
  e.counts["bootstrap"] = graph_counts(e.ctx->capture([&] { out = b.bootstrap(e.input, k); }));
  e.counts["mod_raise"] = graph_counts(e.ctx->capture([&] { raised = b.mod_raise(e.input, k); }));
  e.counts["coeff_to_slot"] =
      graph_counts(e.ctx->capture([&] { cts = b.coeff_to_slot(raised, k.galois); }));
  e.counts["eval_mod"] = graph_counts(e.ctx->capture([&] { mod = b.eval_mod(cts, k); }));
  e.counts["slot_to_coeff"] =
      graph_counts(e.ctx->capture([&] { out = b.slot_to_coeff(mod, k.galois); }));
  return e;
}

BootEnv& boot_env(BackendKind kind) {
  return once_per_backend<BootEnv>(kind, [&] { return make_boot_env(kind); });
}

PreparedCase bootstrap_case(CaseEnv& env, bool graph) {
  BootEnv& be = boot_env(env.backend.kind());
  PreparedCase c;
  c.extra = {{"preset", "bootparam_40"},
             {"slots", be.boot->slots()},
             {"output_level", be.boot->output_level()},
             {"graph_counts", be.counts}};
  if (!graph) {
    c.run = [&be] { const Ciphertext r = be.boot->bootstrap(be.input, *be.keys); };
  } else {
    auto out = std::make_shared<Ciphertext>();
    const auto t0 = std::chrono::steady_clock::now();
    auto g = std::make_shared<Graph>(
        be.ctx->capture([&be, out] { *out = be.boot->bootstrap(be.input, *be.keys); }));
    c.extra["capture_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    c.extra["captured"] = g->captured();
    c.run = [g] { g->replay(); };
    c.keep_alive =
        std::make_shared<std::pair<std::shared_ptr<Graph>, std::shared_ptr<Ciphertext>>>(g, out);
  }
  c.backend = &be.ctx->backend();
  return c;
}

// Key-switching ops replayed from a graph, to set against scheme_cases.cpp's eager `hmult_rescale`
// and `hrot` (same preset, same level choice from --limbs, same rotation): the paper's
// "+CUDA Graph" step for key-switching.

// The highest level with at most `limbs` limbs (scheme_cases.cpp's rule), at least `min_level`.
u32 level_for(const Context& ctx, u32 limbs, u32 min_level) {
  u32 best = 0;
  for (u32 l = 0; l <= ctx.max_level(); ++l)
    if (ctx.level(l).limbs <= limbs && ctx.level(l).limbs >= ctx.level(best).limbs) best = l;
  return std::max(best, min_level);
}

PreparedCase op_graph_case(CaseEnv& env, bool rotate) {
  SchemeEnv& oe = scheme_env(env.backend.kind());
  const Context& ctx = *oe.ctx;
  const u32 level = level_for(ctx, env.params.limbs, rotate ? 0 : 1);
  std::vector<std::complex<double>> va(ctx.max_slots()), vb(ctx.max_slots());
  for (std::size_t i = 0; i < va.size(); ++i) {
    va[i] = std::polar(0.8, 0.001 * static_cast<double>(i));
    vb[i] = std::polar(0.7, -0.002 * static_cast<double>(i));
  }
  Encoder enc(oe.ctx);
  Encryptor encr(oe.ctx, *oe.pk);
  struct State {
    Ciphertext a, b, out;
    Graph g;
  };
  auto st = std::make_shared<State>();
  st->a = encr.encrypt(enc.encode(va, level));
  st->b = encr.encrypt(enc.encode(vb, level));
  auto ev = std::make_shared<Evaluator>(oe.ctx);
  State* s = st.get();
  if (rotate) {
    st->g = oe.ctx->capture([s, ev, &oe] { s->out = ev->rotate(s->a, kRotation, *oe.gk); });
  } else {
    st->g =
        oe.ctx->capture([s, ev, &oe] { s->out = ev->multiply_relin_rescale(s->a, s->b, *oe.rlk); });
  }
  PreparedCase c;
  c.run = [s] { s->g.replay(); };
  c.keep_alive =
      std::make_shared<std::pair<std::shared_ptr<State>, std::shared_ptr<Evaluator>>>(st, ev);
  c.extra = {{"preset", "bootparam_40"},
             {"level", level},
             {"level_limbs", ctx.level(level).limbs},
             {"captured", st->g.captured()},
             {"kernels", st->g.kernel_count()},
             {"nodes", st->g.node_count()}};
  c.backend = &oe.ctx->backend();
  return c;
}

const CaseRegistrar hmult_rescale_graph_reg({"hmult_rescale_graph", "0 (see hmult_rescale)",
                                             [](CaseEnv& env) {
                                               return op_graph_case(env, false);
                                             }});
const CaseRegistrar hrot_graph_reg({"hrot_graph", "0 (see hrot)",
                                    [](CaseEnv& env) { return op_graph_case(env, true); }});

const CaseRegistrar bootstrap_reg({"bootstrap", "0 (not modelled; see graph_cases.cpp)",
                                   [](CaseEnv& env) { return bootstrap_case(env, false); }});
const CaseRegistrar bootstrap_graph_reg({"bootstrap_graph", "0 (not modelled; see graph_cases.cpp)",
                                         [](CaseEnv& env) { return bootstrap_case(env, true); }});

}  // namespace

}  // namespace theo::bench
