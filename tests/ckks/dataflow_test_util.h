#pragma once
// What the key-switching dataflow suites share (tests/ckks/test_ckks_dataflows.cpp on the CPU,
// tests/cuda/test_cuda_dataflows.cpp against it): their Contexts and the keys every Context of a
// run holds.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ckks/ckks_test_util.h"

namespace theo::test::dataflows {

// A Context of `p` on `backend` with the given optimizations and key-switching options (insecure
// sets allowed); no tuning table of the test machine leaks in.
inline ContextPtr context(BackendChoice backend, const ParameterSet& p, const Optimizations& opt,
                          const KeySwitchOptions& ks, u32 threads = 0) {
  ContextOptions o;
  o.backend = backend;
  o.threads = threads;
  o.allow_insecure = true;
  o.optimizations = opt;
  o.key_switching = ks;
  o.key_switching.tuning.use_table = false;
  return Context::create(p, o);
}

inline KeySwitchOptions prepared() {
  KeySwitchOptions ks;
  ks.prepare_all = true;
  return ks;
}

// The hash of the outputs of one key switch of `in` at `level` with `key` through
// KeySwitcher::run, forced to `dataflow` when given.
inline u64 switched_hash(const Context& ctx, const KeySwitcher& ks, const SwitchingKey& key,
                         u32 level, ConstPolyRef in, std::optional<DataflowChoice> dataflow) {
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
  RnsPoly o0 = be.make_poly(lv.q_basis), o1 = be.make_poly(lv.q_basis);
  const ConstPolyRef ins[] = {in};
  const SwitchingKey* keys[] = {&key};
  const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};
  ks.run({.level = level,
          .inputs = ins,
          .keys = keys,
          .out0 = out0,
          .out1 = out1,
          .dataflow = dataflow});
  return hash_poly(ctx, o0, hash_poly(ctx, o1));
}

// A fixed dataflow (and chunk count) at every level.
inline KeySwitchOptions fixed(const DataflowChoice& c) {
  KeySwitchOptions ks;
  ks.dataflow = c.dataflow;
  ks.chunks = is_chunked(c.dataflow) ? c.chunks : 0;
  return ks;
}

// The keys of every Context in this run: one fresh seed per process, printed, and shared by the
// reference and the Contexts compared with it (they must hold the same keys).
inline const Prng::Seed& key_seed() {
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

// ct's words as a ciphertext of `to` (each Context's ciphertexts carry their Context's id).
inline Ciphertext copy_to(const Context& to, const Context& from, const Ciphertext& ct) {
  std::vector<RnsPoly> polys;
  for (const RnsPoly& q : ct.polys()) {
    std::vector<u32> w(q.words());
    from.backend().download(q.cref(), w.data());
    polys.push_back(to.backend().make_poly(q.basis()));
    to.backend().upload(w.data(), polys.back().ref());
  }
  return Ciphertext(to.id(), ct.level(), ct.scale(), ct.slots(), std::move(polys));
}

// Two fresh ciphertexts at the top level of the reference Context and the hashes of what the
// evaluator's key switches make of them there: the words every other Context must give.
struct EvaluatorReference {
  Ciphertext a, b;
  u64 multiply = 0, multiply_relin_rescale = 0, rotate = 0;
};

inline EvaluatorReference evaluator_reference(const Keys& ref) {
  Encoder enc(ref.ctx);
  Encryptor encryptor(ref.ctx, ref.sk, seed_of(43));
  const u32 top = ref.ctx->default_encryption_level();
  EvaluatorReference r;
  r.a = encryptor.encrypt(enc.encode(random_slots(ref.ctx->max_slots()), top));
  r.b = encryptor.encrypt(enc.encode(random_slots(ref.ctx->max_slots()), top));
  r.multiply = hash_ct(*ref.ctx, ref.ev.multiply(r.a, r.b, ref.rlk));
  r.multiply_relin_rescale = hash_ct(*ref.ctx, ref.ev.multiply_relin_rescale(r.a, r.b, ref.rlk));
  r.rotate = hash_ct(*ref.ctx, ref.ev.rotate(r.a, 3, ref.gk));
  return r;
}

// want.a and want.b copied into k's Context, after checking that the evaluator's key switches on
// them give the reference's words there (`what` names the case in a failure).
struct Operands {
  Ciphertext a, b;
};

inline Operands expect_reference_words(const Keys& k, const Context& ref,
                                       const EvaluatorReference& want, const std::string& what) {
  Operands in{copy_to(*k.ctx, ref, want.a), copy_to(*k.ctx, ref, want.b)};
  EXPECT_EQ(hash_ct(*k.ctx, k.ev.multiply(in.a, in.b, k.rlk)), want.multiply) << what;
  EXPECT_EQ(hash_ct(*k.ctx, k.ev.multiply_relin_rescale(in.a, in.b, k.rlk)),
            want.multiply_relin_rescale)
      << what;
  EXPECT_EQ(hash_ct(*k.ctx, k.ev.rotate(in.a, 3, k.gk)), want.rotate) << what;
  return in;
}

}  // namespace theo::test::dataflows
