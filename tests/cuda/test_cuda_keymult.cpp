// key_mult_automorphed (and key_mult_add_scaled, key_mult_rotations, key_mult_sums) on the GPU:
// identical words to the CPU backend for several Galois elements,
// digit counts, N and limb counts (including slices that are not 16-byte aligned).

#include <gtest/gtest.h>

#include <random>
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

// key_mult_add_scaled (relinearization's P d_0 / P d_1 in the KeyMult pass): the CPU's words
// (key_mult, then two mul_scalar_add), fresh random words and constants, up to 17 digits (two
// launches, the terms riding on the last); an a0 aliasing an output is refused.
TEST(CudaKeyMultAddScaled, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for (const u32 log_n : {12u, 16u}) {
    auto cpu = make_cpu_backend(ring_of(log_n));
    auto gpu = make_cuda_backend(ring_of(log_n));
    for (const u32 limbs : {1u, 7u, 13u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 3u, 17u}) {
        const auto host = random_host(*cpu, basis, 3 * dnum + 2, rng);
        std::vector<u32> s(limbs);
        for (u32 l = 0; l < limbs; ++l)
          s[l] = static_cast<u32>(rng() % cpu->modulus(basis[l]).q);
        std::vector<std::vector<u32>> out[2];
        for (int side = 0; side < 2; ++side) {
          Backend& be = side == 0 ? *cpu : *gpu;
          const std::vector<RnsPoly> polys = uploaded(be, basis, host);
          std::vector<ConstPolyRef> d, b, a;
          for (u32 k = 0; k < dnum; ++k) {
            d.push_back(polys[3 * k].cref());
            b.push_back(polys[3 * k + 1].cref());
            a.push_back(polys[3 * k + 2].cref());
          }
          std::vector<RnsPoly> o;
          o.push_back(be.make_poly(basis));
          o.push_back(be.make_poly(basis));
          be.key_mult_add_scaled(d, b, a, o[0].ref(), o[1].ref(), polys[3 * dnum].cref(),
                                 polys[3 * dnum + 1].cref(), s);
          out[side] = downloaded(be, o);
          if (side == 1 && dnum == 3) {
            EXPECT_THROW(be.key_mult_add_scaled(d, b, a, o[0].ref(), o[1].ref(), o[0].cref(),
                                                polys[3 * dnum + 1].cref(), s),
                         ParameterError);
          }
        }
        ASSERT_EQ(out[0], out[1]) << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum;
      }
    }
  }
}

TEST(CudaKeyMultAutomorphed, MatchesCpu) {
  std::mt19937_64 rng(0x6b6d61ULL);
  for (const u32 log_n : {12u, 16u}) {
    auto cpu = make_cpu_backend(ring_of(log_n));
    auto gpu = make_cuda_backend(ring_of(log_n));
    for (const u32 limbs : {1u, 7u, 13u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 3u, 4u}) {
        for (const int rot : {1, -5, 1234}) {
          const u32 g = galois_element_for_rotation(rot, log_n);
          std::vector<std::vector<u32>> host;
          for (u32 k = 0; k < 3 * dnum; ++k)
            host.push_back(random_words(*cpu, basis, rng));
          std::vector<u32> out_words[2][2];
          for (int side = 0; side < 2; ++side) {
            Backend& be = side == 0 ? *cpu : *gpu;
            std::vector<RnsPoly> polys;
            for (const auto& h : host) {
              polys.push_back(be.make_poly(basis));
              be.upload(h.data(), polys.back().ref());
            }
            std::vector<ConstPolyRef> d, b, a;
            for (u32 k = 0; k < dnum; ++k) {
              d.push_back(polys[3 * k].cref());
              b.push_back(polys[3 * k + 1].cref());
              a.push_back(polys[3 * k + 2].cref());
            }
            RnsPoly o0 = be.make_poly(basis), o1 = be.make_poly(basis);
            // Every other case adds phi_g(add0) to out0 in the same pass (a hoisted P c0).
            const bool with_add0 = (dnum + limbs) % 2 == 0;
            be.key_mult_automorphed(d, g, b, a, o0.ref(), o1.ref(),
                                    with_add0 ? polys[1].cref() : ConstPolyRef{});
            for (int o = 0; o < 2; ++o) {
              out_words[side][o].resize(static_cast<std::size_t>(limbs) * be.n());
              be.download((o == 0 ? o0 : o1).cref(), out_words[side][o].data());
            }
          }
          ASSERT_EQ(out_words[0][0], out_words[1][0])
              << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum << " rot " << rot;
          ASSERT_EQ(out_words[0][1], out_words[1][1]);
        }
      }
    }
  }
}

