#pragma once
// The program the graph tests capture (tests/ckks/test_graph.cpp, tests/cuda/test_cuda_graph.cpp)
// and the Context around it.

#include <vector>

#include "circuits/circuits_test_util.h"
#include "theo/ckks/graph.h"

namespace theo::test {

// The captured sequence: HMult + relinearize, rescale, rotation, addition, constants.
inline Ciphertext sequence(const Evaluator& ev, const Ciphertext& a, const Ciphertext& b,
                           const RelinKey& rlk, const GaloisKeys& gk) {
  Ciphertext t = ev.rescale(ev.multiply(a, b, rlk));
  Ciphertext r = ev.rotate(t, 1, gk);
  Ciphertext s = ev.add(r, t);
  s = ev.add_const(s, {0.25, -0.5});
  s = ev.multiply_relin_rescale(s, ev.rotate(s, 3, gk), rlk);
  return ev.sub(s, ev.negate(s));
}

inline ContextPtr context_on(BackendChoice backend, const ParameterSet& p) {
  return Context::create(p, test_options(backend));
}

// Keys from fixed seeds and inputs a, b encrypting za, zb at level 4, so that every backend holds
// the same words for the same inputs.
struct GraphEnv {
  GraphEnv(BackendChoice backend, const std::vector<Cplx>& za, const std::vector<Cplx>& zb)
      : ctx(context_on(backend, generated_params(12, 4))),
        keygen(ctx, seed_of(7)),
        sk(keygen.create_secret_key()),
        rlk(keygen.create_relin_key(sk)),
        gk(keygen.create_galois_keys(sk, {1, 3})),
        encoder(ctx),
        encryptor(ctx, sk, seed_of(9)),
        decryptor(ctx, sk),
        evaluator(ctx) {
    a = encrypt(za, 4);
    b = encrypt(zb, 4);
  }
  explicit GraphEnv(BackendChoice backend)
      : GraphEnv(backend, random_slots(2048), random_slots(2048)) {}

  Ciphertext encrypt(const std::vector<Cplx>& v, u32 level) {
    return encryptor.encrypt(encoder.encode(v, level));
  }
  std::vector<Cplx> decrypt(const Ciphertext& ct) { return encoder.decode(decryptor.decrypt(ct)); }
  Ciphertext eager() const { return sequence(evaluator, a, b, rlk, gk); }
  Graph capture(Ciphertext& out) const {
    return ctx->capture([&] { out = sequence(evaluator, a, b, rlk, gk); });
  }
  // The words (hash_ct) of the output of one replay of a fresh capture, read after the graph is
  // gone.
  u64 replayed_hash() const {
    Ciphertext out;
    {
      Graph g = capture(out);
      g.replay();
    }
    return hash_ct(*ctx, out);
  }

  ContextPtr ctx;
  KeyGenerator keygen;
  SecretKey sk;
  RelinKey rlk;
  GaloisKeys gk;
  Encoder encoder;
  Encryptor encryptor;
  Decryptor decryptor;
  Evaluator evaluator;
  Ciphertext a, b;
};

}  // namespace theo::test
