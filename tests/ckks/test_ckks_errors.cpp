// Bad input: every case raises the documented exception type with a message naming the problem,
// and leaves its inputs usable.

#include "ckks_test_util.h"
#include "theo/ring/automorphism.h"

namespace theo::test {
namespace {

// gmock is not linked: a plain substring check that prints the whole message on failure.
#define EXPECT_MESSAGE_HAS(msg, part) \
  EXPECT_NE(std::string(msg).find(part), std::string::npos) << "message: " << (msg)

template <typename Exception, typename F>
std::string expect_throw(F&& f) {
  try {
    f();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

class Errors : public ::testing::Test {
 protected:
  static Env& env() {
    static Env e(generated_params(12, 4));
    return e;
  }
};

TEST_F(Errors, ScaleMismatchNamesBothScales) {
  Env& e = env();
  const auto x = random_slots(8);
  const Ciphertext a = e.encrypt(x, 3);
  const Ciphertext b = e.encryptor.encrypt(e.encoder.encode(x, 3, std::ldexp(1.0L, 41)));
  const std::string msg = expect_throw<ScaleError>([&] { (void)e.evaluator.add(a, b); });
  EXPECT_MESSAGE_HAS(msg, "2^41.000000");
  char own[32];
  std::snprintf(own, sizeof own, "2^%.6f", static_cast<double>(std::log2(a.scale())));
  EXPECT_MESSAGE_HAS(msg, own);
  EXPECT_MESSAGE_HAS(expect_throw<ScaleError>(
                         [&] { (void)e.evaluator.add_plain(a, e.encoder.encode(x, 3, 0x1p30L)); }),
                     "2^30.000000");
  // The inputs still work.
  EXPECT_LT(max_abs_error(e.decrypt(a), x), 1e-5);
}

TEST_F(Errors, ScaleToleranceIsConfigurable) {
  ContextOptions loose = test_options();
  loose.scale_tolerance = 0.5;
  const auto ctx = Context::create(generated_params(12, 4), loose);
  KeyGenerator kg(ctx, seed_of(3));
  const SecretKey sk = kg.create_secret_key();
  Encryptor enc(ctx, sk);
  Encoder ecd(ctx);
  Evaluator ev(ctx);
  const auto x = random_slots(4);
  const Ciphertext a = enc.encrypt(ecd.encode(x, 2));
  const Ciphertext b = enc.encrypt(ecd.encode(x, 2, ctx->default_scale(2) * 1.25L));
  EXPECT_NO_THROW((void)ev.add(a, b));
}

TEST_F(Errors, MissingRotationKeyNamesIndexElementAndFix) {
  Env& e = env();
  const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, {1});
  const Ciphertext a = e.encrypt(random_slots(8), 2);
  const u32 g5 = galois_element_for_rotation(5, e.ctx->log_n());
  std::string msg = expect_throw<MissingKeyError>([&] { (void)e.evaluator.rotate(a, 5, gk); });
  EXPECT_MESSAGE_HAS(msg, "rotation by 5");
  EXPECT_MESSAGE_HAS(msg, "galois element " + std::to_string(g5));
  EXPECT_MESSAGE_HAS(msg, "create_galois_keys(sk, {5})");
  msg = expect_throw<MissingKeyError>([&] { (void)e.evaluator.rotate_hoisted(a, {1, -2}, gk); });
  EXPECT_MESSAGE_HAS(msg, "rotation by -2");
  msg = expect_throw<MissingKeyError>([&] { (void)e.evaluator.conjugate(a, gk); });
  EXPECT_MESSAGE_HAS(msg, "conjugation");
  EXPECT_MESSAGE_HAS(msg, "with_conjugation");
}

TEST_F(Errors, ObjectsOfTwoContextsAreRejected) {
  Env& e = env();
  Env other(generated_params(12, 4), 9);
  const Ciphertext a = e.encrypt(random_slots(8), 2);
  const Ciphertext b = other.encrypt(random_slots(8), 2);
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.evaluator.add(a, b); }),
                     "another Context");
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.decryptor.decrypt(b); }),
                     "another Context");
  const RelinKey rlk = other.keygen.create_relin_key(other.sk);
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.evaluator.multiply(a, a, rlk); }),
                     "relinearization key belongs to another Context");
  EXPECT_MESSAGE_HAS(
      expect_throw<ContextError>(
          [&] { (void)e.evaluator.multiply_plain(a, other.encoder.encode(random_slots(4), 2)); }),
      "plaintext belongs to another Context");
}

