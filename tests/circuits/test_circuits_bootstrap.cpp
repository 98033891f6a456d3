// Bootstrapping at the small insecure preset (N = 2^12, sparse slots): precision and the level
// it lands on.

#include <chrono>
#include <cmath>

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

// BootstrapConfig::compact_keys (what the CPU demo of N = 2^16 runs with min_keys): generate_keys
// returns every key compact, at half the words, and a bootstrapping with compact keys gives the
// words of the same keys expanded.
TEST(Bootstrap, CompactKeysGiveTheWordsOfExpandedKeys) {
  BootstrapConfig cfg;
  cfg.slots = 16;
  cfg.min_keys = true;
  BootEnv e(cfg);
  const auto z = random_slots(cfg.slots);
  const Ciphertext ct = e.encrypt(z, 0);
  const u64 want = hash_ct(*e.ctx, e.boot.bootstrap(ct, e.keys));
  std::size_t expanded_words = e.keys.relin.key().stored_words();
  e.keys.relin.make_compact();
  e.keys.to_sparse.make_compact();
  e.keys.to_dense.make_compact();
  e.keys.galois.make_compact();
  EXPECT_EQ(2 * e.keys.relin.key().stored_words(), expanded_words);
  const Ciphertext out = e.boot.bootstrap(ct, e.keys);
  EXPECT_EQ(hash_ct(*e.ctx, out), want);
  print_bits("bootstrap N=2^12, 16 slots, min keys, compact", bits(e.decrypt(out), z));

  cfg.compact_keys = true;
  const Bootstrapper boot(e.ctx, cfg);
  EXPECT_NE(boot.describe().find("compact"), std::string::npos);
  const BootstrappingKeys keys = boot.generate_keys(e.keygen, e.sk, false);
  EXPECT_TRUE(keys.relin.key().compact() && keys.to_sparse.compact() && keys.to_dense.compact());
  for (const u32 g : keys.galois.galois_elements())
    EXPECT_TRUE(keys.galois.find(g)->compact()) << "Galois element " << g;
  EXPECT_GE(bits(e.decrypt(boot.bootstrap(ct, keys)), z), 12);
}

// BootstrapConfig::message_ratio_bits: random slots stay precise at a ratio of 2^7; a constant
// vector (one large polynomial coefficient) keeps about 2 ratio - 2.7 bits there, and all of its
// precision with the unscaled ratio q0 / Delta_0 = 2^10 of this set, which is also the default
// for its 2^11 slots (7 + 15 - 11 = 11 bits, capped at q0 / Delta_0).
TEST(Bootstrap, MessageRatioTradeOff) {
  Env e(boot_test_params());
  BootstrapConfig small_cfg, wide_cfg;
  small_cfg.message_ratio_bits = 7;
  wide_cfg.message_ratio_bits = 10;
  const Bootstrapper def(e.ctx, small_cfg), wide(e.ctx, wide_cfg), dflt(e.ctx);
  EXPECT_NEAR(def.message_ratio_bits(), 7, 0.1);
  EXPECT_NEAR(wide.message_ratio_bits(), 10, 0.1);
  EXPECT_NEAR(dflt.message_ratio_bits(), 10, 0.1);
  EXPECT_NE(def.describe().find("message ratio"), std::string::npos);
  BootstrapConfig bad;
  bad.message_ratio_bits = 61;
  EXPECT_THROW(Bootstrapper(e.ctx, bad), ParameterError);
  // The keys do not depend on the ratio.
  const BootstrappingKeys keys = def.generate_keys(e.keygen, e.sk, false);
  const u32 slots = e.ctx->max_slots();
  const auto random = random_slots(slots);
  const std::vector<Cplx> constant(slots, std::polar(0.9, 0.7));
  const double rd = bits(e.decrypt(def.bootstrap(e.encrypt(random, 0), keys)), random);
  const double rw = bits(e.decrypt(wide.bootstrap(e.encrypt(random, 0), keys)), random);
  const double cd = bits(e.decrypt(def.bootstrap(e.encrypt(constant, 0), keys)), constant);
  const double cw = bits(e.decrypt(wide.bootstrap(e.encrypt(constant, 0), keys)), constant);
  print_bits("random slots, ratio 2^7", rd);
  print_bits("random slots, ratio 2^10", rw);
  print_bits("constant 0.9 e^0.7i, ratio 2^7", cd);
  print_bits("constant 0.9 e^0.7i, ratio 2^10", cw);
  EXPECT_GE(rd, 12);
  EXPECT_GE(rw, 12);
  // (2 pi 0.9 2^-7)^2 / 6 * 0.9 = 2^-11.8; 2^-17.8 at 2^10.
  EXPECT_GE(cd, 11);
  EXPECT_LE(cd, 13);
  EXPECT_GE(cw, 16);
}

