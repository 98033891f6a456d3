// Key-switching fusion (Optimizations::fusion) is bit-exact: every mechanism
// that uses the fused transforms (ModUp, ModDown, rescale, ModDown + rescale, extend, ModRaise)
// gives on the backend under test, with fusion and without, the words of a CPU Context without
// fusion, same seeds. Built for the CPU and into test_cuda_fusion for the GPU
// (tests/backend_test.h).

#include <map>
#include <string>

#include "backend_test.h"
#include "ckks/ckks_test_util.h"
#include "theo/circuits/circuits.h"
#include "theo/model/traffic.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

ContextPtr context_with(const ParameterSet& p, BackendChoice backend, bool fusion) {
  ContextOptions o = test_options(backend);
  o.optimizations.fusion = fusion;
  return Context::create(p, o);
}

std::vector<Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.8, phase + 0.41 * static_cast<double>(i));
  return v;
}

Hashes run_mechanisms(const ParameterSet& params, BackendChoice backend, bool fusion) {
  const ContextPtr ctx = context_with(params, backend, fusion);
  KeyGenerator kg(ctx, seed_of(42));
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, -2, 5}, true);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk, seed_of(43));
  Evaluator ev(ctx);
  const u32 top = ctx->default_encryption_level();
  const Ciphertext a = encryptor.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.1), top));
  const Ciphertext b = encryptor.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.7), top));
  Hashes h;
  h["multiply relin"] = hash_ct(*ctx, ev.multiply(a, b, rlk));
  const Ciphertext ab = ev.multiply_relin_rescale(a, b, rlk);
  h["multiply_relin_rescale"] = hash_ct(*ctx, ab);
  // An integer factor inside the tensor product: the words of multiply_integer first.
  const Ciphertext ab3 = ev.multiply_relin_rescale(a, b, rlk, 3);
  EXPECT_EQ(hash_ct(*ctx, ab3),
            hash_ct(*ctx, ev.multiply_relin_rescale(ev.multiply_integer(a, 3), b, rlk)));
  h["multiply_relin_rescale by 3"] = hash_ct(*ctx, ab3);
  if (top > 1) {  // operands at two levels: the factor goes on before the lowering
    const Ciphertext low = ev.level_down(b, top - 1);
    EXPECT_EQ(hash_ct(*ctx, ev.multiply_relin_rescale(a, low, rlk, -2)),
              hash_ct(*ctx, ev.multiply_relin_rescale(ev.multiply_integer(a, -2), low, rlk)));
  }
  // ModDown + rescale at every level below (its leaving limbs in one piece or two, by level).
  if (ab.level() > 0) {
    for (Ciphertext sq = ev.multiply_relin_rescale(ab, ab, rlk);;
         sq = ev.multiply_relin_rescale(sq, sq, rlk)) {
      h["square to " + std::to_string(sq.level())] = hash_ct(*ctx, sq);
      if (sq.level() == 0) break;
    }
  }
  // Rescale from every level (the leaving limbs come in one piece or two, by level).
  Ciphertext x = ev.multiply_const(a, 2.0);
  for (u32 l = top; l > 0; --l) {
    x = ev.rescale(x);
    h["rescale to " + std::to_string(l - 1)] = hash_ct(*ctx, x);
  }
  h["level_down to 0"] = hash_ct(*ctx, ev.level_down(ab, 0));
  h["rotate"] = hash_ct(*ctx, ev.rotate(a, 1, gk));
  h["conjugate"] = hash_ct(*ctx, ev.conjugate(ab, gk));
  const auto hoisted = ev.rotate_hoisted(ab, {1, -2, 5}, gk);
  for (std::size_t i = 0; i < hoisted.size(); ++i)
    h["rotate_hoisted " + std::to_string(i)] = hash_ct(*ctx, hoisted[i]);

  // Double hoisting: extend, hoisted rotations in Q_l u P, ModDown and ModDown + rescale.
  const Plaintext p0 = enc.encode(fixed_slots(ctx->max_slots(), 0.3), top);
  const Plaintext p1 = enc.encode(fixed_slots(ctx->max_slots(), 0.9), top);
  const Plaintext* pts[] = {&p0, &p1};
  const auto ext_pts = ev.extend(pts);
  h["extend"] = hash_poly(*ctx, ext_pts[0].poly, hash_poly(*ctx, ext_pts[1].poly));
  const int rots[] = {1, -2};
  auto ext = ev.rotate_hoisted_extended(a, rots, gk);
  const ExtendedCiphertext* cts[] = {&ext[0], &ext[1]};
  const ExtendedPlaintext* eps[] = {&ext_pts[0], &ext_pts[1]};
  ExtendedCiphertext sum = ev.multiply_plain_sum(cts, eps);
  ExtendedCiphertext sum2 = ev.multiply_plain_sum(cts, eps);
  h["mod_down"] = hash_ct(*ctx, ev.mod_down(std::move(sum)));
  h["mod_down_rescale"] = hash_ct(*ctx, ev.mod_down_rescale(std::move(sum2)));

  // Through KeySwitcher::run: two switches left extended (ModUp of both inputs together), and a
  // ModDown whose outputs are the Q_l limbs of its inputs (the aliasing case keeps the unfused
  // tail).
  const KeySwitcher& ks = ev.key_switcher();
  const ConstPolyRef inputs[] = {a.poly(1).cref(), b.poly(1).cref()};
  const SwitchingKey* const keys[] = {&rlk.key(), &rlk.key()};
  Backend& be = ctx->backend();
  const LevelData& lv = ctx->level(top);
  std::vector<RnsPoly> pairs;
  for (int i = 0; i < 4; ++i)
    pairs.push_back(be.make_poly(lv.pq_basis));
  const PolyRef e0[] = {pairs[0].ref(), pairs[2].ref()}, e1[] = {pairs[1].ref(), pairs[3].ref()};
  KeySwitchRequest both;
  both.level = top;
  both.inputs = inputs;
  both.keys = keys;
  both.finish = KeySwitchFinish::kExtended;
  both.out0 = e0;
  both.out1 = e1;
  ks.run(both);
  h["extended 0"] = hash_poly(*ctx, pairs[0], hash_poly(*ctx, pairs[1]));
  h["extended 1"] = hash_poly(*ctx, pairs[2], hash_poly(*ctx, pairs[3]));
  const u32 limbs = lv.limbs;
  const PolyRef in[] = {pairs[2].ref(), pairs[3].ref()};
  const PolyRef out0[] = {pairs[2].slice(0, limbs)}, out1[] = {pairs[3].slice(0, limbs)};
  ks.run({.level = top, .extended = in, .out0 = out0, .out1 = out1});
  h["mod_down in place"] = hash_poly(*ctx, pairs[2], hash_poly(*ctx, pairs[3]));
  return h;
}

