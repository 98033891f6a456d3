// key_mult_automorphed (and key_mult_add_scaled, key_mult_rotations, key_mult_sums) on the GPU:
// identical words to the CPU backend for several Galois elements,
// digit counts, N and limb counts (including slices that are not 16-byte aligned).

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <span>
#include <vector>

#include "theo/backend/factory.h"
#include "theo/errors.h"
#include "theo/math/primes.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/backend.h"

namespace theo {
namespace {

std::vector<u32> random_words(const Backend& be, const Basis& b, std::mt19937_64& rng) {
  std::vector<u32> w(static_cast<std::size_t>(b.size) * be.n());
  for (u32 l = 0; l < b.size; ++l) {
    const u32 q = be.modulus(b[l]).q;
    for (u32 i = 0; i < be.n(); ++i)
      w[static_cast<std::size_t>(l) * be.n() + i] = static_cast<u32>(rng() % q);
  }
  return w;
}

// `count` polys' worth of fresh random words of `basis`.
std::vector<std::vector<u32>> random_host(const Backend& be, const Basis& basis, u32 count,
                                          std::mt19937_64& rng) {
  std::vector<std::vector<u32>> host;
  for (u32 i = 0; i < count; ++i)
    host.push_back(random_words(be, basis, rng));
  return host;
}

// Polys of `basis` on `be` holding the host words.
std::vector<RnsPoly> uploaded(Backend& be, const Basis& basis,
                              const std::vector<std::vector<u32>>& host) {
  std::vector<RnsPoly> polys;
  for (const auto& h : host) {
    polys.push_back(be.make_poly(basis));
    be.upload(h.data(), polys.back().ref());
  }
  return polys;
}

// The words of every poly, in order.
std::vector<std::vector<u32>> downloaded(Backend& be, const std::vector<RnsPoly>& polys) {
  std::vector<std::vector<u32>> words;
  for (const RnsPoly& p : polys) {
    words.emplace_back(p.words());
    be.download(p.cref(), words.back().data());
  }
  return words;
}

// A ring of 13 NTT primes of 30 bits for N = 2^log_n.
RingParams ring_of(u32 log_n) {
  RingParams ring;
  ring.log_n = log_n;
  ring.primes = find_ntt_primes(log_n, 30, 13);
  return ring;
}

// test(log_n, cpu, gpu) with a CPU and a CUDA backend over ring_of(log_n), N = 2^12 and 2^16.
template <typename Test>
void for_each_ring(Test&& test) {
  for (const u32 log_n : {12u, 16u}) {
    auto cpu = make_cpu_backend(ring_of(log_n));
    auto gpu = make_cuda_backend(ring_of(log_n));
    test(log_n, *cpu, *gpu);
  }
}

// The digits d_k and key halves (b_k, a_k) of `dnum` digits laid out as polys[3k], [3k + 1],
// [3k + 2].
void digit_triples(const std::vector<RnsPoly>& polys, u32 dnum, std::vector<ConstPolyRef>& d,
                   std::vector<ConstPolyRef>& b, std::vector<ConstPolyRef>& a) {
  for (u32 k = 0; k < dnum; ++k) {
    d.push_back(polys[3 * k].cref());
    b.push_back(polys[3 * k + 1].cref());
    a.push_back(polys[3 * k + 2].cref());
  }
}

// The words of the `pairs` output pairs that op(be, polys, o0, o1) writes, on the CPU ([0]) and on
// the GPU ([1]), from polys holding the same host words: o0[i], o1[i] are outputs 2i and 2i + 1.
template <typename Op>
std::array<std::vector<std::vector<u32>>, 2> key_mult_on_both(
    Backend& cpu, Backend& gpu, const Basis& basis, const std::vector<std::vector<u32>>& host,
    u32 pairs, Op&& op) {
  std::array<std::vector<std::vector<u32>>, 2> out;
  for (int side = 0; side < 2; ++side) {
    Backend& be = side == 0 ? cpu : gpu;
    const std::vector<RnsPoly> polys = uploaded(be, basis, host);
    std::vector<RnsPoly> outs;
    for (u32 i = 0; i < 2 * pairs; ++i)
      outs.push_back(be.make_poly(basis));
    std::vector<PolyRef> o0, o1;
    for (u32 i = 0; i < pairs; ++i) {
      o0.push_back(outs[2 * i].ref());
      o1.push_back(outs[2 * i + 1].ref());
    }
    op(be, polys, o0, o1);
    out[side] = downloaded(be, outs);
  }
  return out;
}

// key_mult_add_scaled (relinearization's P d_0 / P d_1 in the KeyMult pass): the CPU's words
// (key_mult, then two mul_scalar_add), fresh random words and constants, up to 17 digits (two
// launches, the terms riding on the last); an a0 aliasing an output is refused.
TEST(CudaKeyMultAddScaled, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for_each_ring([&](u32 log_n, Backend& cpu, Backend& gpu) {
    for (const u32 limbs : {1u, 7u, 13u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 3u, 17u}) {
        const auto host = random_host(cpu, basis, 3 * dnum + 2, rng);
        std::vector<u32> s(limbs);
        for (u32 l = 0; l < limbs; ++l)
          s[l] = static_cast<u32>(rng() % cpu.modulus(basis[l]).q);
        const auto out =
            key_mult_on_both(cpu, gpu, basis, host, 1,
                             [&](Backend& be, const std::vector<RnsPoly>& polys,
                                 std::span<const PolyRef> o0, std::span<const PolyRef> o1) {
                               std::vector<ConstPolyRef> d, b, a;
                               digit_triples(polys, dnum, d, b, a);
                               be.key_mult_add_scaled(d, b, a, o0[0], o1[0], polys[3 * dnum].cref(),
                                                      polys[3 * dnum + 1].cref(), s);
                               if (&be == &gpu && dnum == 3) {
                                 EXPECT_THROW(be.key_mult_add_scaled(d, b, a, o0[0], o1[0], o0[0],
                                                                     polys[3 * dnum + 1].cref(), s),
                                              ParameterError);
                               }
                             });
        ASSERT_EQ(out[0], out[1]) << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum;
      }
    }
  });
}

TEST(CudaKeyMultAutomorphed, MatchesCpu) {
  std::mt19937_64 rng(0x6b6d61ULL);
  for_each_ring([&](u32 log_n, Backend& cpu, Backend& gpu) {
    for (const u32 limbs : {1u, 7u, 13u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 3u, 4u}) {
        for (const int rot : {1, -5, 1234}) {
          const u32 g = galois_element_for_rotation(rot, log_n);
          const auto host = random_host(cpu, basis, 3 * dnum, rng);
          // Every other case adds phi_g(add0) to out0 in the same pass (a hoisted P c0).
          const bool with_add0 = (dnum + limbs) % 2 == 0;
          const auto out = key_mult_on_both(
              cpu, gpu, basis, host, 1,
              [&](Backend& be, const std::vector<RnsPoly>& polys, std::span<const PolyRef> o0,
                  std::span<const PolyRef> o1) {
                std::vector<ConstPolyRef> d, b, a;
                digit_triples(polys, dnum, d, b, a);
                be.key_mult_automorphed(d, g, b, a, o0[0], o1[0],
                                        with_add0 ? polys[1].cref() : ConstPolyRef{});
              });
          ASSERT_EQ(out[0][0], out[1][0])
              << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum << " rot " << rot;
          ASSERT_EQ(out[0][1], out[1][1]);
        }
      }
    }
  });
}

