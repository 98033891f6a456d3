#pragma once
// The fixture of the BConv tests (test_bconv, test_bconv_exact): the CPU backend on a ring of 40
// mixed-size primes, exact integers from GMP, and the check that bconv_matmul on pre-multiplied
// input gives bconv's words.

#include <memory>
#include <vector>

#include "gmp_test_util.h"
#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {

class BConvFixture : public RingTest {
 protected:
  // 40 primes of three sizes; N = 2^10 keeps the GMP reference cheap.
  void SetUp() override {
    RingTest::SetUp();
    be_ = make_cpu_backend(mixed_ring(10, 40));
  }

  // bconv_matmul on x_j * [(Q/s_j)^-1]_{s_j} (what bconv computes first) gives `y`, the words
  // bconv gave for `x` under the same plan.
  void expect_matmul_agrees(const BConvPlan& plan, const std::vector<u32>& x,
                            const std::vector<u32>& y) {
    const Basis& src = plan.src();
    const auto& table = plan.table();
    std::vector<u32> pre = x;
    const u32 n = be_->n();
    for (u32 j = 0; j < src.size; ++j)
      for (u32 c = 0; c < n; ++c)
        pre[j * n + c] = mul_mod_ref(x[j * n + c], table.src_hat_inv[j], be_->modulus(src[j]).q);
    RnsPoly in = from_words(*be_, src, pre);
    RnsPoly out = be_->make_poly(plan.dst());
    be_->bconv_matmul(plan, in.cref(), out.ref());
    EXPECT_EQ(words(*be_, out), y);
  }

  std::unique_ptr<Backend> be_;
};

}  // namespace theo::test