void expect_same(const Hashes& got, const Hashes& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [op, hash] : want)
    EXPECT_EQ(got.at(op), hash) << what << ": " << op << " differs from the CPU without fusion";
}

class CkksFusion : public OnBackend {
 protected:
  // Runs `run(backend, fusion)` fused and unfused on the backend under test against the CPU
  // unfused (on the CPU the unfused run is that reference).
  template <typename Run>
  void expect_cpu_words(const std::string& what, Run run) {
    const Hashes want = run(BackendChoice::kCpu, false);
    expect_same(run(backend(), true), want, what + " fused");
    if (!on_cpu()) expect_same(run(backend(), false), want, what + " unfused");
  }
};

TEST_P(CkksFusion, MechanismsBitExactN12) {
  const ParameterSet p = generated_params(12, 6);
  expect_cpu_words("N=2^12",
                   [&](BackendChoice b, bool fusion) { return run_mechanisms(p, b, fusion); });
}

// The GPU also runs the full-size preset (N = 2^16): its kernels take other paths there.
TEST_P(CkksFusion, MechanismsBitExactBootPresets) {
  std::vector<const char*> presets = {"test_boot_n12"};
  if (!on_cpu()) presets.push_back("bootparam_40");
  for (const char* preset : presets) {
    const ParameterSet p = load_preset(preset);
    expect_cpu_words(preset,
                     [&](BackendChoice b, bool fusion) { return run_mechanisms(p, b, fusion); });
  }
}