// Bootstrapper::bootstrap with a center: slots clustered around 0.5 put 0.5 into the constant
// coefficient, which EvalMod approximates like a constant vector (about 2 ratio - 2.7 bits at
// 2^7); taking the center out first leaves only the spread, which bootstraps like random slots.
TEST(Bootstrap, CenterTakesTheCommonPartOut) {
  BootstrapConfig cfg;
  cfg.message_ratio_bits = 7;
  BootEnv e(cfg);
  const u32 slots = e.ctx->max_slots();
  auto z = random_slots(slots);
  for (Cplx& v : z)
    v = Cplx(0.5 + 0.2 * v.real(), 0);
  const Ciphertext ct = e.encrypt(z, 0);
  const double plain = bits(e.decrypt(e.boot.bootstrap(ct, e.keys)), z);
  const Ciphertext out = e.boot.bootstrap(ct, e.keys, 0.5);
  EXPECT_EQ(out.level(), e.boot.output_level());
  const double centred = bits(e.decrypt(out), z);
  print_bits("slots 0.5 +- 0.2, ratio 2^7, uncentred", plain);
  print_bits("slots 0.5 +- 0.2, ratio 2^7, center 0.5", centred);
  EXPECT_GE(centred, 12);
  EXPECT_GE(centred, plain + 3);
  EXPECT_THROW(e.boot.bootstrap(ct, e.keys, std::nan("")), ParameterError);
  EXPECT_THROW(e.boot.bootstrap(ct, e.keys, INFINITY), ParameterError);
  EXPECT_GE(bits(e.decrypt(ct), z), 12);  // the input is untouched
}

// Optimizations::Circuits::slot_to_coeff_first: the input is taken at level stc_levels and lands
// stc_levels higher, the same levels per bootstrapping; full, sparse and min-keys slots keep the
// precision; an input below the input level is refused, one above it is brought down.
TEST(Bootstrap, SlotToCoeffFirst) {
  ContextOptions o = test_options();
  o.optimizations.circuits.slot_to_coeff_first = true;
  const ContextPtr ctx = Context::create(boot_test_params(), o);
  const ContextPtr ref_ctx = make_context(boot_test_params());
  KeyGenerator kg(ctx);
  const SecretKey sk = kg.create_secret_key();
  Encoder enc(ctx);
  Encryptor encryptor(ctx, sk);
  Decryptor dec(ctx, sk);
  for (const auto& [slots, min_keys] : {std::pair{2048u, false}, {64u, false}, {16u, true}}) {
    BootstrapConfig cfg;
    cfg.slots = slots;
    cfg.min_keys = min_keys;
    const Bootstrapper boot(ctx, cfg);
    const Bootstrapper ref(ref_ctx, cfg);
    std::printf("%s", boot.describe().c_str());
    EXPECT_GT(boot.input_level(), 0u);
    EXPECT_EQ(ref.input_level(), 0u);
    EXPECT_EQ(boot.output_level() - boot.input_level(), ref.output_level() - ref.input_level());
    // Planners stop a span at the input level, so the same steps fit between bootstrappings.
    const LevelBudget budget = LevelBudget::of(boot, 1);
    EXPECT_EQ(budget.floor_level(), boot.input_level());
    EXPECT_EQ(budget.max_step_depth(), LevelBudget::of(ref, 1).max_step_depth());
    EXPECT_FALSE(budget.fits(boot.input_level(), 1));
    const BootstrappingKeys keys = boot.generate_keys(kg, sk, false);
    const auto z = random_slots(slots);
    const Ciphertext out =
        boot.bootstrap(encryptor.encrypt(enc.encode(z, boot.input_level())), keys);
    EXPECT_EQ(out.level(), boot.output_level());
    EXPECT_NEAR(static_cast<double>(out.scale() / ctx->default_scale(out.level())), 1.0, 1e-9);
    const double b = bits(enc.decode(dec.decrypt(out)), z);
    print_bits(min_keys ? "SlotToCoeff first, min keys" : "SlotToCoeff first", b);
    EXPECT_GE(b, 12);
    if (slots == 2048) {
      const Ciphertext high = encryptor.encrypt(enc.encode(z, boot.input_level() + 2));
      EXPECT_GE(bits(enc.decode(dec.decrypt(boot.bootstrap(high, keys))), z), 12);
      const Ciphertext low = encryptor.encrypt(enc.encode(z, boot.input_level() - 1));
      EXPECT_THROW(boot.bootstrap(low, keys), LevelError);
      const Bootstrapper::ErrorBreakdown eb =
          boot.diagnose(encryptor.encrypt(enc.encode(z, boot.input_level())), keys, z, dec);
      std::printf(
          "[diagnose] approximation %.2f CoeffToSlot %.2f EvalMod %.2f SlotToCoeff %.2f "
          "total %.2f\n",
          eb.approximation, eb.coeff_to_slot, eb.eval_mod, eb.slot_to_coeff, eb.total);
      EXPECT_LT(eb.total, -12);
      EXPECT_LT(eb.slot_to_coeff, -12);
    }
  }
}

// Optimizations::Circuits::merged_evalmod_tail: the real and imaginary parts end in one product
// (one relinearization, one rescale, one rounding in the output): the same levels, and at least
// the precision of the parts ending apart (same keys, same input).
TEST(Bootstrap, MergedEvalModTail) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  const auto z = random_slots(cfg.slots);
  double b[2];
  u32 out_level[2];
  for (const bool merged : {false, true}) {
    ContextOptions o = test_options();
    o.optimizations.circuits.merged_evalmod_tail = merged;
    SeededBootEnv e(Context::create(boot_test_params(), o), cfg);
    const Ciphertext out = e.boot.bootstrap(e.encrypt(z, 0), e.keys);
    b[merged] = bits(e.decrypt(out), z);
    out_level[merged] = out.level();
    EXPECT_EQ(out.level(), e.boot.output_level());
  }
  print_bits("EvalMod's parts ending apart", b[0]);
  print_bits("EvalMod's parts merged in one product", b[1]);
  EXPECT_EQ(out_level[0], out_level[1]);
  EXPECT_GE(b[1], 12);
  EXPECT_GE(b[1], b[0] - 0.5);
}

}  // namespace
}  // namespace theo::test
