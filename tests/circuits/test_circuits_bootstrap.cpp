// Bootstrapping at the small insecure preset (N = 2^12, sparse slots): precision and the level
// it lands on.

#include <chrono>

#include "circuits_test_util.h"

namespace theo::test {
namespace {

void run(u32 slots, bool min_keys, const char* name) {
  Env e(boot_test_params());
  BootstrapConfig cfg;
  cfg.slots = slots;
  cfg.min_keys = min_keys;
  const auto t0 = std::chrono::steady_clock::now();
  const Bootstrapper boot(e.ctx, cfg);
  std::printf("%s", boot.describe().c_str());
  const BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk, false);
  const auto t1 = std::chrono::steady_clock::now();
  const auto z = random_slots(slots);
  const Ciphertext out = boot.bootstrap(e.encrypt(z, 0), keys);
  const auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(out.level(), boot.output_level());
  EXPECT_EQ(out.slots(), slots);
  const double b = bits(e.decrypt(out), z);
  std::printf("setup+keys %.2f s, bootstrap %.2f s\n",
              std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  print_bits(name, b);
  EXPECT_GE(b, 12);
}

TEST(Bootstrap, SparseSlotsN12) {
  run(64, false, "bootstrap N=2^12, 64 slots");
}
TEST(Bootstrap, FullSlotsN12) {
  run(2048, false, "bootstrap N=2^12, 2048 slots (full)");
}
TEST(Bootstrap, MinKeysN12) {
  run(16, true, "bootstrap N=2^12, 16 slots, min keys");
}

}  // namespace
}  // namespace theo::test