TEST_F(Errors, EmptyAndMovedFromObjectsAreNamed) {
  Env& e = env();
  Ciphertext a = e.encrypt(random_slots(8), 2);
  const Ciphertext empty;
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.evaluator.add(a, empty); }),
                     "add: b is empty");
  Ciphertext taken = std::move(a);
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.evaluator.rescale(a); }),
                     "rescale: ciphertext is empty");
  EXPECT_MESSAGE_HAS(
      expect_throw<ContextError>([&] { (void)e.evaluator.rotate(taken, 1, GaloisKeys{}); }),
      "galois keys is empty");
  EXPECT_MESSAGE_HAS(
      expect_throw<ContextError>([&] { (void)e.evaluator.relinearize(taken, RelinKey{}); }),
      "relinearization key is empty");
  SecretKey sk_moved = e.keygen.create_secret_key();
  SecretKey sk2 = std::move(sk_moved);
  EXPECT_MESSAGE_HAS(
      expect_throw<ContextError>([&] { (void)e.keygen.create_public_key(sk_moved); }),
      "secret key is empty");
  EXPECT_MESSAGE_HAS(expect_throw<ContextError>([&] { (void)e.encoder.decode(Plaintext{}); }),
                     "plaintext is empty");
}

TEST_F(Errors, LevelErrorsNameTheLevel) {
  Env& e = env();
  const Ciphertext a0 = e.encrypt(random_slots(8), 0);
  EXPECT_MESSAGE_HAS(expect_throw<LevelError>([&] { (void)e.evaluator.rescale(a0); }), "level 0");
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  EXPECT_MESSAGE_HAS(
      expect_throw<LevelError>([&] { (void)e.evaluator.multiply_relin_rescale(a0, a0, rlk); }),
      "level 0");
  const Ciphertext a2 = e.encrypt(random_slots(8), 2);
  EXPECT_MESSAGE_HAS(expect_throw<LevelError>([&] { (void)e.evaluator.level_down(a2, 3); }),
                     "level 3");
  EXPECT_MESSAGE_HAS(expect_throw<LevelError>([&] { (void)e.encoder.encode(random_slots(4), 99); }),
                     "level 99");
  // Inputs unchanged after the failures.
  EXPECT_LT(max_abs_error(e.decrypt(e.evaluator.rescale(e.evaluator.multiply_const(a2, 1.0))),
                          e.decrypt(a2)),
            1e-5);
}

TEST_F(Errors, InPlaceFailureLeavesInputUnchanged) {
  Env& e = env();
  const auto x = random_slots(8);
  Ciphertext a = e.encrypt(x, 0);
  const u64 before = hash_ct(*e.ctx, a);
  EXPECT_THROW(e.evaluator.rescale_inplace(a), LevelError);
  EXPECT_EQ(hash_ct(*e.ctx, a), before);
  const GaloisKeys none = e.keygen.create_galois_keys(e.sk, {});
  EXPECT_THROW(e.evaluator.rotate_inplace(a, 3, none), MissingKeyError);
  EXPECT_EQ(hash_ct(*e.ctx, a), before);
  EXPECT_EQ(a.level(), 0u);
}

TEST(ContextErrors, SixtyFourBitSetsAndSecurity) {
  const ContextOptions cpu = test_options();
  EXPECT_MESSAGE_HAS(expect_throw<ParameterError>(
                         [&] { (void)Context::create(load_preset("bootparam_40_64bit"), cpu); }),
                     "64-bit");
  ContextOptions strict;
  strict.backend = BackendChoice::kCpu;
  EXPECT_THROW((void)Context::create(generated_params(12, 4), strict), SecurityError);
}

}  // namespace
}  // namespace theo::test
