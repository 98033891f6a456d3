// Ciphertext serialization: round trip of seeded and unseeded ciphertexts; the seeded form of a
// fresh secret-key ciphertext is about half the size.

#include "ckks_test_util.h"

namespace theo::test {
namespace {

TEST(Serialization, SeededCiphertextIsHalfTheSize) {
  Env e(generated_params(12, 4));
  Encryptor sym(e.ctx, e.sk);
  const auto x = random_slots(e.ctx->max_slots());
  const u32 level = 3;
  const Ciphertext seeded = sym.encrypt(e.encoder.encode(x, level));
  ASSERT_TRUE(seeded.is_seeded());
  const Ciphertext full = e.encryptor.encrypt(e.encoder.encode(x, level));
  ASSERT_FALSE(full.is_seeded());

  const auto seeded_bytes = serialize(*e.ctx, seeded);
  const auto full_bytes = serialize(*e.ctx, full);
  const std::size_t poly_bytes = std::size_t{4} * e.ctx->n() * e.ctx->level(level).limbs;
  EXPECT_EQ(full_bytes.size(), 56 + 2 * poly_bytes);
  EXPECT_EQ(seeded_bytes.size(), 56 + 32 + poly_bytes);
  std::printf("[serialization] seeded %zu bytes, unseeded %zu bytes (ratio %.3f)\n",
              seeded_bytes.size(), full_bytes.size(),
              static_cast<double>(seeded_bytes.size()) / static_cast<double>(full_bytes.size()));

  const Ciphertext back = deserialize_ciphertext(e.ctx, seeded_bytes);
  EXPECT_TRUE(back.is_seeded());
  EXPECT_EQ(back.level(), level);
  EXPECT_EQ(back.scale(), seeded.scale());
  EXPECT_EQ(hash_ct(*e.ctx, back), hash_ct(*e.ctx, seeded));
  EXPECT_LT(max_abs_error(e.decrypt(back), x), 1e-6);

  const Ciphertext back_full = deserialize_ciphertext(e.ctx, full_bytes);
  EXPECT_EQ(hash_ct(*e.ctx, back_full), hash_ct(*e.ctx, full));

  // Evaluated ciphertexts lose the seed and serialize in full.
  const Ciphertext sum = e.evaluator.add(seeded, seeded);
  EXPECT_FALSE(sum.is_seeded());
  EXPECT_EQ(serialize(*e.ctx, sum).size(), 56 + 2 * poly_bytes);
}

TEST(Serialization, RejectsForeignOrMalformedData) {
  Env e(generated_params(12, 4));
  const auto bytes = serialize(*e.ctx, e.encrypt(random_slots(4), 2));
  const auto other = make_context(generated_params(13, 4));
  EXPECT_THROW((void)deserialize_ciphertext(other, bytes), ContextError);
  auto truncated = bytes;
  truncated.resize(bytes.size() - 5);
  EXPECT_THROW((void)deserialize_ciphertext(e.ctx, truncated), ParameterError);
  auto bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THROW((void)deserialize_ciphertext(e.ctx, bad_magic), ParameterError);
  auto format1 = bytes;
  format1[7] = '1';
  try {
    (void)deserialize_ciphertext(e.ctx, format1);
    ADD_FAILURE() << "a format-1 ciphertext was accepted";
  } catch (const ParameterError& err) {
    EXPECT_NE(std::string(err.what()).find("format 1"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace theo::test