// key_mult_rotations: several rotations of one set of digits (each block of the digits read once
// for all of them), with and without add0, more rotations than one launch takes, against the CPU
// (whose default is one key_mult_automorphed per rotation).
TEST(CudaKeyMultRotations, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for (const u32 log_n : {12u, 16u}) {
    auto cpu = make_cpu_backend(ring_of(log_n));
    auto gpu = make_cuda_backend(ring_of(log_n));
    for (const u32 limbs : {1u, 12u}) {
      const Basis basis = Basis::range(0, limbs);
      for (const u32 dnum : {1u, 4u, 9u}) {
        for (const u32 rots : {1u, 3u, 11u}) {
          std::vector<u32> gs;
          for (u32 r = 0; r < rots; ++r)
            gs.push_back(galois_element_for_rotation(static_cast<i64>(rng() % 4000) - 2000, log_n) |
                         1u);
          const bool with_add0 = rots != 3;
          const auto host = random_host(*cpu, basis, dnum + 2 * rots * dnum + 1, rng);
          std::vector<std::vector<u32>> got[2];
          for (int side = 0; side < 2; ++side) {
            Backend& be = side == 0 ? *cpu : *gpu;
            const std::vector<RnsPoly> polys = uploaded(be, basis, host);
            std::vector<RnsPoly> outs;
            std::vector<ConstPolyRef> d, kb, ka;
            for (u32 k = 0; k < dnum; ++k)
              d.push_back(polys[k].cref());
            for (u32 r = 0; r < rots; ++r) {
              for (u32 k = 0; k < dnum; ++k) {
                kb.push_back(polys[dnum + 2 * (r * dnum + k)].cref());
                ka.push_back(polys[dnum + 2 * (r * dnum + k) + 1].cref());
              }
            }
            std::vector<PolyRef> o0, o1;
            for (u32 r = 0; r < 2 * rots; ++r)
              outs.push_back(be.make_poly(basis));
            for (u32 r = 0; r < rots; ++r) {
              o0.push_back(outs[2 * r].ref());
              o1.push_back(outs[2 * r + 1].ref());
            }
            be.key_mult_rotations(d, gs, kb, ka, o0, o1,
                                  with_add0 ? polys.back().cref() : ConstPolyRef{});
            got[side] = downloaded(be, outs);
          }
          for (u32 r = 0; r < 2 * rots; ++r)
            ASSERT_EQ(got[0][r], got[1][r])
                << "log_n " << log_n << " limbs " << limbs << " dnum " << dnum << " rotations "
                << rots << " output " << r << (with_add0 ? " with add0" : "");
        }
      }
    }
  }
}

// key_mult_sums: several sums over shared (kb, ka), some terms left out, more sums than one launch
// takes, and more terms than the kernel takes (the per-sum fallback), against the CPU.
TEST(CudaKeyMultSums, MatchesCpu) {
  std::mt19937_64 rng(std::random_device{}());
  for (const u32 log_n : {12u, 16u}) {
    auto cpu = make_cpu_backend(ring_of(log_n));
    auto gpu = make_cuda_backend(ring_of(log_n));
    const Basis basis = Basis::range(0, 9);
    for (const u32 terms : {1u, 8u, 40u}) {
      for (const u32 sums : {1u, 3u, 6u}) {
        // d[g][k] present unless (g + k) % 3 == 2; term g % terms always present in sum g.
        std::vector<bool> present(sums * terms);
        for (u32 g = 0; g < sums; ++g)
          for (u32 k = 0; k < terms; ++k)
            present[g * terms + k] = (g + k) % 3 != 2 || k == g % terms;
        const auto host = random_host(*cpu, basis, 2 * terms + sums * terms, rng);
        std::vector<std::vector<u32>> got[2];
        for (int side = 0; side < 2; ++side) {
          Backend& be = side == 0 ? *cpu : *gpu;
          const std::vector<RnsPoly> polys = uploaded(be, basis, host);
          std::vector<RnsPoly> outs;
          std::vector<ConstPolyRef> kb, ka, d;
          for (u32 k = 0; k < terms; ++k) {
            kb.push_back(polys[2 * k].cref());
            ka.push_back(polys[2 * k + 1].cref());
          }
          for (u32 i = 0; i < sums * terms; ++i)
            d.push_back(present[i] ? polys[2 * terms + i].cref() : ConstPolyRef{});
          std::vector<PolyRef> o0, o1;
          for (u32 g = 0; g < 2 * sums; ++g)
            outs.push_back(be.make_poly(basis));
          for (u32 g = 0; g < sums; ++g) {
            o0.push_back(outs[2 * g].ref());
            o1.push_back(outs[2 * g + 1].ref());
          }
          be.key_mult_sums(d, kb, ka, o0, o1);
          got[side] = downloaded(be, outs);
        }
        for (u32 i = 0; i < 2 * sums; ++i)
          ASSERT_EQ(got[0][i], got[1][i])
              << "log_n " << log_n << " terms " << terms << " sums " << sums << " output " << i;
      }
    }
  }
}

}  // namespace
}  // namespace theo
