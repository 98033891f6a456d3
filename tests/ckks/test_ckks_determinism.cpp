// Determinism: with fixed seeds keygen, encryption and every evaluator op produce identical words
// (compared by hash) in two independent Contexts; without seeds every run differs.

#include <map>
#include <string>

#include "ckks_test_util.h"
#include "theo/ring/automorphism.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

// Fixed message (no randomness besides the library's own PRNG).
std::vector<Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.9, phase + 0.37 * static_cast<double>(i));
  return v;
}

Hashes run_pipeline(std::optional<std::uint8_t> seed_tag) {
  const auto ctx = make_context(generated_params(12, 4));
  const ContextPtr& c = ctx;
  KeyGenerator kg = seed_tag ? KeyGenerator(c, seed_of(*seed_tag)) : KeyGenerator(c);
  Hashes h;
  const SecretKey sk = kg.create_secret_key();
  h["sk"] = hash_poly(*ctx, sk.ntt());
  const PublicKey pk = kg.create_public_key(sk);
  h["pk"] = hash_poly(*ctx, pk.b(), hash_poly(*ctx, pk.a()));
  const RelinKey rlk = kg.create_relin_key(sk);
  u64 rh = 0;
  for (u32 k = 0; k < rlk.key().dnum(); ++k) {
    rh = hash_poly(*ctx, rlk.key().b(k), hash_poly(*ctx, rlk.key().a(k), rh));
  }
  h["rlk"] = rh;
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, -2}, true);
  const u32 g1 = galois_element_for_rotation(1, ctx->log_n());
  h["galois"] = hash_poly(*ctx, gk.find(g1)->b(0));

  Encoder enc(ctx);
  Encryptor pk_enc = seed_tag ? Encryptor(ctx, pk, seed_of(*seed_tag + 1)) : Encryptor(ctx, pk);
  Encryptor sk_enc = seed_tag ? Encryptor(ctx, sk, seed_of(*seed_tag + 2)) : Encryptor(ctx, sk);
  const u32 top = ctx->default_encryption_level();
  const Ciphertext a = pk_enc.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.1), top));
  const Ciphertext b = sk_enc.encrypt(enc.encode(fixed_slots(ctx->max_slots(), 0.7), top));
  h["encrypt pk"] = hash_ct(*ctx, a);
  h["encrypt sk"] = hash_ct(*ctx, b);

  Evaluator ev(ctx);
  h["add"] = hash_ct(*ctx, ev.add(a, b));
  h["sub"] = hash_ct(*ctx, ev.sub(a, b));
  h["negate"] = hash_ct(*ctx, ev.negate(a));
  h["add_const"] = hash_ct(*ctx, ev.add_const(a, {0.5, -0.25}));
  h["multiply_const"] = hash_ct(*ctx, ev.multiply_const(a, {0.5, -0.25}));
  h["multiply_plain"] = hash_ct(*ctx, ev.multiply_plain(a, enc.encode(fixed_slots(16, 0.3), top)));
  h["multiply"] = hash_ct(*ctx, ev.multiply(a, b));
  h["multiply relin"] = hash_ct(*ctx, ev.multiply(a, b, rlk));
  h["square"] = hash_ct(*ctx, ev.square(a, rlk));
  h["rescale"] = hash_ct(*ctx, ev.rescale(ev.multiply_const(a, 2.0)));
  h["multiply_relin_rescale"] = hash_ct(*ctx, ev.multiply_relin_rescale(a, b, rlk));
  h["level_down"] = hash_ct(*ctx, ev.level_down(a, 1));
  h["rotate"] = hash_ct(*ctx, ev.rotate(a, 1, gk));
  h["conjugate"] = hash_ct(*ctx, ev.conjugate(a, gk));
  const auto hoisted = ev.rotate_hoisted(a, {1, -2}, gk);
  h["rotate_hoisted"] = hash_ct(*ctx, hoisted[1]);
  h["multiply_monomial"] = hash_ct(*ctx, ev.multiply_monomial(a, 3));
  return h;
}

TEST(Determinism, SameSeedsGiveIdenticalWords) {
  const Hashes first = run_pipeline(std::uint8_t{42});
  const Hashes second = run_pipeline(std::uint8_t{42});
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [op, hash] : first) {
    EXPECT_EQ(hash, second.at(op)) << op;
    std::printf("[determinism] %-24s %016llx\n", op.c_str(), static_cast<unsigned long long>(hash));
  }
  // A different seed gives different keys.
  EXPECT_NE(run_pipeline(std::uint8_t{43}).at("sk"), first.at("sk"));
}

TEST(Determinism, UnseededRunsDiffer) {
  const Hashes first = run_pipeline(std::nullopt);
  const Hashes second = run_pipeline(std::nullopt);
  for (const char* op : {"sk", "pk", "rlk", "encrypt pk", "encrypt sk", "multiply relin"}) {
    EXPECT_NE(first.at(op), second.at(op)) << op;
  }
}

}  // namespace
}  // namespace theo::test