// The switch reaches the mechanisms: fused, a key switch and a rescale issue no copy and no
// sub_mul_scalar (ntt_sub_mul_scalar instead), in fewer calls and fewer modelled bytes.
TEST_P(CkksFusion, SwitchChangesTheOpSequence) {
  std::map<bool, std::map<std::string, TrafficTotals>> ops;
  std::map<bool, TrafficTotals> total;
  for (const bool fusion : {true, false}) {
    auto rec = std::make_shared<TrafficRecorder>();
    ContextOptions o = test_options(backend());
    o.optimizations.fusion = fusion;
    o.wrap_backend = record_traffic(rec);
    SeededKeys k(Context::create(generated_params(12, 4), o), 3, 4);
    const Ciphertext a = k.encrypt(fixed_slots(8, 0.5), 4);
    rec->clear();
    {
      const OpScope scope("ops");
      const Ciphertext m = k.evaluator.multiply(a, a, k.rlk);
      const Ciphertext r = k.evaluator.rescale(m);
    }
    ops[fusion] = rec->by_op("ops");
    total[fusion] = rec->total_in("ops");
  }
  EXPECT_EQ(ops[true].count("copy"), 0u);
  EXPECT_EQ(ops[true].count("sub_mul_scalar"), 0u);
  EXPECT_GE(ops[true]["ntt_sub_mul_scalar"].calls, 2u);  // ModDown and the rescale
  EXPECT_GT(ops[false]["copy"].calls, 0u);
  EXPECT_GT(ops[false]["sub_mul_scalar"].calls, 0u);
  EXPECT_EQ(ops[false].count("ntt_sub_mul_scalar"), 0u);
  EXPECT_LT(total[true].calls, total[false].calls);
  EXPECT_LT(total[true].bytes(), total[false].bytes());
  std::printf("multiply + rescale, N = 2^12, 4 levels: %llu -> %llu calls, %.2f -> %.2f MB\n",
              static_cast<unsigned long long>(total[false].calls),
              static_cast<unsigned long long>(total[true].calls), total[false].bytes() / 1e6,
              total[true].bytes() / 1e6);
}

// The leaving limbs of ModDown + rescale come in one piece or two (then gathered by the fused
// INTT): the squarings of run_mechanisms (levels top - 1 .. 1) meet both.
TEST_P(CkksFusion, ModDownRescaleShapesCovered) {
  const ContextPtr ctx = context_with(load_preset("test_boot_n12"), backend(), true);
  bool one = false, two = false;
  for (u32 l = 1; l < ctx->default_encryption_level(); ++l) {
    one = one || ctx->level(l).mod_down_rescale.leaving.size() == 1;
    two = two || ctx->level(l).mod_down_rescale.leaving.size() == 2;
  }
  EXPECT_TRUE(one);
  EXPECT_TRUE(two);
}

// ModRaise (Bootstrapper::mod_raise) and a whole bootstrapping, fused and not.
Hashes run_bootstrap(BackendChoice backend, bool fusion) {
  const ContextPtr ctx = context_with(load_preset("test_boot_n12"), backend, fusion);
  KeyGenerator kg(ctx, seed_of(7));
  const SecretKey sk = kg.create_secret_key();
  BootstrapConfig cfg;
  cfg.slots = 16;
  cfg.min_keys = true;
  const Bootstrapper boot(ctx, cfg);
  const BootstrappingKeys keys = boot.generate_keys(kg, sk, false);
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk, seed_of(8));
  const Ciphertext ct = encryptor.encrypt(enc.encode(fixed_slots(16, 0.2), 0));
  Hashes h;
  h["mod_raise"] = hash_ct(*ctx, boot.mod_raise(ct, keys));
  h["bootstrap"] = hash_ct(*ctx, boot.bootstrap(ct, keys));
  return h;
}

TEST_P(CkksFusion, BootstrapBitExact) {
  expect_cpu_words("bootstrap", run_bootstrap);
}

THEO_INSTANTIATE_ON_BACKEND(CkksFusion);

}  // namespace
}  // namespace theo::test