// key_mult_rotations: several rotations of one set of digits (each block of the digits read once
// for all of them), with and without add0, more rotations than one launch takes, against the CPU
// (whose default is one key_mult_automorphed per rotation).
TEST(CudaKeyMultRotations, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for_each_ring([&](u32 log_n, Backend& cpu, Backend& gpu) {
    for (const u32 limbs : {1u, 12u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 4u, 9u}) {
        for (const u32 rots : {1u, 3u, 11u}) {
          std::vector<u32> gs;
          for (u32 r = 0; r < rots; ++r)
            gs.push_back(galois_element_for_rotation(static_cast<i64>(rng() % 4000) - 2000, log_n) |
                         1u);
          const bool with_add0 = rots != 3;
          const auto host = random_host(cpu, basis, dnum + 2 * rots * dnum + 1, rng);
          const auto got = key_mult_on_both(
              cpu, gpu, basis, host, rots,
              [&](Backend& be, const std::vector<RnsPoly>& polys, std::span<const PolyRef> o0,
                  std::span<const PolyRef> o1) {
                std::vector<ConstPolyRef> d, kb, ka;
                for (u32 k = 0; k < dnum; ++k)
                  d.push_back(polys[k].cref());
                for (u32 r = 0; r < rots; ++r) {
                  for (u32 k = 0; k < dnum; ++k) {
                    kb.push_back(polys[dnum + 2 * (r * dnum + k)].cref());
                    ka.push_back(polys[dnum + 2 * (r * dnum + k) + 1].cref());
                  }
                }
                be.key_mult_rotations(d, gs, kb, ka, o0, o1,
                                      with_add0 ? polys.back().cref() : ConstPolyRef{});
              });
          for (u32 r = 0; r < 2 * rots; ++r)
            ASSERT_EQ(got[0][r], got[1][r])
                << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum << " rotations "
                << rots << " output " << r << (with_add0 ? " with add0" : "");
        }
      }
    }
  });
}

// key_mult_sums: several sums over shared (kb, ka), some terms left out, more sums than one launch
// takes, and more terms than the kernel takes (the per-sum fallback), against the CPU.
TEST(CudaKeyMultSums, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for_each_ring([&](u32 log_n, Backend& cpu, Backend& gpu) {
    const Basis basis = Basis::range(0, 9);
    for (const u32 terms : {1u, 8u, 40u}) {
      for (const u32 sums : {1u, 3u, 6u}) {
        // d[g][k] present unless (g + k) % 3 == 2; term g % terms always present in sum g.
        std::vector<bool> present(sums * terms);
        for (u32 g = 0; g < sums; ++g)
          for (u32 k = 0; k < terms; ++k)
            present[g * terms + k] = (g + k) % 3 != 2 || k == g % terms;
        const auto host = random_host(cpu, basis, 2 * terms + sums * terms, rng);
        const auto got = key_mult_on_both(
            cpu, gpu, basis, host, sums,
            [&](Backend& be, const std::vector<RnsPoly>& polys, std::span<const PolyRef> o0,
                std::span<const PolyRef> o1) {
              std::vector<ConstPolyRef> kb, ka, d;
              for (u32 k = 0; k < terms; ++k) {
                kb.push_back(polys[2 * k].cref());
                ka.push_back(polys[2 * k + 1].cref());
              }
              for (u32 i = 0; i < sums * terms; ++i)
                d.push_back(present[i] ? polys[2 * terms + i].cref() : ConstPolyRef{});
              be.key_mult_sums(d, kb, ka, o0, o1);
            });
        for (u32 i = 0; i < 2 * sums; ++i)
          ASSERT_EQ(got[0][i], got[1][i])
              << "log_n " << log_n << " terms " << terms << " sums " << sums << " output " << i;
      }
    }
  });
}

}  // namespace
}  // namespace theo
