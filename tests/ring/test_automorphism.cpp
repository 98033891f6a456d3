// NTT-domain index and twiddle ops of the CPU backend (automorphism, automorphism_sum,
// mul_monomial) against their coefficient-domain definitions.

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {
namespace {

class AutomorphismTest : public RingTest {
 protected:
  // NTT of the coefficient-domain map `limb_map(limb's coefficients, q)` applied to every limb of
  // `coeffs`: the reference for an NTT-domain op.
  template <typename F>
  static RnsPoly ntt_of_mapped(Backend& be, const Basis& basis, const std::vector<u32>& coeffs,
                               F limb_map) {
    const u32 n = be.n();
    std::vector<u32> moved;
    for (u32 l = 0; l < basis.size; ++l) {
      const std::vector<u32> m = limb_map(&coeffs[l * n], be.modulus(basis[l]).q);
      moved.insert(moved.end(), m.begin(), m.end());
    }
    return ntt_of(be, basis, moved);
  }
};

TEST_F(AutomorphismTest, MatchesCoefficientDomainDefinition) {
  for (u32 log_n : {10u, 11u}) {
    auto be = make_cpu_backend(mixed_ring(log_n, 3));
    const u32 n = be->n();
    const Basis basis = Basis::range(0, 3);
    const auto w = random_words(*be, basis);
    RnsPoly a = ntt_of(*be, basis, w);
    const u32 two_n = 2 * n;
    for (u32 k : {1u, 5u, 25u, two_n - 1, galois_element_for_rotation(-3, log_n),
                  (2 * uniform(n)) | 1u, two_n + 5}) {
      RnsPoly want = ntt_of_mapped(
          *be, basis, w, [&](const u32* limb, u32 q) { return coeff_automorphism(limb, n, k, q); });
      RnsPoly got = be->make_poly(basis);
      be->automorphism(a.cref(), k, got.ref());
      ASSERT_EQ(words(*be, got), words(*be, want)) << "log_n " << log_n << " k " << k;
      // The map is the one ring/automorphism.h gives every backend.
      const auto g = words(*be, got), in = words(*be, a);
      for (u32 i = 0; i < n; i += 97)
        ASSERT_EQ(g[i], in[automorphism_src_index(i, k, log_n)]);
    }
  }
}

TEST_F(AutomorphismTest, SumEqualsSumOfAutomorphisms) {
  auto be = make_cpu_backend(mixed_ring(11, 4));
  const Basis basis = Basis{3, 1, 0};
  std::vector<RnsPoly> ins;
  std::vector<ConstPolyRef> refs;
  std::vector<u32> ks;
  for (u32 j = 0; j < 8; ++j) {
    ins.push_back(random_poly(*be, basis));
    ks.push_back(galois_element_for_rotation(static_cast<i64>(j) * 3 - 7, 11));
  }
  ks[5] = galois_element_for_conjugation(11);
  ks[6] = 1;
  for (auto& p : ins)
    refs.push_back(p.cref());
  RnsPoly want = be->make_poly(basis), tmp = be->make_poly(basis);
  be->fill_zero(want.ref());
  for (u32 j = 0; j < 8; ++j) {
    be->automorphism(refs[j], ks[j], tmp.ref());
    be->add(want.cref(), tmp.cref(), want.ref());
  }
  RnsPoly got = be->make_poly(basis);
  be->upload(words(*be, tmp).data(), got.ref());  // garbage that accumulate=false must ignore
  be->automorphism_sum(refs, ks, got.ref(), false);
  EXPECT_EQ(words(*be, got), words(*be, want));
  be->automorphism_sum(std::span(refs).first(3), std::span(ks).first(3), got.ref(), true);
  for (u32 j = 0; j < 3; ++j) {
    be->automorphism(refs[j], ks[j], tmp.ref());
    be->add(want.cref(), tmp.cref(), want.ref());
  }
  EXPECT_EQ(words(*be, got), words(*be, want));
  // No inputs: zero, or `out` unchanged when accumulating.
  be->automorphism_sum({}, {}, got.ref(), true);
  EXPECT_EQ(words(*be, got), words(*be, want));
  be->automorphism_sum({}, {}, got.ref(), false);
  EXPECT_EQ(words(*be, got), std::vector<u32>(got.words(), 0));
}

TEST_F(AutomorphismTest, MonomialMatchesCoefficientDomain) {
  const u32 log_n = 10;
  auto be = make_cpu_backend(mixed_ring(log_n, 3));
  const u32 n = be->n();
  const Basis basis = Basis{2, 0};
  const auto w = random_words(*be, basis);
  RnsPoly a = ntt_of(*be, basis, w);
  const i64 nn = n;
  for (i64 k :
       {i64{0}, i64{1}, nn - 1, nn, nn + 3, 2 * nn - 1, 2 * nn, i64{-1}, -nn - 5,
        i64{1000000000007}, -i64{1000000000007}, static_cast<i64>(uniform(4 * n)) - 2 * nn}) {
    RnsPoly want = ntt_of_mapped(
        *be, basis, w, [&](const u32* limb, u32 q) { return coeff_monomial(limb, n, k, q); });
    RnsPoly got = be->make_poly(basis);
    be->mul_monomial(a.cref(), k, got.ref());
    ASSERT_EQ(words(*be, got), words(*be, want)) << "k " << k;
  }
  // In place.
  RnsPoly want = be->make_poly(basis);
  be->mul_monomial(a.cref(), 77, want.ref());
  be->mul_monomial(a.cref(), 77, a.ref());
  EXPECT_EQ(words(*be, a), words(*be, want));
}

TEST_F(AutomorphismTest, GaloisElementInverseUndoesTheAutomorphism) {
  auto be = make_cpu_backend(mixed_ring(10, 3));
  const Basis basis = Basis::range(0, 3);
  const RnsPoly a = from_words(*be, basis, random_words(*be, basis));
  for (const i64 r : {1, -7, 300}) {
    const u32 g = galois_element_for_rotation(r, 10);
    const u32 inv = galois_element_inverse(g, 10);
    EXPECT_EQ((static_cast<u64>(g) * inv) % (2u << 10), 1u) << "rotation " << r;
    RnsPoly moved = be->make_poly(basis), back = be->make_poly(basis);
    be->automorphism(a.cref(), g, moved.ref());
    be->automorphism(moved.cref(), inv, back.ref());
    EXPECT_EQ(words(*be, back), words(*be, a)) << "rotation " << r;
  }
}

TEST_F(AutomorphismTest, KeyMultAutomorphedEqualsKeyMultOfAutomorphedDigits) {
  auto be = make_cpu_backend(mixed_ring(10, 5));
  const Basis basis = Basis::range(0, 5);
  const u32 g = galois_element_for_rotation(7, 10);
  std::vector<RnsPoly> d, kb, ka, moved;
  std::vector<ConstPolyRef> dr, br, ar, mr;
  for (int k = 0; k < 3; ++k) {
    d.push_back(from_words(*be, basis, random_words(*be, basis)));
    kb.push_back(from_words(*be, basis, random_words(*be, basis)));
    ka.push_back(from_words(*be, basis, random_words(*be, basis)));
    moved.push_back(be->make_poly(basis));
    be->automorphism(d.back().cref(), g, moved.back().ref());
  }
  for (int k = 0; k < 3; ++k) {
    dr.push_back(d[k].cref());
    br.push_back(kb[k].cref());
    ar.push_back(ka[k].cref());
    mr.push_back(moved[k].cref());
  }
  RnsPoly want0 = be->make_poly(basis), want1 = be->make_poly(basis);
  RnsPoly got0 = be->make_poly(basis), got1 = be->make_poly(basis);
  be->key_mult(mr, br, ar, want0.ref(), want1.ref());
  be->key_mult_automorphed(dr, g, br, ar, got0.ref(), got1.ref());
  EXPECT_EQ(words(*be, got0), words(*be, want0));
  EXPECT_EQ(words(*be, got1), words(*be, want1));
  EXPECT_THROW(be->key_mult_automorphed(dr, 4, br, ar, got0.ref(), got1.ref()), ParameterError);

  // add0: phi_g(add0) joins out0 in the same pass.
  const RnsPoly c0 = from_words(*be, basis, random_words(*be, basis));
  RnsPoly moved_c0 = be->make_poly(basis);
  be->automorphism(c0.cref(), g, moved_c0.ref());
  be->add(want0.cref(), moved_c0.cref(), want0.ref());
  be->key_mult_automorphed(dr, g, br, ar, got0.ref(), got1.ref(), c0.cref());
  EXPECT_EQ(words(*be, got0), words(*be, want0));
  EXPECT_EQ(words(*be, got1), words(*be, want1));
  EXPECT_THROW(be->key_mult_automorphed(dr, g, br, ar, got0.ref(), got1.ref(), got0.cref()),
               ParameterError);
  EXPECT_THROW(
      be->key_mult_automorphed(dr, g, br, ar, got0.ref(), got1.ref(), c0.cref().slice(0, 4)),
      ParameterError);
}

}  // namespace
}  // namespace theo::test
