// Key-switching fusion on the GPU, bit-exact against the CPU reference: the fused transform
// arguments of the Backend (out-of-place src, echo, per-poly constants over mixed bases in one
// launch, ntt_sub_mul_scalar) for the register kernels (N = 2^12, 2^16) and the shared-memory tile
// kernels (other N, and N = 2^16 with Tuning::ntt.fast = 0); then the mechanisms that use them
// (Optimizations::fusion) on a CUDA Context against CPU Contexts with fusion on and off.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "ckks/ckks_test_util.h"
#include "theo/backend/factory.h"
#include "theo/circuits/circuits.h"
#include "theo/math/primes.h"

namespace theo {
namespace {

constexpr u32 kPrimes = 40;

// Mostly primes near 2^30, some just below 2^31 and some near 2^25, interleaved so that bases mix
// sizes.
RingParams ring_for(u32 log_n) {
  RingParams r;
  r.log_n = log_n;
  const auto big = find_ntt_primes(log_n, 31, 8);
  auto used = big;
  const auto small = find_ntt_primes(log_n, 25, 6, used);
  used.insert(used.end(), small.begin(), small.end());
  const auto mid = find_ntt_primes(log_n, 30, kPrimes - 14, used);
  std::size_t ib = 0, is = 0, im = 0;
  for (u32 i = 0; i < kPrimes; ++i) {
    if (i % 5 == 1 && ib < big.size())
      r.primes.push_back(big[ib++]);
    else if (i % 7 == 3 && is < small.size())
      r.primes.push_back(small[is++]);
    else if (im < mid.size())
      r.primes.push_back(mid[im++]);
    else
      r.primes.push_back(ib < big.size() ? big[ib++] : small[is++]);
  }
  return r;
}

struct Pair {
  std::unique_ptr<Backend> cpu, gpu;
};

// One CPU and one CUDA backend per degree; `tile` = the CUDA backend forced to the shared-memory
// tile kernels (Tuning::ntt.fast = 0).
Pair& backends(u32 log_n, bool tile = false) {
  static std::map<std::pair<u32, bool>, Pair> cache;
  const auto key = std::pair{log_n, tile};
  auto it = cache.find(key);
  if (it == cache.end()) {
    const RingParams r = ring_for(log_n);
    cuda::Tuning t;
    t.ntt.fast = tile ? 0 : 1;
    it = cache.emplace(key, Pair{make_cpu_backend(r), cuda::make_backend(r, t)}).first;
  }
  return it->second;
}

std::mt19937_64& rng() {
  static std::mt19937_64 g(0xf05e0ULL);
  return g;
}

std::vector<u32> random_words(const Backend& be, const Basis& b) {
  std::vector<u32> v(static_cast<std::size_t>(b.size) * be.n());
  for (u32 l = 0; l < b.size; ++l) {
    const u32 q = be.modulus(b.ids[l]).q;
    for (u32 i = 0; i < be.n(); ++i) {
      const u32 sel = static_cast<u32>(rng()() % 64);
      u32 x = static_cast<u32>(rng()() % q);
      if (sel == 0) x = 0;
      if (sel == 1) x = q - 1;
      v[static_cast<std::size_t>(l) * be.n() + i] = x;
    }
  }
  return v;
}

std::vector<u32> random_consts(const Backend& be, const Basis& b) {
  std::vector<u32> c(b.size);
  for (u32 l = 0; l < b.size; ++l)
    c[l] = static_cast<u32>(rng()() % be.modulus(b.ids[l]).q);
  if (b.size > 1) c[1] = 0;
  return c;
}

Basis random_basis(u32 limbs) {
  std::vector<PrimeId> ids(kPrimes);
  for (u32 i = 0; i < kPrimes; ++i)
    ids[i] = static_cast<PrimeId>(i);
  std::shuffle(ids.begin(), ids.end(), rng());
  ids.resize(limbs);
  return Basis(std::span<const PrimeId>(ids));
}

// The same words on both backends.
struct Twin {
  RnsPoly c, g;
  Twin(Pair& p, const Basis& b, const std::vector<u32>& w)
      : c(p.cpu->make_poly(b)), g(p.gpu->make_poly(b)) {
    p.cpu->upload(w.data(), c.ref());
    p.gpu->upload(w.data(), g.ref());
  }
  Twin(Pair& p, const Basis& b) : Twin(p, b, random_words(*p.cpu, b)) {}
};

std::vector<u32> words(Backend& be, const RnsPoly& p) {
  std::vector<u32> w(p.words());
  be.download(p.cref(), w.data());
  return w;
}

::testing::AssertionResult same(Pair& p, const Twin& t, const std::string& what) {
  const auto a = words(*p.cpu, t.c), b = words(*p.gpu, t.g);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return ::testing::AssertionFailure()
             << what << ": first difference at limb " << i / t.c.n() << " coeff " << i % t.c.n()
             << ": cpu " << a[i] << ", cuda " << b[i];
  return ::testing::AssertionSuccess();
}

struct Refs {
  std::vector<PolyRef> c, g;
};
struct CRefs {
  std::vector<ConstPolyRef> c, g;
};

// Degrees and kernels: register kernels at 2^12 and 2^16, tile kernels at 2^13 and 2^15 and at
// 2^16 with fast = 0.
struct KernelPath {
  u32 log_n;
  bool tile;
};
const KernelPath kKernelPaths[] = {{12, false}, {13, false}, {15, false}, {16, false}, {16, true}};

std::string label(const KernelPath& s) {
  return "N=2^" + std::to_string(s.log_n) + (s.tile ? " tile" : "");
}

TEST(CudaFusion, OutOfPlaceTransformsWithEcho) {
  for (const KernelPath& st : kKernelPaths) {
    Pair& p = backends(st.log_n, st.tile);
    for (const u32 limbs : {1u, 7u, 24u}) {
      const Basis b = random_basis(limbs);
      const auto consts = random_consts(*p.cpu, b);
      for (const bool inverse : {false, true}) {
        for (const bool echo : {false, true}) {
          Twin x(p, b), y(p, b), ox(p, b), oy(p, b), ex(p, b), ey(p, b);
          const auto x0 = words(*p.cpu, x.c);
          Refs out{{ox.c.ref(), oy.c.ref()}, {ox.g.ref(), oy.g.ref()}};
          CRefs src{{x.c.cref(), y.c.cref()}, {x.g.cref(), y.g.cref()}};
          Refs ech{{ex.c.ref(), ey.c.ref()}, {ex.g.ref(), ey.g.ref()}};
          const std::span<const PolyRef> ec = echo ? ech.c : std::span<const PolyRef>();
          const std::span<const PolyRef> eg = echo ? ech.g : std::span<const PolyRef>();
          if (inverse) {
            p.cpu->intt(out.c, consts, src.c, ec);
            p.gpu->intt(out.g, consts, src.g, eg);
          } else {
            p.cpu->ntt(out.c, consts, src.c, ec);
            p.gpu->ntt(out.g, consts, src.g, eg);
          }
          const std::string what = label(st) + " limbs " + std::to_string(limbs) +
                                   (inverse ? " intt" : " ntt") + (echo ? " echo" : "");
          EXPECT_TRUE(same(p, ox, what + " out[0]"));
          EXPECT_TRUE(same(p, oy, what + " out[1]"));
          EXPECT_EQ(words(*p.gpu, x.g), x0) << what << ": src changed";
          if (echo) {
            EXPECT_EQ(words(*p.gpu, ex.g), x0) << what << ": echo";
            EXPECT_TRUE(same(p, ey, what + " echo[1]"));
          }
        }
      }
    }
  }
}

// Per-poly constants over mixed bases, more polys than kMaxBatch and more limbs than
// kMaxNttLimbs (several launches), in place with an echo.
TEST(CudaFusion, MixedBasesSplitAcrossLaunches) {
  for (const KernelPath& st :
       {KernelPath{12, false}, KernelPath{16, false}, KernelPath{14, false}}) {
    Pair& p = backends(st.log_n, st.tile);
    std::vector<Twin> polys, echoes;
    std::vector<u32> consts;
    const u32 sizes[] = {3, 40, 1, 37, 5, 2, 2, 9, 1, 1, 4, 3, 2, 1, 1, 1, 2, 3, 39, 38, 40, 35, 1};
    for (const u32 limbs : sizes) {
      const Basis b = random_basis(limbs);
      polys.emplace_back(p, b);
      echoes.emplace_back(p, b);
      const auto c = random_consts(*p.cpu, b);
      consts.insert(consts.end(), c.begin(), c.end());
    }
    for (const bool inverse : {false, true}) {
      Refs r, e;
      for (std::size_t k = 0; k < polys.size(); ++k) {
        r.c.push_back(polys[k].c.ref());
        r.g.push_back(polys[k].g.ref());
        e.c.push_back(echoes[k].c.ref());
        e.g.push_back(echoes[k].g.ref());
      }
      if (inverse) {
        p.cpu->intt(r.c, consts, {}, e.c);
        p.gpu->intt(r.g, consts, {}, e.g);
      } else {
        p.cpu->ntt(r.c, consts, {}, e.c);
        p.gpu->ntt(r.g, consts, {}, e.g);
      }
      for (std::size_t k = 0; k < polys.size(); ++k) {
        const std::string what =
            label(st) + (inverse ? " intt" : " ntt") + " poly " + std::to_string(k);
        EXPECT_TRUE(same(p, polys[k], what));
        EXPECT_TRUE(same(p, echoes[k], what + " echo"));
      }
    }
  }
}

TEST(CudaFusion, NttSubMulScalar) {
  for (const KernelPath& st : kKernelPaths) {
    Pair& p = backends(st.log_n, st.tile);
    const Basis b = random_basis(13);
    const auto pre = random_consts(*p.cpu, b);
    for (const auto& [first, width] : {std::pair{0u, 13u}, std::pair{4u, 6u}, std::pair{12u, 1u}}) {
      const Basis window = b.slice(first, width);
      const auto s = random_consts(*p.cpu, window);
      for (const bool with_pre : {false, true}) {
        Twin x0(p, b), x1(p, b), a0(p, window), a1(p, window);
        Refs xs{{x0.c.ref(), x1.c.ref()}, {x0.g.ref(), x1.g.ref()}};
        CRefs as{{a0.c.cref(), a1.c.cref()}, {a0.g.cref(), a1.g.cref()}};
        const std::span<const u32> c =
            with_pre ? std::span<const u32>(pre) : std::span<const u32>();
        p.cpu->ntt_sub_mul_scalar(xs.c, c, as.c, first, s);
        p.gpu->ntt_sub_mul_scalar(xs.g, c, as.g, first, s);
        const std::string what = label(st) + " window " + std::to_string(first) + "+" +
                                 std::to_string(width) + (with_pre ? " pre" : "");
        EXPECT_TRUE(same(p, x0, what + " poly 0"));
        EXPECT_TRUE(same(p, x1, what + " poly 1"));
      }
    }
  }
}

TEST(CudaFusion, MisalignedOperandsRejected) {
  Pair& p = backends(12);
  const Basis b = random_basis(3);
  RnsPoly x = p.gpu->make_poly(b), y = p.gpu->make_poly(b);
  const PolyRef xs[] = {x.ref()};
  ConstPolyRef odd = y.cref();
  odd.data += 1;  // same shape, 4 bytes off: refused before anything is read
  const ConstPolyRef src[] = {odd};
  EXPECT_THROW(p.gpu->ntt(xs, {}, src), ParameterError);
}

// ---- mechanisms ------------------------------------------------------------------------------

using Hashes = std::map<std::string, u64>;

ContextPtr context_on(const ParameterSet& p, BackendChoice b, bool fusion) {
  ContextOptions o;
  o.backend = b;
  o.allow_insecure = true;
  o.optimizations.fusion = fusion;
  return Context::create(p, o);
}

std::vector<test::Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<test::Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.8, phase + 0.41 * static_cast<double>(i));
  return v;
}

