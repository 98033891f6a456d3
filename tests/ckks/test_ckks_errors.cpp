// Bad input: every case raises the documented exception type with a message naming the problem,
// and leaves its inputs usable.

#include "ckks_test_util.h"

namespace theo::test {
namespace {

using ::testing::HasSubstr;

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
  const std::string msg =
      expect_throw<ScaleError>([&] { (void)e.evaluator.add(a, b); });
  EXPECT_THAT(msg, HasSubstr("2^41.000000"));
  EXPECT_THAT(msg, HasSubstr("2^" + std::to_string(std::log2(static_cast<double>(a.scale())))
                                        .substr(0, 6)));
  EXPECT_THAT(expect_throw<ScaleError>(
                  [&] { (void)e.evaluator.add_plain(a, e.encoder.encode(x, 3, 0x1p30L)); }),
              HasSubstr("2^30.000000"));
  // The inputs still work.
  EXPECT_LT(max_abs_error(e.decrypt(a), x), 1e-5);
}

TEST_F(Errors, ScaleToleranceIsConfigurable) {
  ContextOptions loose;
  loose.backend = BackendChoice::kCpu;
  loose.allow_insecure = true;
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
  EXPECT_THAT(msg, HasSubstr("rotation by 5"));
  EXPECT_THAT(msg, HasSubstr("galois element " + std::to_string(g5)));
  EXPECT_THAT(msg, HasSubstr("create_galois_keys(sk, {5})"));
  msg = expect_throw<MissingKeyError>([&] { (void)e.evaluator.rotate_hoisted(a, {1, -2}, gk); });
  EXPECT_THAT(msg, HasSubstr("rotation by -2"));
  msg = expect_throw<MissingKeyError>([&] { (void)e.evaluator.conjugate(a, gk); });
  EXPECT_THAT(msg, HasSubstr("conjugation"));
  EXPECT_THAT(msg, HasSubstr("with_conjugation"));
}

TEST_F(Errors, ObjectsOfTwoContextsAreRejected) {
  Env& e = env();
  Env other(generated_params(12, 4), 9);
  const Ciphertext a = e.encrypt(random_slots(8), 2);
  const Ciphertext b = other.encrypt(random_slots(8), 2);
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.add(a, b); }),
              HasSubstr("another Context"));
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.decryptor.decrypt(b); }),
              HasSubstr("another Context"));
  const RelinKey rlk = other.keygen.create_relin_key(other.sk);
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.multiply(a, a, rlk); }),
              HasSubstr("relinearization key belongs to another Context"));
  EXPECT_THAT(
      expect_throw<ContextError>([&] { (void)e.evaluator.multiply_plain(a, other.encoder.encode(random_slots(4), 2)); }),
      HasSubstr("plaintext belongs to another Context"));
}

TEST_F(Errors, EmptyAndMovedFromObjectsAreNamed) {
  Env& e = env();
  Ciphertext a = e.encrypt(random_slots(8), 2);
  const Ciphertext empty;
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.add(a, empty); }),
              HasSubstr("add: b is empty"));
  Ciphertext taken = std::move(a);
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.rescale(a); }),
              HasSubstr("rescale: ciphertext is empty"));
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.rotate(taken, 1, GaloisKeys{}); }),
              HasSubstr("galois keys is empty"));
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.evaluator.relinearize(taken, RelinKey{}); }),
              HasSubstr("relinearization key is empty"));
  SecretKey sk_moved = e.keygen.create_secret_key();
  SecretKey sk2 = std::move(sk_moved);
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.keygen.create_public_key(sk_moved); }),
              HasSubstr("secret key is empty"));
  EXPECT_THAT(expect_throw<ContextError>([&] { (void)e.encoder.decode(Plaintext{}); }),
              HasSubstr("plaintext is empty"));
}

TEST_F(Errors, LevelErrorsNameTheLevel) {
  Env& e = env();
  const Ciphertext a0 = e.encrypt(random_slots(8), 0);
  EXPECT_THAT(expect_throw<LevelError>([&] { (void)e.evaluator.rescale(a0); }),
              HasSubstr("level 0"));
  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  EXPECT_THAT(expect_throw<LevelError>([&] { (void)e.evaluator.multiply_relin_rescale(a0, a0, rlk); }),
              HasSubstr("level 0"));
  const Ciphertext a2 = e.encrypt(random_slots(8), 2);
  EXPECT_THAT(expect_throw<LevelError>([&] { (void)e.evaluator.level_down(a2, 3); }),
              HasSubstr("level 3"));
  EXPECT_THAT(expect_throw<LevelError>([&] { (void)e.encoder.encode(random_slots(4), 99); }),
              HasSubstr("level 99"));
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
  ContextOptions cpu;
  cpu.backend = BackendChoice::kCpu;
  cpu.allow_insecure = true;
  EXPECT_THAT(expect_throw<ParameterError>(
                  [&] { (void)Context::create(load_preset("bootparam_40_64bit"), cpu); }),
              HasSubstr("64-bit"));
  ContextOptions strict;
  strict.backend = BackendChoice::kCpu;
  EXPECT_THROW((void)Context::create(generated_params(12, 4), strict), SecurityError);
}

}  // namespace
}  // namespace theo::test
