#pragma once
// Shared helpers of the ring tests: a seeded fixture that reports its seed on failure, random
// polynomials, and plain coefficient-domain reference implementations.

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "theo/math/modarith.h"
#include "theo/math/primes.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/backend.h"

namespace theo::test {

// Fresh randomness every run; THEO_TEST_SEED=<n> replays a failing run.
class RingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("THEO_TEST_SEED");
    seed_ = env ? std::stoull(env) : (u64{std::random_device{}()} << 32 | std::random_device{}());
    rng_.seed(seed_);
  }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "[ring test] seed = " << seed_ << " (rerun with THEO_TEST_SEED=" << seed_
                << ")\n";
  }

  u32 uniform(u32 bound) { return std::uniform_int_distribution<u32>(0, bound - 1)(rng_); }

  // Random canonical words for every limb of `basis`; with `edges`, some words are 0, 1 or q-1.
  std::vector<u32> random_words(const Backend& be, const Basis& basis, bool edges = true) {
    const u32 n = be.n();
    std::vector<u32> w(static_cast<std::size_t>(basis.size) * n);
    for (u32 l = 0; l < basis.size; ++l) {
      const u32 q = be.modulus(basis[l]).q;
      for (u32 c = 0; c < n; ++c) {
        u32 v = uniform(q);
        if (edges && uniform(16) == 0) v = std::array<u32, 3>{0u, 1u, q - 1}[uniform(3)];
        w[static_cast<std::size_t>(l) * n + c] = v;
      }
    }
    return w;
  }

  RnsPoly random_poly(Backend& be, const Basis& basis) {
    return from_words(be, basis, random_words(be, basis));
  }

  static RnsPoly from_words(Backend& be, const Basis& basis, const std::vector<u32>& w) {
    RnsPoly p = be.make_poly(basis);
    be.upload(w.data(), p.ref());
    return p;
  }
  // NTT of host coefficient words.
  static RnsPoly ntt_of(Backend& be, const Basis& basis, const std::vector<u32>& coeffs) {
    RnsPoly p = from_words(be, basis, coeffs);
    const PolyRef r[] = {p.ref()};
    be.ntt(r);
    return p;
  }
  static std::vector<u32> words(Backend& be, const RnsPoly& p) {
    std::vector<u32> w(p.words());
    be.download(p.cref(), w.data());
    be.synchronize();
    return w;
  }

  u64 seed_ = 0;
  std::mt19937_64 rng_;
};

// A ring of degree 2^log_n whose primes mix sizes: `count` primes taken round-robin from just
// below 2^31 (the largest the library allows), around 2^30 and around 2^26.
inline RingParams mixed_ring(u32 log_n, u32 count) {
  RingParams r;
  r.log_n = log_n;
  const u32 per = (count + 2) / 3;
  const auto a = find_ntt_primes(log_n, 31, per);
  const auto b = find_ntt_primes(log_n, 30, per, a);
  auto ex = a;
  ex.insert(ex.end(), b.begin(), b.end());
  const auto c = find_ntt_primes(log_n, 26, per, ex);
  for (u32 i = 0; r.primes.size() < count; ++i) {
    for (const auto* v : {&a, &b, &c})
      if (r.primes.size() < count) r.primes.push_back((*v)[i]);
  }
  return r;
}

// Negacyclic schoolbook product of one limb.
inline std::vector<u32> negacyclic_mul(const u32* a, const u32* b, u32 n, u32 q) {
  std::vector<u32> c(n, 0);
  for (u32 i = 0; i < n; ++i)
    for (u32 j = 0; j < n; ++j) {
      const u32 p = mul_mod_ref(a[i], b[j], q);
      const u32 k = i + j;
      if (k < n)
        c[k] = add_mod(c[k], p, q);
      else
        c[k - n] = sub_mod(c[k - n], p, q);
    }
  return c;
}

// Coefficient a_i moved to X^(i*k mod 2N), negated when that exponent is >= N (X^N = -1).
inline std::vector<u32> coeff_automorphism(const u32* a, u32 n, u64 k, u32 q) {
  std::vector<u32> out(n, 0);
  for (u32 i = 0; i < n; ++i) {
    const u64 e = (static_cast<u64>(i) * k) % (2 * static_cast<u64>(n));
    if (e < n)
      out[e] = a[i];
    else
      out[e - n] = neg_mod(a[i], q);
  }
  return out;
}

// X^k * a(X) for any integer k.
inline std::vector<u32> coeff_monomial(const u32* a, u32 n, i64 k, u32 q) {
  const i64 two_n = 2 * static_cast<i64>(n);
  const i64 kk = ((k % two_n) + two_n) % two_n;
  std::vector<u32> out(n, 0);
  for (u32 i = 0; i < n; ++i) {
    const i64 e = (i + kk) % two_n;
    if (e < n)
      out[static_cast<u32>(e)] = a[i];
    else
      out[static_cast<u32>(e - n)] = neg_mod(a[i], q);
  }
  return out;
}

}  // namespace theo::test
