#pragma once
// The Context, keys and inputs of the key-switching scheduler tests
// (tests/ckks/test_ckks_key_switch_batch.cpp on the CPU, tests/cuda/test_cuda_pipeline.cpp against
// it on the GPU): fixed seeds, so that every backend and every set of Optimizations holds the
// same words.

#include <vector>

#include "ckks/ckks_test_util.h"

namespace theo::test {

// No tuning table of the machine running the tests is read: Auto takes the footprint model.
inline ContextPtr context_with(BackendChoice backend, const ParameterSet& p,
                               const Optimizations& opt, const KeySwitchOptions& ks = {}) {
  ContextOptions o = test_options(backend);
  o.optimizations = opt;
  o.key_switching = ks;
  o.key_switching.tuning.use_table = false;
  return Context::create(p, o);
}

inline std::vector<Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.8, phase + 0.37 * static_cast<double>(i));
  return v;
}

// Keys (relinearization, Galois elements of 1, -2, 5, 3 and conjugation) and inputs at two
// levels: a[i], b[i] at the top, low one level below.
struct KeySwitchFixture {
  KeySwitchFixture(BackendChoice backend, const ParameterSet& p, const Optimizations& opt,
                   const KeySwitchOptions& ks = {})
      : ctx(context_with(backend, p, opt, ks)),
        kg(ctx, seed_of(42)),
        sk(kg.create_secret_key()),
        rlk(kg.create_relin_key(sk)),
        gk(kg.create_galois_keys(sk, {1, -2, 5, 3}, true)),
        enc(ctx),
        encryptor(ctx, sk, seed_of(43)),
        ev(ctx) {
    top = ctx->default_encryption_level();
    for (int i = 0; i < 3; ++i) {
      a.push_back(encryptor.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.1 * i), top)));
      b.push_back(encryptor.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.5 + i), top)));
    }
    low = encryptor.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.9), top - 1));
  }
  ContextPtr ctx;
  KeyGenerator kg;
  SecretKey sk;
  RelinKey rlk;
  GaloisKeys gk;
  Encoder enc;
  Encryptor encryptor;
  Evaluator ev;
  u32 top = 0;
  std::vector<Ciphertext> a, b;
  Ciphertext low;
};

}  // namespace theo::test
