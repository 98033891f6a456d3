// Mismatched shapes and bad arguments throw ParameterError naming the op.

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {
namespace {

class RingErrorTest : public RingTest {
 protected:
  void SetUp() override {
    RingTest::SetUp();
    be_ = make_cpu_backend(mixed_ring(10, 6));
    small_ = make_cpu_backend(mixed_ring(11, 6));
  }
  // Throws ParameterError whose message starts with the op name.
  template <typename F>
  void expect_error(const std::string& op, F&& f) {
    try {
      f();
      ADD_FAILURE() << op << ": no ParameterError";
    } catch (const ParameterError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(op + ":", 0), 0u) << e.what();
    }
  }
  std::unique_ptr<Backend> be_, small_;
};

TEST_F(RingErrorTest, MismatchedShapes) {
  RnsPoly a = be_->make_poly(Basis{0, 1, 2}), b = be_->make_poly(Basis{0, 1}),
          c = be_->make_poly(Basis{0, 1, 3}), o = be_->make_poly(Basis{0, 1, 2});
  RnsPoly other_n = small_->make_poly(Basis{0, 1, 2});
  be_->fill_zero(a.ref());
  be_->fill_zero(b.ref());
  expect_error("add", [&] { be_->add(a.cref(), b.cref(), o.ref()); });
  expect_error("sub", [&] { be_->sub(a.cref(), c.cref(), o.ref()); });
  expect_error("mul", [&] { be_->mul(a.cref(), a.cref(), b.ref()); });
  expect_error("neg", [&] { be_->neg(other_n.cref(), o.ref()); });
  expect_error("mul_add", [&] { be_->mul_add(a.cref(), a.cref(), c.cref(), o.ref()); });
  expect_error("copy", [&] { be_->copy(a.cref(), b.ref()); });
  expect_error("upload", [&] { be_->upload(a.data(), other_n.ref()); });
  expect_error("tensor", [&] {
    be_->tensor(a.cref(), a.cref(), a.cref(), b.cref(), o.ref(), o.ref(), o.ref());
  });
  expect_error("tensor", [&] {
    be_->tensor(a.cref(), a.cref(), a.cref(), a.cref(), o.ref(), o.ref(), a.ref());
  });
  const std::vector<u32> three(3, 1), two(2, 1);
  expect_error("mul_scalar", [&] { be_->mul_scalar(a.cref(), two, o.ref()); });
  expect_error("add_scalar", [&] { be_->add_scalar(a.cref(), two, o.ref()); });
  expect_error("mul_scalar_add", [&] { be_->mul_scalar_add(a.cref(), three, b.cref(), o.ref()); });
  expect_error("sub_mul_scalar", [&] { be_->sub_mul_scalar(a.cref(), a.cref(), two, o.ref()); });
  const std::vector<u32> not_canonical = {1, be_->modulus(1).q, 1};
  expect_error("mul_scalar", [&] { be_->mul_scalar(a.cref(), not_canonical, o.ref()); });
  expect_error("mul_monomial", [&] { be_->mul_monomial(a.cref(), 3, b.ref()); });
}

TEST_F(RingErrorTest, NttArguments) {
  RnsPoly a = be_->make_poly(Basis{0, 1, 2}), b = be_->make_poly(Basis{0, 1});
  RnsPoly other_n = small_->make_poly(Basis{0});
  be_->fill_zero(a.ref());
  be_->fill_zero(b.ref());
  const PolyRef mixed[] = {a.ref(), b.ref()};
  const std::vector<u32> consts(3, 1);
  expect_error("ntt", [&] { be_->ntt(mixed, consts); });  // consts need one shared basis
  const PolyRef one[] = {a.ref()};
  expect_error("intt", [&] { be_->intt(one, std::span(consts).first(2)); });
  const PolyRef wrong_n[] = {other_n.ref()};
  expect_error("ntt", [&] { be_->ntt(wrong_n); });
  PolyRef bad_id = a.ref();
  bad_id.basis = Basis{0, 1, 200};
  const PolyRef bad[] = {bad_id};
  expect_error("ntt", [&] { be_->ntt(bad); });
}

TEST_F(RingErrorTest, BConvArguments) {
  const auto plan = be_->make_bconv(Basis{0, 1}, Basis{2, 3, 4});
  RnsPoly in = be_->make_poly(Basis{0, 1}), out = be_->make_poly(Basis{2, 3, 4});
  RnsPoly wrong = be_->make_poly(Basis{0, 2});
  be_->fill_zero(in.ref());
  expect_error("bconv", [&] { be_->bconv(*plan, wrong.cref(), out.ref()); });
  expect_error("bconv_matmul", [&] { be_->bconv_matmul(*plan, in.cref(), wrong.ref()); });
  const BConvPlan foreign(make_bconv_table(be_->ring(), Basis{0, 1}, Basis{2, 3, 4}));
  expect_error("bconv", [&] { be_->bconv(foreign, in.cref(), out.ref()); });
  expect_error("make_bconv_table", [&] { be_->make_bconv(Basis{0, 0}, Basis{1}); });
  expect_error("make_bconv_table", [&] { be_->make_bconv(Basis{}, Basis{1}); });
  expect_error("make_bconv_table", [&] { be_->make_bconv(Basis{0}, Basis{99}); });
}

TEST_F(RingErrorTest, AutomorphismAndKeyMultArguments) {
  RnsPoly a = be_->make_poly(Basis{0, 1}), b = be_->make_poly(Basis{0, 1}),
          c = be_->make_poly(Basis{0});
  be_->fill_zero(a.ref());
  be_->fill_zero(b.ref());
  expect_error("automorphism", [&] { be_->automorphism(a.cref(), 4, b.ref()); });
  expect_error("automorphism", [&] { be_->automorphism(a.cref(), 5, a.ref()); });
  expect_error("automorphism", [&] { be_->automorphism(a.cref(), 5, c.ref()); });
  const ConstPolyRef ins[] = {a.cref(), b.cref()};
  const u32 ks1[] = {5};
  const u32 ks2[] = {5, 25};
  expect_error("automorphism_sum", [&] { be_->automorphism_sum(ins, ks1, c.ref(), false); });
  expect_error("automorphism_sum", [&] { be_->automorphism_sum(ins, ks2, a.ref(), false); });
  RnsPoly o0 = be_->make_poly(Basis{0, 1}), o1 = be_->make_poly(Basis{0, 1});
  const ConstPolyRef one[] = {a.cref()};
  expect_error("key_mult", [&] { be_->key_mult(ins, one, ins, o0.ref(), o1.ref()); });
  expect_error("key_mult", [&] { be_->key_mult(one, one, one, a.ref(), o1.ref()); });
  expect_error("key_mult", [&] { be_->key_mult(one, one, one, o0.ref(), o0.ref()); });
  const ConstPolyRef short_one[] = {c.cref()};
  expect_error("key_mult", [&] { be_->key_mult(short_one, one, one, o0.ref(), o1.ref()); });
}

}  // namespace
}  // namespace theo::test
