// Compact switching keys (SwitchingKey::make_compact, KeyGenerator::set_compact_keys: the a halves
// kept as their seed, expanded by each KeyMult): every key-switching path gives the words of the
// expanded key (every dataflow and chunk count at every level, relinearization, rotations, hoisted
// rotations); the key holds half the words; a() refuses; serialization writes the seed and loads an
// equal key; a key without a seed refuses to become compact.

#include <random>
#include <sstream>

#include "ckks/ckks_test_util.h"
#include "theo/io/serialization.h"
#include "theo/plan/dataflow.h"

namespace theo::test {
namespace {

Prng::Seed fresh_seed() {
  Prng::Seed s{};
  std::random_device rd;
  for (std::uint8_t& b : s)
    b = static_cast<std::uint8_t>(rd());
  return s;
}

ContextPtr context() {
  ContextOptions o = test_options();
  o.threads = 2;
  o.key_switching.prepare_all = true;
  o.key_switching.tuning.use_table = false;
  return Context::create(generated_params(11, 4), o);
}

// Random canonical words over a level's Q_l.
RnsPoly random_poly(const Context& ctx, u32 level, std::mt19937_64& rng) {
  const LevelData& lv = ctx.level(level);
  std::vector<u32> w(std::size_t{lv.limbs} * ctx.n());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<u32>(rng() % ctx.prime(lv.q_basis[static_cast<u32>(i / ctx.n())]));
  RnsPoly p = ctx.backend().make_poly(lv.q_basis);
  ctx.backend().upload(w.data(), p.ref());
  return p;
}

u64 switched(const Context& ctx, const KeySwitcher& ks, const SwitchingKey& key, u32 level,
             const RnsPoly& in, const DataflowChoice& dataflow) {
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
  RnsPoly o0 = be.make_poly(lv.q_basis), o1 = be.make_poly(lv.q_basis);
  const ConstPolyRef ins[] = {in.cref()};
  const SwitchingKey* keys[] = {&key};
  const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};
  ks.run({.level = level,
          .inputs = ins,
          .keys = keys,
          .out0 = out0,
          .out1 = out1,
          .dataflow = dataflow});
  return hash_poly(ctx, o0, hash_poly(ctx, o1));
}

// Two key sets from one seed: the same words, one of them compact.
struct TwoKeySets {
  explicit TwoKeySets(const ContextPtr& c) : ctx(c), seed(fresh_seed()), ev(ctx) {
    KeyGenerator kg_a(ctx, seed), kg_b(ctx, seed);
    sk = kg_a.create_secret_key();
    const SecretKey sk_b = kg_b.create_secret_key();
    rlk = kg_a.create_relin_key(sk);
    rlk_compact = kg_b.create_relin_key(sk_b);
    rlk_compact.make_compact();
    gk = kg_a.create_galois_keys(sk, rotations, true);
    // Made compact by the generator (never expanded) rather than compacted afterwards.
    kg_b.set_compact_keys(true);
    gk_compact = kg_b.create_galois_keys(sk_b, rotations, true);
  }
  ContextPtr ctx;
  Prng::Seed seed;
  Evaluator ev;
  SecretKey sk;
  RelinKey rlk, rlk_compact;
  std::vector<int> rotations{1, 3, -2};
  GaloisKeys gk, gk_compact;
};

TEST(CompactKeys, EveryDataflowAtEveryLevelGivesTheWordsOfTheExpandedKey) {
  const TwoKeySets k(context());
  const KeySwitcher& ks = k.ev.key_switcher();
  std::mt19937_64 rng(std::random_device{}());
  ASSERT_TRUE(k.rlk_compact.key().compact());
  ASSERT_FALSE(k.rlk.key().compact());
  for (u32 level = 0; level <= k.ctx->max_level(); ++level) {
    const RnsPoly in = random_poly(*k.ctx, level, rng);
    for (const DataflowChoice& c : dataflow_candidates()) {
      EXPECT_EQ(switched(*k.ctx, ks, k.rlk_compact.key(), level, in, c),
                switched(*k.ctx, ks, k.rlk.key(), level, in, c))
          << "level " << level << " " << choice_name(c);
    }
  }
}

TEST(CompactKeys, EvaluatorOpsGiveTheWordsOfTheExpandedKeys) {
  const TwoKeySets k(context());
  Encoder enc(k.ctx);
  Encryptor encryptor(k.ctx, k.sk, fresh_seed());
  const u32 top = k.ctx->default_encryption_level();
  const Ciphertext a = encryptor.encrypt(enc.encode(random_slots(k.ctx->max_slots()), top));
  const Ciphertext b = encryptor.encrypt(enc.encode(random_slots(k.ctx->max_slots()), top));
  const Evaluator& ev = k.ev;
  EXPECT_EQ(hash_ct(*k.ctx, ev.multiply(a, b, k.rlk_compact)),
            hash_ct(*k.ctx, ev.multiply(a, b, k.rlk)));
  EXPECT_EQ(hash_ct(*k.ctx, ev.multiply_relin_rescale(a, b, k.rlk_compact)),
            hash_ct(*k.ctx, ev.multiply_relin_rescale(a, b, k.rlk)));
  EXPECT_EQ(hash_ct(*k.ctx, ev.rotate(a, 3, k.gk_compact)), hash_ct(*k.ctx, ev.rotate(a, 3, k.gk)));
  EXPECT_EQ(hash_ct(*k.ctx, ev.conjugate(a, k.gk_compact)), hash_ct(*k.ctx, ev.conjugate(a, k.gk)));
  // Hoisted: one ModUp, several keys in one KeyMult pass.
  const std::vector<Ciphertext> want = ev.rotate_hoisted(a, k.rotations, k.gk);
  const std::vector<Ciphertext> got = ev.rotate_hoisted(a, k.rotations, k.gk_compact);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(hash_ct(*k.ctx, got[i]), hash_ct(*k.ctx, want[i])) << "rotation " << k.rotations[i];
}

TEST(CompactKeys, HoldHalfTheWordsAndRefuseA) {
  const TwoKeySets k(context());
  const SwitchingKey& full = k.rlk.key();
  const SwitchingKey& compact = k.rlk_compact.key();
  EXPECT_EQ(2 * compact.stored_words(), full.stored_words());
  EXPECT_THROW((void)compact.a(0), ContextError);
  EXPECT_NO_THROW((void)compact.b(0));
  for (const u32 g : k.gk_compact.galois_elements())
    EXPECT_TRUE(k.gk_compact.find(g)->compact());
}

TEST(CompactKeys, SerializeAsTheirSeedAndLoadEqual) {
  const TwoKeySets k(context());
  // Asked for the expanded form, a compact key still writes its seed (it has no words of a).
  SaveOptions expanded;
  expanded.compact = false;
  std::stringstream s_compact, s_full;
  save(*k.ctx, k.rlk_compact, s_compact, expanded);
  save(*k.ctx, k.rlk, s_full, expanded);
  EXPECT_LT(s_compact.str().size() * 3, s_full.str().size() * 2);
  const RelinKey loaded = load_relin_key(k.ctx, s_compact);
  for (u32 d = 0; d < loaded.key().dnum(); ++d) {
    EXPECT_EQ(hash_poly(*k.ctx, loaded.key().a(d)), hash_poly(*k.ctx, k.rlk.key().a(d)));
    EXPECT_EQ(hash_poly(*k.ctx, loaded.key().b(d)), hash_poly(*k.ctx, k.rlk.key().b(d)));
  }
  // A key loaded from the expanded form has no seed: it cannot become compact, and stays usable.
  RelinKey from_words = load_relin_key(k.ctx, s_full);
  EXPECT_THROW(from_words.make_compact(), ParameterError);
  EXPECT_FALSE(from_words.key().compact());
  EXPECT_NO_THROW((void)from_words.key().a(0));
}

}  // namespace
}  // namespace theo::test
