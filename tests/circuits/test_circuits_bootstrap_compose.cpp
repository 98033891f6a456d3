// Composability: bootstrap, multiply down to level 0, bootstrap again, ten rounds in a row at the
// small preset; the precision after every round is printed, the final one checked.

#include <numbers>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

TEST(Bootstrap, TenRoundsWithMultiplications) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  BootEnv e(cfg);
  const u32 n = cfg.slots;
  auto z = random_slots(n);
  // Unit-modulus factors keep |z| <= 1 through every product.
  std::vector<Cplx> w(n);
  for (u32 i = 0; i < n; ++i)
    w[i] = std::polar(1.0, 2 * std::numbers::pi * i / n);
  Ciphertext ct = e.encrypt(z, 0);
  double b = 0;
  for (int round = 0; round < 10; ++round) {
    ct = e.boot.bootstrap(ct, e.keys);
    while (ct.level() > 0) {
      const Ciphertext cw = e.encrypt(w, ct.level());
      ct = e.evaluator.multiply_relin_rescale(ct, cw, e.keys.relin);
      for (u32 i = 0; i < n; ++i)
        z[i] *= w[i];
    }
    b = bits(e.decrypt(ct), z);
    std::printf("[compose] round %d: %.2f bits at level 0\n", round + 1, b);
    std::fflush(stdout);
  }
  print_bits("after 10 x (bootstrap + HMults to level 0)", b);
  EXPECT_GE(b, 12);
}

}  // namespace
}  // namespace theo::test
