// The seed expansion of Backend::sample_uniform (math/uniform_expand.h): the ChaCha20 block
// function against RFC 8439 and libsodium, the 128-bit reduction against __int128 arithmetic, and
// the CPU backend's words against an independent composition of libsodium keystream.

#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "math/uniform_expand.h"
#include "seed_test_util.h"
#include "theo/backend/factory.h"
#include "theo/errors.h"
#include "theo/math/primes.h"
#include "theo/ring/backend.h"

namespace theo {
namespace {

namespace ue = uniform_expand;
__extension__ using U128 = unsigned __int128;
using test::Seed;
using test::seed_from;

// One 64-byte keystream block from libsodium's IETF ChaCha20 (the XOR with zeros is the stream).
std::array<u32, 16> sodium_block(const Seed& key, u32 counter, const std::uint8_t nonce[12]) {
  EXPECT_GE(sodium_init(), 0);
  std::array<std::uint8_t, 64> zeros{}, ks{};
  crypto_stream_chacha20_ietf_xor_ic(ks.data(), zeros.data(), ks.size(), nonce, counter,
                                     key.data());
  std::array<u32, 16> w{};
  for (u32 i = 0; i < 16; ++i) {
    w[i] = static_cast<u32>(ks[4 * i]) | (static_cast<u32>(ks[4 * i + 1]) << 8) |
           (static_cast<u32>(ks[4 * i + 2]) << 16) | (static_cast<u32>(ks[4 * i + 3]) << 24);
  }
  return w;
}

TEST(UniformExpand, ChaCha20BlockMatchesRfc8439Vector) {
  // RFC 8439 section 2.3.2: key 00..1f, counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00.
  Seed key;
  for (u32 i = 0; i < 32; ++i)
    key[i] = static_cast<std::uint8_t>(i);
  u32 out[16];
  ue::chacha20_block(ue::make_key(key), 1, 0x09000000u, 0x4a000000u, 0, out);
  const u32 expected[16] = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033,
                            0x9aaa2204, 0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                            0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  for (u32 i = 0; i < 16; ++i)
    EXPECT_EQ(out[i], expected[i]) << "word " << i;
}

TEST(UniformExpand, ChaCha20BlockMatchesLibsodium) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Seed key = seed_from(rng);
    const u32 counter = trial < 4 ? 0xffffffffu - static_cast<u32>(trial) : static_cast<u32>(rng());
    std::uint8_t nonce[12];
    for (auto& b : nonce)
      b = static_cast<std::uint8_t>(rng());
    u32 n0, n1, n2;
    std::memcpy(&n0, nonce, 4);  // the test host is little endian, like the construction
    std::memcpy(&n1, nonce + 4, 4);
    std::memcpy(&n2, nonce + 8, 4);
    u32 out[16];
    ue::chacha20_block(ue::make_key(key), counter, n0, n1, n2, out);
    const auto ref = sodium_block(key, counter, nonce);
    for (u32 i = 0; i < 16; ++i)
      ASSERT_EQ(out[i], ref[i]) << "trial " << trial << " word " << i;
  }
}

TEST(UniformExpand, Reduce128MatchesInt128) {
  std::mt19937_64 rng(11);
  const u32 qs[] = {3, 65537, 998244353, 2147352577, 2147483647, 30539777};
  for (const u32 q : qs) {
    for (int i = 0; i < 2000; ++i) {
      u32 w[4];
      for (auto& x : w)
        x = i < 4 ? 0xffffffffu : static_cast<u32>(rng());
      const U128 v = (static_cast<U128>(w[3]) << 96) | (static_cast<U128>(w[2]) << 64) |
                     (static_cast<U128>(w[1]) << 32) | w[0];
      ASSERT_EQ(ue::reduce_u128(w[0], w[1], w[2], w[3], q, ue::barrett64(q)),
                static_cast<u32>(v % q));
    }
  }
}

