// Element-wise ops, tensor and key_mult of the CPU backend against plain modular arithmetic.

#include <functional>

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {
namespace {

class ElementwiseTest : public RingTest {
 protected:
  void SetUp() override {
    RingTest::SetUp();
    be_ = make_cpu_backend(mixed_ring(10, 5));
    for (u32 l = 0; l < basis_.size; ++l) {
      q_.push_back(be_->modulus(basis_[l]).q);
      s_.push_back(uniform(q_.back()));
    }
    s_[0] = q_[0] - 1;
    s_[1] = 0;
  }

  // want(limb, word index, q) per word, compared with the backend's output.
  void expect_words(const RnsPoly& got, const std::function<u32(u32, std::size_t, u32)>& want) {
    const auto w = words(*be_, got);
    const u32 n = be_->n();
    for (u32 l = 0; l < basis_.size; ++l)
      for (u32 c = 0; c < n; ++c) {
        const std::size_t at = static_cast<std::size_t>(l) * n + c;
        ASSERT_EQ(w[at], want(l, at, q_[l])) << "limb " << l << " coeff " << c;
      }
  }

  std::unique_ptr<Backend> be_;
  Basis basis_ = Basis{4, 0, 2, 1};
  std::vector<u32> q_, s_;
};

TEST_F(ElementwiseTest, MatchReferenceArithmetic) {
  const auto wa = random_words(*be_, basis_), wb = random_words(*be_, basis_),
             wc = random_words(*be_, basis_);
  RnsPoly a = from_words(*be_, basis_, wa), b = from_words(*be_, basis_, wb),
          c = from_words(*be_, basis_, wc), out = be_->make_poly(basis_);
  be_->add(a.cref(), b.cref(), out.ref());
  expect_words(out, [&](u32, std::size_t i, u32 q) { return (wa[i] + u64{wb[i]}) % q; });
  be_->sub(a.cref(), b.cref(), out.ref());
  expect_words(out, [&](u32, std::size_t i, u32 q) { return (wa[i] + u64{q} - wb[i]) % q; });
  be_->neg(a.cref(), out.ref());
  expect_words(out, [&](u32, std::size_t i, u32 q) { return (q - wa[i]) % q; });
  be_->mul(a.cref(), b.cref(), out.ref());
  expect_words(out, [&](u32, std::size_t i, u32 q) { return mul_mod_ref(wa[i], wb[i], q); });
  be_->mul_add(a.cref(), b.cref(), c.cref(), out.ref());
  expect_words(out, [&](u32, std::size_t i, u32 q) {
    return (mul_mod_ref(wa[i], wb[i], q) + u64{wc[i]}) % q;
  });
  be_->mul_scalar(a.cref(), s_, out.ref());
  expect_words(out, [&](u32 l, std::size_t i, u32 q) { return mul_mod_ref(wa[i], s_[l], q); });
  be_->add_scalar(a.cref(), s_, out.ref());
  expect_words(out, [&](u32 l, std::size_t i, u32 q) { return (wa[i] + u64{s_[l]}) % q; });
  be_->mul_scalar_add(a.cref(), s_, b.cref(), out.ref());
  expect_words(out, [&](u32 l, std::size_t i, u32 q) {
    return (mul_mod_ref(wa[i], s_[l], q) + u64{wb[i]}) % q;
  });
  be_->sub_mul_scalar(a.cref(), b.cref(), s_, out.ref());
  expect_words(out, [&](u32 l, std::size_t i, u32 q) {
    return mul_mod_ref(static_cast<u32>((wa[i] + u64{q} - wb[i]) % q), s_[l], q);
  });
}

TEST_F(ElementwiseTest, InPlaceEqualsOutOfPlace) {
  const auto wa = random_words(*be_, basis_), wb = random_words(*be_, basis_);
  RnsPoly a = from_words(*be_, basis_, wa), b = from_words(*be_, basis_, wb);
  RnsPoly out = be_->make_poly(basis_);
  be_->mul_add(a.cref(), b.cref(), a.cref(), out.ref());
  be_->mul_add(a.cref(), b.cref(), a.cref(), a.ref());
  EXPECT_EQ(words(*be_, a), words(*be_, out));
  be_->sub_mul_scalar(b.cref(), a.cref(), s_, out.ref());
  be_->sub_mul_scalar(b.cref(), a.cref(), s_, b.ref());
  EXPECT_EQ(words(*be_, b), words(*be_, out));
}

TEST_F(ElementwiseTest, AddSubBatchEqualsPerTriple) {
  const auto wa0 = random_words(*be_, basis_), wb0 = random_words(*be_, basis_),
             wa1 = random_words(*be_, basis_), wb1 = random_words(*be_, basis_);
  RnsPoly a0 = from_words(*be_, basis_, wa0), b0 = from_words(*be_, basis_, wb0),
          a1 = from_words(*be_, basis_, wa1), b1 = from_words(*be_, basis_, wb1),
          o0 = be_->make_poly(basis_), want = be_->make_poly(basis_);
  // Triple 1 is in place (out aliases a), which the batch allows within a triple.
  const std::vector<ConstPolyRef> as = {a0.cref(), a1.cref()}, bs = {b0.cref(), b1.cref()};
  const std::vector<PolyRef> outs = {o0.ref(), a1.ref()};
  be_->add_batch(as, bs, outs);
  be_->add(a0.cref(), b0.cref(), want.ref());
  EXPECT_EQ(words(*be_, o0), words(*be_, want));
  expect_words(a1, [&](u32, std::size_t i, u32 q) { return (wa1[i] + u64{wb1[i]}) % q; });
  be_->sub_batch(as, bs, outs);
  be_->sub(a0.cref(), b0.cref(), want.ref());
  EXPECT_EQ(words(*be_, o0), words(*be_, want));
  expect_words(a1, [&](u32, std::size_t i, u32) { return wa1[i]; });
  // out of one triple must not alias an operand of another; counts must agree.
  const std::vector<PolyRef> crossed = {a1.ref(), o0.ref()};
  EXPECT_THROW(be_->add_batch(as, bs, crossed), ParameterError);
  const std::vector<PolyRef> one = {o0.ref()};
  EXPECT_THROW(be_->sub_batch(as, bs, one), ParameterError);
  be_->add_batch({}, {}, {});
}

TEST_F(ElementwiseTest, TensorIsComposedOfMulAndAdd) {
  RnsPoly a0 = random_poly(*be_, basis_), a1 = random_poly(*be_, basis_),
          b0 = random_poly(*be_, basis_), b1 = random_poly(*be_, basis_);
  RnsPoly d0 = be_->make_poly(basis_), d1 = be_->make_poly(basis_), d2 = be_->make_poly(basis_);
  be_->tensor(a0.cref(), a1.cref(), b0.cref(), b1.cref(), d0.ref(), d1.ref(), d2.ref());
  RnsPoly r = be_->make_poly(basis_), t = be_->make_poly(basis_);
  be_->mul(a0.cref(), b0.cref(), r.ref());
  EXPECT_EQ(words(*be_, d0), words(*be_, r));
  be_->mul(a0.cref(), b1.cref(), r.ref());
  be_->mul(a1.cref(), b0.cref(), t.ref());
  be_->add(r.cref(), t.cref(), r.ref());
  EXPECT_EQ(words(*be_, d1), words(*be_, r));
  be_->mul(a1.cref(), b1.cref(), r.ref());
  EXPECT_EQ(words(*be_, d2), words(*be_, r));
  // Outputs may overwrite the inputs (HMult writes d0, d1 over a ciphertext).
  be_->tensor(a0.cref(), a1.cref(), b0.cref(), b1.cref(), a0.ref(), a1.ref(), r.ref());
  EXPECT_EQ(words(*be_, a0), words(*be_, d0));
  EXPECT_EQ(words(*be_, a1), words(*be_, d1));
  EXPECT_EQ(words(*be_, r), words(*be_, d2));
}

TEST_F(ElementwiseTest, KeyMultIsSumOfProducts) {
  for (u32 dnum : {1u, 2u, 5u, 9u}) {
    std::vector<RnsPoly> d, kb, ka;
    std::vector<ConstPolyRef> dr, kbr, kar;
    for (u32 k = 0; k < dnum; ++k) {
      d.push_back(random_poly(*be_, basis_));
      kb.push_back(random_poly(*be_, basis_));
      ka.push_back(random_poly(*be_, basis_));
    }
    // Worst case for the lazy sum: every operand q - 1 in the first coefficient.
    for (u32 k = 0; k < dnum; ++k)
      for (RnsPoly* p : {&d[k], &kb[k], &ka[k]}) {
        auto w = words(*be_, *p);
        for (u32 l = 0; l < basis_.size; ++l)
          w[l * be_->n()] = q_[l] - 1;
        be_->upload(w.data(), p->ref());
      }
    for (u32 k = 0; k < dnum; ++k) {
      dr.push_back(d[k].cref());
      kbr.push_back(kb[k].cref());
      kar.push_back(ka[k].cref());
    }
    RnsPoly o0 = be_->make_poly(basis_), o1 = be_->make_poly(basis_);
    be_->key_mult(dr, kbr, kar, o0.ref(), o1.ref());
    RnsPoly r0 = be_->make_poly(basis_), r1 = be_->make_poly(basis_);
    be_->fill_zero(r0.ref());
    be_->fill_zero(r1.ref());
    for (u32 k = 0; k < dnum; ++k) {
      be_->mul_add(d[k].cref(), kb[k].cref(), r0.cref(), r0.ref());
      be_->mul_add(d[k].cref(), ka[k].cref(), r1.cref(), r1.ref());
    }
    EXPECT_EQ(words(*be_, o0), words(*be_, r0)) << "dnum " << dnum;
    EXPECT_EQ(words(*be_, o1), words(*be_, r1)) << "dnum " << dnum;
  }
}

TEST_F(ElementwiseTest, MulScalarSumIsSumOfMulScalars) {
  const u32 limbs = basis_.size;
  for (const u32 terms : {1u, 2u, 8u, 9u, 17u}) {
    std::vector<RnsPoly> a;
    std::vector<ConstPolyRef> ar;
    std::vector<u32> s;
    for (u32 k = 0; k < terms; ++k) {
      a.push_back(random_poly(*be_, basis_));
      for (u32 l = 0; l < limbs; ++l)
        s.push_back(uniform(q_[l]));
      // Edge constants on some rows: 0, 1 and q - 1.
      if (k % 3 == 1) {
        s[k * limbs] = 0;
        s[k * limbs + 1] = 1;
        s[k * limbs + 2] = q_[2] - 1;
      }
    }
    for (const RnsPoly& p : a)
      ar.push_back(p.cref());
    RnsPoly out = be_->make_poly(basis_), want = be_->make_poly(basis_),
            term = be_->make_poly(basis_);
    be_->mul_scalar_sum(ar, s, out.ref());
    be_->fill_zero(want.ref());
    for (u32 k = 0; k < terms; ++k) {
      const std::vector<u32> row(s.begin() + k * limbs, s.begin() + (k + 1) * limbs);
      be_->mul_scalar(a[k].cref(), row, term.ref());
      be_->add(want.cref(), term.cref(), want.ref());
    }
    EXPECT_EQ(words(*be_, out), words(*be_, want)) << terms << " terms";
  }
  // The rules: out may not alias a term, s has one row of limb constants per term, constants are
  // canonical, and there is at least one term.
  RnsPoly a = random_poly(*be_, basis_), out = be_->make_poly(basis_);
  const std::vector<ConstPolyRef> one = {a.cref()};
  EXPECT_THROW(be_->mul_scalar_sum(one, s_, a.ref()), ParameterError);
  EXPECT_THROW(be_->mul_scalar_sum(one, std::vector<u32>(limbs + 1, 1), out.ref()), ParameterError);
  std::vector<u32> big = s_;
  big[3] = q_[3];
  EXPECT_THROW(be_->mul_scalar_sum(one, big, out.ref()), ParameterError);
  EXPECT_THROW(be_->mul_scalar_sum({}, {}, out.ref()), ParameterError);
}

TEST_F(ElementwiseTest, ResultsDoNotDependOnThreadCount) {
  auto one = make_cpu_backend(be_->ring(), 1), many = make_cpu_backend(be_->ring(), 4);
  const auto wa = random_words(*be_, basis_), wb = random_words(*be_, basis_);
  RnsPoly a1 = from_words(*one, basis_, wa), b1 = from_words(*one, basis_, wb);
  RnsPoly a4 = from_words(*many, basis_, wa), b4 = from_words(*many, basis_, wb);
  one->mul(a1.cref(), b1.cref(), a1.ref());
  many->mul(a4.cref(), b4.cref(), a4.ref());
  EXPECT_EQ(words(*one, a1), words(*many, a4));
  EXPECT_NE(one->name(), many->name());
}

}  // namespace
}  // namespace theo::test
