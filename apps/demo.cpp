// theo_demo: a guided tour of theodosian's ring layer, the foundation that CKKS is built on.
//
//   1. find NTT-friendly primes q_i < 2^31 (the RNS basis),
//   2. multiply two random polynomials of R_Q = Z_Q[X]/(X^N + 1) with the NTT and check the result
//      against the schoolbook product,
//   3. convert a polynomial to another RNS basis (BConv) and check it against exact CRT,
//   4. time the ring operations at a realistic size.
//
// The backend is the GPU when one is present (and the library was built with CUDA), else the CPU
// reference backend; THEO_BACKEND=cpu|cuda forces one. The full encrypt -> compute -> bootstrap ->
// decrypt walk-through will replace this program once the CKKS layer is complete.

#include <gmp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "theo/backend/factory.h"
#include "theo/math/bigint.h"
#include "theo/math/modarith.h"
#include "theo/math/primes.h"
#include "theo/math/prng.h"
#include "theo/ring/backend.h"

namespace {

using namespace theo;
using Clock = std::chrono::steady_clock;

bool g_ok = true;

void check(bool cond, const char* what) {
  std::printf("   %-58s %s\n", what, cond ? "ok" : "FAILED");
  if (!cond) g_ok = false;
}

// limbs x N random canonical residues over `basis`.
std::vector<u32> random_poly(Prng& prng, const RingParams& ring, const Basis& basis) {
  std::vector<u32> v(static_cast<std::size_t>(basis.size) * ring.n());
  for (u32 l = 0; l < basis.size; ++l) {
    const u32 q = ring.primes[basis[l]];
    for (u32 k = 0; k < ring.n(); ++k)
      v[static_cast<std::size_t>(l) * ring.n() + k] = prng.uniform(q);
  }
  return v;
}

// c = a * b in Z_q[X]/(X^n + 1), the O(n^2) way: X^n wraps around to -1.
std::vector<u32> schoolbook_negacyclic(const u32* a, const u32* b, u32 n, u32 q) {
  std::vector<u32> c(n, 0);
  for (u32 i = 0; i < n; ++i) {
    for (u32 j = 0; j < n; ++j) {
      const u32 p = mul_mod_ref(a[i], b[j], q);
      const u32 k = i + j;
      c[k % n] = k < n ? add_mod(c[k], p, q) : sub_mod(c[k - n], p, q);
    }
  }
  return c;
}

template <typename F>
double median_ms(Backend& be, int reps, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  be.synchronize();
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    be.synchronize();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void ring_multiplication(Backend& be, Prng& prng, u32 limbs) {
  const RingParams& ring = be.ring();
  const u32 n = ring.n();
  std::printf("\n2. Multiplying in R_Q = Z_Q[X]/(X^%u + 1), Q = q_0 * ... * q_%u\n", n, limbs - 1);
  std::printf(
      "   In RNS form each polynomial is %u rows (limbs) of %u residues, one row per prime.\n"
      "   The NTT turns the negacyclic convolution into an element-wise product, so\n"
      "   a * b = INTT(NTT(a) .* NTT(b)) costs O(N log N) instead of O(N^2).\n",
      limbs, n);
  const Basis basis = Basis::range(0, limbs);
  const std::vector<u32> ha = random_poly(prng, ring, basis);
  const std::vector<u32> hb = random_poly(prng, ring, basis);
  RnsPoly a = be.make_poly(basis), b = be.make_poly(basis), c = be.make_poly(basis);
  be.upload(ha.data(), a.ref());
  be.upload(hb.data(), b.ref());
  const PolyRef ab[] = {a.ref(), b.ref()};
  be.ntt(ab);
  be.mul(a.cref(), b.cref(), c.ref());
  const PolyRef cs[] = {c.ref()};
  be.intt(cs);
  std::vector<u32> hc(c.words());
  be.download(c.cref(), hc.data());

  bool same = true;
  for (u32 l = 0; l < limbs; ++l) {
    const std::size_t off = static_cast<std::size_t>(l) * n;
    const auto ref = schoolbook_negacyclic(ha.data() + off, hb.data() + off, n, ring.primes[l]);
    same = same && std::equal(ref.begin(), ref.end(), hc.begin() + static_cast<long>(off));
  }
  check(same, "NTT product equals the schoolbook product on every limb");
}

void basis_conversion(Backend& be, Prng& prng, u32 src_limbs, u32 dst_limbs) {
  const RingParams& ring = be.ring();
  const u32 n = ring.n();
  std::printf("\n3. Fast basis conversion (BConv) from %u primes to %u other primes\n", src_limbs,
              dst_limbs);
  std::printf(
      "   BConv computes x mod d_i from the residues x mod s_j without ever building x.\n"
      "   It is fast because it skips the final reduction mod Q: the result is x + e*Q\n"
      "   for a small integer e (|e| <= %u/2); CKKS absorbs e*Q as part of the noise.\n",
      src_limbs);
  const Basis src = Basis::range(0, src_limbs);
  const Basis dst = Basis::range(src_limbs, dst_limbs);
  const std::vector<u32> hx = random_poly(prng, ring, src);
  RnsPoly x = be.make_poly(src), y = be.make_poly(dst);
  be.upload(hx.data(), x.ref());
  const auto plan = be.make_bconv(src, dst);
  be.bconv(*plan, x.cref(), y.ref());
  std::vector<u32> hy(y.words());
  be.download(y.cref(), hy.data());

  // Exact reference: reconstruct x in [0, Q) with GMP, then the result must be x + e*Q mod d_i.
  std::vector<u32> src_primes, dst_primes;
  for (u32 j = 0; j < src_limbs; ++j)
    src_primes.push_back(ring.primes[src[j]]);
  for (u32 i = 0; i < dst_limbs; ++i)
    dst_primes.push_back(ring.primes[dst[i]]);
  const CrtReconstructor crt_src(src_primes);
  mpz_t xv, cand;
  mpz_init(xv);
  mpz_init(cand);
  std::map<long, u32> e_count;
  bool all_ok = true;
  std::vector<u32> res(src_limbs);
  for (u32 k = 0; k < n; ++k) {
    for (u32 j = 0; j < src_limbs; ++j)
      res[j] = hx[static_cast<std::size_t>(j) * n + k];
    crt_src.reconstruct(res, xv);
    bool found = false;
    const long e_max = static_cast<long>(src_limbs / 2);  // the contract: |e| <= |S|/2
    for (long e = -e_max; e <= e_max && !found; ++e) {
      mpz_set_si(cand, e);
      mpz_mul(cand, cand, crt_src.modulus());
      mpz_add(cand, cand, xv);  // x + e*Q
      bool match = true;
      for (u32 i = 0; i < dst_limbs; ++i) {
        match =
            match && mpz_fdiv_ui(cand, dst_primes[i]) == hy[static_cast<std::size_t>(i) * n + k];
      }
      if (match) {
        ++e_count[e];
        found = true;
      }
    }
    all_ok = all_ok && found;
  }
  mpz_clear(xv);
  mpz_clear(cand);
  check(all_ok, "each coefficient is x + e*Q (exact CRT), |e| <= |S|/2");
  std::printf("   how often each e occurred:");
  for (const auto& [e, cnt] : e_count)
    std::printf("  e=%ld: %u", e, cnt);
  std::printf("\n");
}

void timings(Prng& prng, u32 log_n, u32 limbs) {
  const std::vector<u32> primes = find_ntt_primes(log_n, 30, 2 * limbs);
  const RingParams ring{log_n, primes};
  auto be = make_default_backend(ring);
  std::printf("\n4. Timings at N = 2^%u with %u limbs (%s, median of 9)\n", log_n, limbs,
              be->name().c_str());
  const Basis basis = Basis::range(0, limbs);
  const Basis other = Basis::range(limbs, limbs);
  const std::vector<u32> h = random_poly(prng, ring, basis);
  RnsPoly a = be->make_poly(basis), b = be->make_poly(basis), y = be->make_poly(other);
  be->upload(h.data(), a.ref());
  be->upload(h.data(), b.ref());
  const PolyRef as[] = {a.ref()};
  const auto plan = be->make_bconv(basis, other);
  const double t_ntt = median_ms(*be, 9, [&] { be->ntt(as); });
  const double t_intt = median_ms(*be, 9, [&] { be->intt(as); });
  const double t_mul = median_ms(*be, 9, [&] { be->mul(a.cref(), b.cref(), a.ref()); });
  const double t_bconv = median_ms(*be, 9, [&] { be->bconv(*plan, a.cref(), y.ref()); });
  std::printf("   forward NTT  %9.3f ms\n   inverse NTT  %9.3f ms\n", t_ntt, t_intt);
  std::printf("   element mul  %9.3f ms\n   BConv %u->%u %9.3f ms\n", t_mul, limbs, limbs, t_bconv);
}

}  // namespace

int main() {
  try {
    std::printf(
        "theodosian demo: the RNS polynomial ring under CKKS\n"
        "====================================================\n"
        "CKKS ciphertexts are pairs of polynomials in R_Q = Z_Q[X]/(X^N + 1) with a huge\n"
        "modulus Q (hundreds to thousands of bits). theodosian never computes with Q directly:\n"
        "Q is a product of primes q_i < 2^31 and every polynomial is stored as its residues\n"
        "mod each q_i (the Residue Number System), so all arithmetic is on 32-bit words.\n");

    constexpr u32 kLogN = 10, kLimbs = 4;
    std::printf("\n1. Finding NTT-friendly primes q = 1 (mod 2N) near 2^30 for N = 2^%u\n", kLogN);
    const std::vector<u32> primes = find_ntt_primes(kLogN, 30, 2 * kLimbs);
    for (u32 q : primes)
      std::printf("   q = %u\n", q);
    check(std::all_of(primes.begin(), primes.end(),
                      [](u32 q) { return is_prime(q) && q % (2u << kLogN) == 1; }),
          "all are primes with q = 1 (mod 2N)");

    const RingParams ring{kLogN, primes};
    auto backend = make_default_backend(ring);
    std::printf("\n   backend: %s%s\n", backend->name().c_str(),
                backend->kind() == BackendKind::kCuda ? ""
                : cuda_available()                    ? "  (THEO_BACKEND=cpu chose it)"
                                                      : "  (no usable GPU: the CPU reference)");

    Prng prng;  // seeded from the operating system
    ring_multiplication(*backend, prng, kLimbs);
    basis_conversion(*backend, prng, kLimbs, kLimbs);
    timings(prng, 16, 24);

    std::printf("\n%s\n", g_ok ? "All checks passed." : "SOME CHECKS FAILED.");
    return g_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "theo_demo: error: %s\n", e.what());
    return 1;
  }
}
