// Bootstrapping at the small insecure preset (N = 2^12, sparse slots): precision and the level
// it lands on.

#include <chrono>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

TEST(Bootstrap, SparseSlotsN12) {
  Env e(boot_test_params());
  BootstrapConfig cfg;
  cfg.slots = 64;
  const auto t0 = std::chrono::steady_clock::now();
  const Bootstrapper boot(e.ctx, cfg);
  std::printf("%s", boot.describe().c_str());
  const BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk);
  const auto t1 = std::chrono::steady_clock::now();
  const auto z = random_slots(cfg.slots);
  const Ciphertext ct = e.encrypt(z, 0);
  const Ciphertext out = boot.bootstrap(ct, keys);
  const auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(out.level(), boot.output_level());
  const double b = bits(e.decrypt(out), z);
  std::printf("setup+keys %.2f s, bootstrap %.2f s\n",
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  print_bits("bootstrap N=2^12, 64 slots", b);
  EXPECT_GE(b, 12);
}

}  // namespace
}  // namespace theo::test