Hashes run_mechanisms(const ParameterSet& params, BackendChoice backend, bool fusion) {
  using test::hash_ct;
  using test::hash_poly;
  using test::seed_of;
  const ContextPtr ctx = context_on(params, backend, fusion);
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
  // ModDown + rescale at every level below (its leaving limbs in one piece or two, by level).
  if (ab.level() > 0) {
    for (Ciphertext sq = ev.multiply_relin_rescale(ab, ab, rlk);;
         sq = ev.multiply_relin_rescale(sq, sq, rlk)) {
      h["square to " + std::to_string(sq.level())] = hash_ct(*ctx, sq);
      if (sq.level() == 0) break;
    }
  }
  Ciphertext x = ev.multiply_const(a, 2.0);
  for (u32 l = top; l > 0; --l) {
    x = ev.rescale(x);
    h["rescale to " + std::to_string(l - 1)] = hash_ct(*ctx, x);
  }
  h["level_down to 0"] = hash_ct(*ctx, ev.level_down(ab, 0));
  const auto hoisted = ev.rotate_hoisted(ab, {1, -2, 5}, gk);
  for (std::size_t i = 0; i < hoisted.size(); ++i)
    h["rotate_hoisted " + std::to_string(i)] = hash_ct(*ctx, hoisted[i]);
  const Plaintext p0 = enc.encode(fixed_slots(ctx->max_slots(), 0.3), top);
  const Plaintext* pts[] = {&p0};
  const auto ext_pts = ev.extend(pts);
  h["extend"] = hash_poly(*ctx, ext_pts[0].poly);
  const int rots[] = {1};
  auto ext = ev.rotate_hoisted_extended(a, rots, gk);
  const ExtendedCiphertext* cts[] = {&ext[0]};
  const ExtendedPlaintext* eps[] = {&ext_pts[0]};
  ExtendedCiphertext sum = ev.multiply_plain_sum(cts, eps);
  ExtendedCiphertext sum2 = ev.multiply_plain_sum(cts, eps);
  h["mod_down"] = hash_ct(*ctx, ev.mod_down(std::move(sum)));
  h["mod_down_rescale"] = hash_ct(*ctx, ev.mod_down_rescale(std::move(sum2)));
  return h;
}

Hashes run_bootstrap(BackendChoice backend, bool fusion) {
  using test::hash_ct;
  using test::seed_of;
  const ContextPtr ctx = context_on(load_preset("test_boot_n12"), backend, fusion);
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

void expect_same(const Hashes& got, const Hashes& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [op, hash] : want)
    EXPECT_EQ(got.at(op), hash) << what << ": " << op;
}

TEST(CudaFusion, MechanismsMatchCpu) {
  for (const char* preset : {"test_boot_n12", "bootparam_40"}) {
    const ParameterSet p = load_preset(preset);
    const Hashes cpu = run_mechanisms(p, BackendChoice::kCpu, false);
    expect_same(run_mechanisms(p, BackendChoice::kCuda, true), cpu, preset);
    expect_same(run_mechanisms(p, BackendChoice::kCuda, false), cpu, preset);
  }
}

TEST(CudaFusion, BootstrapMatchesCpu) {
  const Hashes cpu = run_bootstrap(BackendChoice::kCpu, false);
  expect_same(run_bootstrap(BackendChoice::kCuda, true), cpu, "fused");
  expect_same(run_bootstrap(BackendChoice::kCuda, false), cpu, "unfused");
}

}  // namespace
}  // namespace theo
