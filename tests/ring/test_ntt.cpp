// Forward/inverse NTT of the CPU backend against the definition in ring/backend.h.

#include <span>

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {
namespace {

class NttTest : public RingTest {};

// NTT -> pointwise mul -> INTT equals the schoolbook negacyclic product.
TEST_F(NttTest, PolynomialProductMatchesSchoolbook) {
  for (u32 log_n : {10u, 11u, 12u}) {
    auto be = make_cpu_backend(mixed_ring(log_n, 3));
    const Basis basis = Basis::range(0, log_n == 12 ? 2 : 3);
    const auto wa = random_words(*be, basis), wb = random_words(*be, basis);
    RnsPoly a = from_words(*be, basis, wa), b = from_words(*be, basis, wb);
    const PolyRef both[] = {a.ref(), b.ref()};
    be->ntt(both);
    be->mul(a.cref(), b.cref(), a.ref());
    const PolyRef just_a[] = {a.ref()};
    be->intt(just_a);
    const auto got = words(*be, a);
    const u32 n = be->n();
    for (u32 l = 0; l < basis.size; ++l) {
      const std::size_t off = static_cast<std::size_t>(l) * n;
      const auto want = negacyclic_mul(&wa[off], &wb[off], n, be->modulus(basis[l]).q);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), got.begin() + static_cast<long>(off)))
          << "log_n " << log_n << " limb " << l;
    }
  }
}

TEST_F(NttTest, InverseUndoesForwardForEveryDegree) {
  for (u32 log_n = 10; log_n <= 17; ++log_n) {
    auto be = make_cpu_backend(mixed_ring(log_n, 3));
    const Basis basis = Basis::range(0, 3);
    const auto w = random_words(*be, basis);
    RnsPoly a = from_words(*be, basis, w);
    const PolyRef p[] = {a.ref()};
    be->ntt(p);
    const auto mid = words(*be, a);
    for (u32 l = 0; l < basis.size; ++l)
      for (u32 c = 0; c < be->n(); ++c)
        ASSERT_LT(mid[static_cast<std::size_t>(l) * be->n() + c], be->modulus(basis[l]).q);
    be->intt(p);
    ASSERT_EQ(words(*be, a), w) << "log_n " << log_n;
  }
}

// A[i] = a(psi^(2 brev(i) + 1)): the order contract, checked by direct evaluation.
TEST_F(NttTest, OutputIsEvaluationInBitReversedOrder) {
  const u32 log_n = 10, n = 1u << log_n;
  auto be = make_cpu_backend(mixed_ring(log_n, 3));
  const Basis basis = Basis::range(0, 3);
  // Single coefficients c X^j, including the ends.
  for (u32 j : {0u, 1u, 2u, 511u, n - 1, uniform(n)}) {
    std::vector<u32> w(static_cast<std::size_t>(basis.size) * n, 0);
    for (u32 l = 0; l < basis.size; ++l)
      w[l * n + j] = 1 + uniform(be->modulus(basis[l]).q - 1);
    const auto got = words(*be, ntt_of(*be, basis, w));
    for (u32 l = 0; l < basis.size; ++l) {
      const u32 q = be->modulus(basis[l]).q, psi = ntt_root(q, n);
      for (u32 i = 0; i < n; ++i) {
        const u64 e = ((2 * u64{bit_reverse(i, log_n)} + 1) * j) % (2 * n);
        ASSERT_EQ(got[l * n + i], mul_mod_ref(w[l * n + j], pow_mod(psi, e, q), q))
            << "j " << j << " i " << i << " limb " << l;
      }
    }
  }
  // A full random polynomial, by Horner's rule at every point.
  const auto w = random_words(*be, basis);
  const auto got = words(*be, ntt_of(*be, basis, w));
  for (u32 l = 0; l < basis.size; ++l) {
    const u32 q = be->modulus(basis[l]).q, psi = ntt_root(q, n);
    for (u32 i = 0; i < n; ++i) {
      const u32 x = pow_mod(psi, 2 * u64{bit_reverse(i, log_n)} + 1, q);
      u32 acc = 0;
      for (u32 c = n; c-- > 0;)
        acc = add_mod(mul_mod_ref(acc, x, q), w[l * n + c], q);
      ASSERT_EQ(got[l * n + i], acc) << "i " << i << " limb " << l;
    }
  }
}

TEST_F(NttTest, FusedConstantsEqualSeparateScalarMultiply) {
  auto be = make_cpu_backend(mixed_ring(11, 4));
  const Basis basis = Basis::range(0, 4);
  std::vector<u32> consts;
  for (u32 l = 0; l < basis.size; ++l)
    consts.push_back(uniform(be->modulus(basis[l]).q));
  consts[1] = 0;  // a zero constant must still give canonical zeros
  RnsPoly a = random_poly(*be, basis), b = random_poly(*be, basis);
  RnsPoly a2 = from_words(*be, basis, words(*be, a)), b2 = from_words(*be, basis, words(*be, b));

  const PolyRef fused[] = {a.ref(), b.ref()};
  be->ntt(fused, consts);
  be->mul_scalar(a2.cref(), consts, a2.ref());
  be->mul_scalar(b2.cref(), consts, b2.ref());
  const PolyRef plain[] = {a2.ref(), b2.ref()};
  be->ntt(plain);
  EXPECT_EQ(words(*be, a), words(*be, a2));
  EXPECT_EQ(words(*be, b), words(*be, b2));

  be->intt(fused, consts);
  be->intt(plain);
  be->mul_scalar(a2.cref(), consts, a2.ref());
  be->mul_scalar(b2.cref(), consts, b2.ref());
  EXPECT_EQ(words(*be, a), words(*be, a2));
  EXPECT_EQ(words(*be, b), words(*be, b2));
}

// One batched call over polys of different bases equals one call per poly, for any thread count.
TEST_F(NttTest, BatchedCallEqualsPerPolyCalls) {
  const RingParams ring = mixed_ring(12, 6);
  auto be = make_cpu_backend(ring, 3);
  auto serial = make_cpu_backend(ring, 1);
  const Basis bases[] = {Basis::range(0, 6), Basis{5, 2}, Basis{4}};
  std::vector<RnsPoly> batch, single;
  for (const Basis& b : bases) {
    batch.push_back(random_poly(*be, b));
    single.push_back(from_words(*serial, b, words(*be, batch.back())));
  }
  std::vector<PolyRef> refs;
  for (auto& p : batch)
    refs.push_back(p.ref());
  for (const bool forward : {true, false}) {
    const auto transform = [forward](Backend& backend, std::span<const PolyRef> polys) {
      forward ? backend.ntt(polys) : backend.intt(polys);
    };
    transform(*be, refs);
    for (auto& p : single) {
      const PolyRef one[] = {p.ref()};
      transform(*serial, one);
    }
    for (std::size_t i = 0; i < batch.size(); ++i)
      EXPECT_EQ(words(*be, batch[i]), words(*serial, single[i]))
          << (forward ? "ntt" : "intt") << " poly " << i;
  }
}

TEST_F(NttTest, EmptyBatchIsANoOp) {
  auto be = make_cpu_backend(mixed_ring(10, 1));
  be->ntt({});
  be->intt({});
}

}  // namespace
}  // namespace theo::test