// The construction spelled out with libsodium keystream: the CPU backend must match it word for
// word (and the CUDA backend matches the CPU one in tests/cuda/test_cuda_sampler.cpp).
TEST(UniformExpand, CpuBackendMatchesLibsodiumComposition) {
  RingParams ring;
  ring.log_n = 10;
  ring.primes = find_ntt_primes(ring.log_n, 30, 6);
  const auto small = find_ntt_primes(ring.log_n, 25, 2, ring.primes);
  ring.primes.insert(ring.primes.end(), small.begin(), small.end());
  const auto be = make_cpu_backend(ring, 2);
  std::mt19937_64 rng(3);
  const Seed seed = seed_from(rng);
  const u64 stream = 0x0123456789abcdefull;
  const Basis basis{5, 0, 7, 2};
  RnsPoly p = be->make_poly(basis);
  be->sample_uniform(seed, stream, p.ref());
  std::vector<u32> got(p.words());
  be->download(p.cref(), got.data());
  const u32 n = be->n();
  for (u32 l = 0; l < basis.size; ++l) {
    const u32 q = ring.primes[basis[l]];
    std::uint8_t nonce[12];
    for (u32 i = 0; i < 8; ++i)
      nonce[i] = static_cast<std::uint8_t>(stream >> (8 * i));
    const u32 prime = basis[l];
    for (u32 i = 0; i < 4; ++i)
      nonce[8 + i] = static_cast<std::uint8_t>(prime >> (8 * i));
    for (u32 i = 0; i < n; i += 4) {
      const auto ks = sodium_block(seed, i / 4, nonce);
      for (u32 j = 0; j < 4; ++j) {
        const U128 v = (static_cast<U128>(ks[4 * j + 3]) << 96) |
                       (static_cast<U128>(ks[4 * j + 2]) << 64) |
                       (static_cast<U128>(ks[4 * j + 1]) << 32) | ks[4 * j];
        ASSERT_EQ(got[static_cast<std::size_t>(l) * n + i + j], static_cast<u32>(v % q))
            << "limb " << l << " word " << i + j;
      }
    }
  }
}

TEST(UniformExpand, LimbsDependOnlyOnSeedStreamAndPrime) {
  RingParams ring;
  ring.log_n = 12;
  ring.primes = find_ntt_primes(ring.log_n, 30, 5);
  const auto be = make_cpu_backend(ring, 2);
  std::mt19937_64 rng(5);
  const Seed seed = seed_from(rng);
  RnsPoly full = be->make_poly(Basis{0, 1, 2, 3, 4});
  RnsPoly part = be->make_poly(Basis{3, 1});
  RnsPoly other = be->make_poly(Basis{0, 1, 2, 3, 4});
  be->sample_uniform(seed, 9, full.ref());
  be->sample_uniform(seed, 9, part.ref());
  be->sample_uniform(seed, 10, other.ref());
  const u32 n = be->n();
  std::vector<u32> f(full.words()), p(part.words()), o(other.words());
  be->download(full.cref(), f.data());
  be->download(part.cref(), p.data());
  be->download(other.cref(), o.data());
  EXPECT_TRUE(std::equal(p.begin(), p.begin() + n, f.begin() + 3 * n));  // prime 3
  EXPECT_TRUE(std::equal(p.begin() + n, p.end(), f.begin() + n));        // prime 1
  u32 same = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    same += f[i] == o[i];
  EXPECT_LT(same, 4u) << "another stream id must give unrelated words";
  // Canonical, and roughly uniform: the mean of each limb is near q / 2.
  for (u32 l = 0; l < 5; ++l) {
    const double q = ring.primes[l];
    double sum = 0;
    for (u32 i = 0; i < n; ++i) {
      ASSERT_LT(f[static_cast<std::size_t>(l) * n + i], ring.primes[l]);
      sum += f[static_cast<std::size_t>(l) * n + i];
    }
    EXPECT_NEAR(sum / n / q, 0.5, 0.03) << "limb " << l;
  }
}

TEST(UniformExpand, RejectsAnInvalidOutput) {
  RingParams ring;
  ring.log_n = 10;
  ring.primes = find_ntt_primes(ring.log_n, 30, 2);
  const auto be = make_cpu_backend(ring, 1);
  RnsPoly p = be->make_poly(Basis{0, 1});
  PolyRef bad = p.ref();
  bad.n = 512;  // not the ring degree
  EXPECT_THROW(be->sample_uniform(Seed{}, 0, bad), Error);
}

}  // namespace
}  // namespace theo
