// Serialization (theo/io/serialization.h, docs/serialization.md): bit-exact round trips of every
// object type in compact and expanded form, through buffers and streams; compact sizes; Galois key
// subsets; and every validation of point 2 of the issue, each asserting the exception type and the
// words of its message. Field changes are resealed (checksums recomputed) so that the checks
// behind the checksums are what catches them.

#include <sstream>

#include "ckks/ckks_test_util.h"
#include "serialization_test_util.h"
#include "theo/ring/automorphism.h"

namespace theo::test {
namespace {

using serial::reseal;
using serial::sections;
using serial::set_f64;
using serial::set_u32;
using serial::set_u64;

// N = 2^10, 3 levels: every object is small and fast.
ParameterSet small_params() {
  return generated_params(10, 3);
}

// Runs f and checks it throws E with every word of `words` in the message.
template <typename E, typename F>
void expect_error(F&& f, std::initializer_list<const char*> words) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << *words.begin();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const char* w : words)
      EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

struct Fixture {
  Fixture()
      : env(small_params()),
        relin(env.keygen.create_relin_key(env.sk)),
        galois(env.keygen.create_galois_keys(env.sk, {1, 2, -3}, true)) {}
  Env env;
  RelinKey relin;
  GaloisKeys galois;
};

TEST(Serialization, ParametersRoundTrip) {
  for (const std::string name : {"test_n12", "test_boot_n12", "bootparam_40"}) {
    const ParameterSet p = load_preset(name);
    const auto bytes = to_bytes(p);
    const ParameterSet back = load_parameters(std::span<const std::uint8_t>(bytes));
    EXPECT_EQ(back, p) << name;
    EXPECT_EQ(parameter_fingerprint(back), parameter_fingerprint(p));
    ObjectInfo info = inspect(std::span<const std::uint8_t>(bytes));
    EXPECT_EQ(info.type, ObjectType::kParameters);
    EXPECT_EQ(info.fingerprint, parameter_fingerprint(p));
  }
  // The fingerprint ignores the informational fields and sees every other one.
  ParameterSet a = load_preset("test_n12");
  ParameterSet b = a;
  b.name = "renamed";
  b.comment = "another comment";
  EXPECT_EQ(parameter_fingerprint(a), parameter_fingerprint(b));
  b.level_config[1] = {1, 2};
  EXPECT_NE(parameter_fingerprint(a), parameter_fingerprint(b));
  EXPECT_EQ(fingerprint_hex(parameter_fingerprint(a)).size(), 64u);
}

TEST(Serialization, SecretAndPublicKeysRoundTrip) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  const auto sk_bytes = to_bytes(ctx, f.env.sk);
  EXPECT_EQ(sk_bytes.size(), 80 + 32 + 16 + 32 + ctx.n() / 4);
  const SecretKey sk = load_secret_key(f.env.ctx, std::span<const std::uint8_t>(sk_bytes));
  EXPECT_EQ(sk.coefficients(), f.env.sk.coefficients());
  EXPECT_EQ(sk.hamming_weight(), f.env.sk.hamming_weight());
  expect_same_poly(ctx, sk.ntt(), f.env.sk.ntt());

  ASSERT_TRUE(f.env.pk.a_seed().has_value());
  for (const bool compact : {true, false}) {
    SaveOptions o;
    o.compact = compact;
    const auto bytes = to_bytes(ctx, f.env.pk, o);
    EXPECT_EQ(bytes.size(), serialized_size(ctx, f.env.pk, o));
    const PublicKey pk = load_public_key(f.env.ctx, std::span<const std::uint8_t>(bytes));
    expect_same_poly(ctx, pk.b(), f.env.pk.b());
    expect_same_poly(ctx, pk.a(), f.env.pk.a());
    EXPECT_EQ(pk.a_seed().has_value(), compact);
  }
}

TEST(Serialization, SwitchingKeysRoundTripAndCompactSize) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  SaveOptions expanded;
  expanded.compact = false;
  const auto relin_c = to_bytes(ctx, f.relin);
  const auto relin_e = to_bytes(ctx, f.relin, expanded);
  const double ratio = static_cast<double>(relin_c.size()) / static_cast<double>(relin_e.size());
  std::printf("[serialization] relin key N=2^10: compact %zu, expanded %zu bytes (%.3f)\n",
              relin_c.size(), relin_e.size(), ratio);
  EXPECT_LE(ratio, 0.55);
  for (const auto* bytes : {&relin_c, &relin_e}) {
    const RelinKey back = load_relin_key(f.env.ctx, std::span<const std::uint8_t>(*bytes));
    expect_same_key(ctx, back.key(), f.relin.key());
  }

  const auto gal_c = to_bytes(ctx, f.galois);
  const auto gal_e = to_bytes(ctx, f.galois, expanded);
  EXPECT_LE(static_cast<double>(gal_c.size()) / static_cast<double>(gal_e.size()), 0.55);
  for (const auto* bytes : {&gal_c, &gal_e}) {
    std::stringstream ss;
    ss.write(reinterpret_cast<const char*>(bytes->data()),
             static_cast<std::streamsize>(bytes->size()));
    const GaloisKeys back = load_galois_keys(f.env.ctx, ss);
    ASSERT_EQ(back.galois_elements(), f.galois.galois_elements());
    for (const u32 g : f.galois.galois_elements())
      expect_same_key(ctx, *back.find(g), *f.galois.find(g));
  }
}

TEST(Serialization, GaloisKeySubsets) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  const u32 g1 = galois_element_for_rotation(1, ctx.log_n());
  const u32 g2 = galois_element_for_rotation(2, ctx.log_n());
  const u32 conj = galois_element_for_conjugation(ctx.log_n());
  // Save a subset.
  SaveOptions some;
  some.galois_elements = std::vector<u32>{g2, conj};
  const auto subset = to_bytes(ctx, f.galois, some);
  const GaloisKeys two = load_galois_keys(f.env.ctx, std::span<const std::uint8_t>(subset));
  EXPECT_EQ(two.galois_elements(), (std::vector<u32>{g2, conj}));
  expect_same_key(ctx, *two.find(g2), *f.galois.find(g2));
  EXPECT_EQ(inspect(std::span<const std::uint8_t>(subset)).galois_elements,
            (std::vector<u32>{g2, conj}));
  // Load a subset of a full file (from a seekable stream: the others are skipped).
  const auto all = to_bytes(ctx, f.galois);
  LoadOptions only;
  only.galois_elements = std::vector<u32>{g1};
  std::stringstream ss;
  ss.write(reinterpret_cast<const char*>(all.data()), static_cast<std::streamsize>(all.size()));
  const GaloisKeys one = load_galois_keys(f.env.ctx, ss, only);
  EXPECT_EQ(one.galois_elements(), std::vector<u32>{g1});
  expect_same_key(ctx, *one.find(g1), *f.galois.find(g1));
  // The loaded subset rotates bit-exactly like the full set.
  const Ciphertext ct = f.env.encrypt(random_slots(8), 2);
  EXPECT_EQ(hash_ct(ctx, f.env.evaluator.rotate(ct, 1, one)),
            hash_ct(ctx, f.env.evaluator.rotate(ct, 1, f.galois)));
  // Asking for keys that are not there.
  const u32 g5 = galois_element_for_rotation(5, ctx.log_n());
  LoadOptions missing;
  missing.galois_elements = std::vector<u32>{g1, g5};
  expect_error<MissingKeyError>(
      [&] { (void)load_galois_keys(f.env.ctx, std::span<const std::uint8_t>(all), missing); },
      {"no key for Galois element", std::to_string(g5).c_str()});
  SaveOptions absent;
  absent.galois_elements = std::vector<u32>{g5};
  expect_error<MissingKeyError>([&] { (void)to_bytes(ctx, f.galois, absent); },
                                {"no key for Galois element", std::to_string(g5).c_str()});
}

TEST(Serialization, EvaluationKeysRoundTrip) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  const SecretKey other = f.env.keygen.create_secret_key_with_weight(16);
  const SwitchingKey to_sparse = f.env.keygen.create_switching_key(other, f.env.sk.ntt().cref());
  const SwitchingKey to_dense = f.env.keygen.create_switching_key(f.env.sk, other.ntt().cref());
  const EvaluationKeysView view{&f.relin, &f.galois, &to_sparse, &to_dense};
  const auto bytes = to_bytes(ctx, view);
  const ObjectInfo info = inspect(std::span<const std::uint8_t>(bytes));
  EXPECT_TRUE(info.has_relin_key);
  EXPECT_TRUE(info.has_bootstrapping_keys);
  EXPECT_EQ(info.galois_elements, f.galois.galois_elements());
  const EvaluationKeys back = load_evaluation_keys(f.env.ctx, std::span<const std::uint8_t>(bytes));
  expect_same_key(ctx, back.relin.key(), f.relin.key());
  expect_same_key(ctx, back.to_sparse, to_sparse);
  expect_same_key(ctx, back.to_dense, to_dense);
  ASSERT_EQ(back.galois.galois_elements(), f.galois.galois_elements());
  // Parts are optional.
  const EvaluationKeysView relin_only{&f.relin, nullptr, nullptr, nullptr};
  const EvaluationKeys r =
      load_evaluation_keys(f.env.ctx, std::span<const std::uint8_t>(to_bytes(ctx, relin_only)));
  EXPECT_FALSE(r.relin.empty());
  EXPECT_TRUE(r.galois.empty());
  EXPECT_TRUE(r.to_sparse.empty());
  expect_error<ParameterError>([&] { (void)to_bytes(ctx, EvaluationKeysView{}); },
                               {"no keys to save"});
}

TEST(Serialization, PlaintextsAndCiphertextsRoundTrip) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  const auto x = random_slots(ctx.max_slots());
  const Plaintext pt = f.env.encoder.encode(x, 2);
  SaveOptions real;
  real.real_slots = true;
  const auto pt_bytes = to_bytes(ctx, pt, real);
  ObjectInfo info;
  const Plaintext pt2 =
      load_plaintext(f.env.ctx, std::span<const std::uint8_t>(pt_bytes), {}, &info);
  EXPECT_TRUE(info.real_slots);
  EXPECT_EQ(pt2.level(), pt.level());
  EXPECT_EQ(pt2.scale(), pt.scale());
  EXPECT_EQ(pt2.slots(), pt.slots());
  expect_same_poly(ctx, pt2.poly(), pt.poly());

  Encryptor sym(f.env.ctx, f.env.sk);
  const Ciphertext seeded = sym.encrypt(pt);
  ASSERT_TRUE(seeded.is_seeded());
  const Ciphertext public_ct = f.env.encryptor.encrypt(pt);
  const Ciphertext three = f.env.evaluator.multiply(public_ct, public_ct);
  ASSERT_EQ(three.size(), 3u);
  // A scale that is not a double: the long double survives exactly.
  Ciphertext odd = f.env.evaluator.clone(public_ct);
  odd.set_scale(odd.scale() * (1.0L + 0x1p-60L));
  for (const Ciphertext* ct : {&seeded, &public_ct, &three, static_cast<const Ciphertext*>(&odd)}) {
    for (const bool compact : {true, false}) {
      SaveOptions o;
      o.compact = compact;
      const auto bytes = to_bytes(ctx, *ct, o);
      const Ciphertext back = load_ciphertext(f.env.ctx, std::span<const std::uint8_t>(bytes));
      expect_same_ct(ctx, back, *ct);
      EXPECT_EQ(back.is_seeded(), compact && ct->is_seeded());
    }
  }
  const std::size_t poly_bytes = std::size_t{4} * ctx.n() * ctx.level(2).limbs;
  const auto c = to_bytes(ctx, seeded).size();
  const auto e = to_bytes(ctx, public_ct).size();
  std::printf("[serialization] ciphertext level 2: seeded %zu, full %zu bytes (%.3f)\n", c, e,
              static_cast<double>(c) / static_cast<double>(e));
  EXPECT_EQ(e, 80 + 32 + 40 + 2 * (32 + poly_bytes));
  EXPECT_EQ(c, 80 + 32 + 40 + (32 + poly_bytes) + (32 + 40));
  EXPECT_LE(static_cast<double>(c) / static_cast<double>(e), 0.55);
  // The shorthands read and write the same format.
  expect_same_ct(ctx, deserialize_ciphertext(f.env.ctx, serialize(ctx, seeded)), seeded);
}

TEST(Serialization, SeveralObjectsInOneStream) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  const Ciphertext a = f.env.encrypt(random_slots(4), 1);
  const Ciphertext b = f.env.encrypt(random_slots(4), 3);
  std::stringstream ss;
  save(ctx, a, ss);
  save(ctx, f.relin, ss);
  save(ctx, b, ss);
  expect_same_ct(ctx, load_ciphertext(f.env.ctx, ss), a);
  expect_same_key(ctx, load_relin_key(f.env.ctx, ss).key(), f.relin.key());
  expect_same_ct(ctx, load_ciphertext(f.env.ctx, ss), b);
  LoadOptions end;
  end.require_end = true;
  ss.clear();
  ss.seekg(0);
  expect_error<ParameterError>([&] { (void)load_ciphertext(f.env.ctx, ss, end); },
                               {"trailing bytes"});
}

TEST(Serialization, ProgressIsReported) {
  Fixture f;
  const Context& ctx = *f.env.ctx;
  u64 last = 0, total = 0, calls = 0;
  SaveOptions o;
  o.on_progress = [&](u64 done, u64 all) {
    EXPECT_GE(done, last);
    last = done;
    total = all;
    ++calls;
  };
  const auto bytes = to_bytes(ctx, f.galois, o);
  EXPECT_EQ(last, bytes.size());
  EXPECT_EQ(total, bytes.size());
  EXPECT_GT(calls, 5u);
  LoadOptions l;
  last = 0;
  l.on_progress = [&](u64 done, u64) { last = done; };
  (void)load_galois_keys(f.env.ctx, std::span<const std::uint8_t>(bytes), l);
  EXPECT_EQ(last, bytes.size());
}

// ---- validation (point 2) ----------------------------------------------------------------------

struct Blobs {
  Fixture f;
  std::vector<std::uint8_t> ct, relin, galois, sk;
  Blobs() {
    ct = to_bytes(*f.env.ctx, f.env.encrypt(random_slots(8), 2));
    relin = to_bytes(*f.env.ctx, f.relin);
    galois = to_bytes(*f.env.ctx, f.galois);
    sk = to_bytes(*f.env.ctx, f.env.sk);
  }
  Ciphertext load_ct(const std::vector<std::uint8_t>& b, const LoadOptions& o = {}) {
    return load_ciphertext(f.env.ctx, std::span<const std::uint8_t>(b), o);
  }
  // The ciphertext with the u32 at `at` set to `v` (resealed) is refused with every word of
  // `words` in the message.
  void expect_ct_field_refused(std::size_t at, u32 v, std::initializer_list<const char*> words) {
    expect_error<ParameterError>([&] { (void)load_ct(serial::with_u32(ct, at, v)); }, words);
  }
};

// Ciphertext metadata offsets: first section's body.
constexpr std::size_t kMeta = serial::kHeaderBytes + serial::kSectionHeader;

TEST(SerializationValidation, OtherParametersNameBothFingerprints) {
  Blobs b;
  const auto other = make_context(generated_params(10, 4));
  const std::string mine = fingerprint_hex(context_fingerprint(*b.f.env.ctx));
  const std::string theirs = fingerprint_hex(context_fingerprint(*other));
  expect_error<ContextError>(
      [&] { (void)load_ciphertext(other, std::span<const std::uint8_t>(b.ct)); },
      {"fingerprint", mine.c_str(), theirs.c_str()});
  expect_error<ContextError>(
      [&] { (void)load_relin_key(other, std::span<const std::uint8_t>(b.relin)); },
      {"fingerprint", mine.c_str(), theirs.c_str()});
}

TEST(SerializationValidation, DeclaredSizes) {
  Blobs b;
  // Larger than the limit, before anything is allocated.
  LoadOptions small;
  small.max_bytes = 1000;
  expect_error<ParameterError>([&] { (void)b.load_ct(b.ct, small); },
                               {"more than the limit", "1000"});
  // Larger than the data.
  auto big = b.ct;
  set_u64(big, serial::kOffPayload, u64{1} << 30);
  reseal(big);
  expect_error<ParameterError>([&] { (void)b.load_ct(big); }, {"truncated", "only"});
  // A section that declares more than the Context implies.
  auto sec = b.ct;
  const auto s = sections(sec);
  set_u64(sec, s[1].header + 8, s[1].size + 4);
  reseal(sec);
  expect_error<ParameterError>([&] { (void)b.load_ct(sec); }, {"needs exactly"});
  // Truncated and extended data.
  ASSERT_GT(b.ct.size(), 7u);
  const std::vector<std::uint8_t> cut(b.ct.begin(), b.ct.end() - 7);
  expect_error<ParameterError>([&] { (void)b.load_ct(cut); }, {"truncated"});
  auto longer = b.ct;
  longer.push_back(0);
  expect_error<ParameterError>([&] { (void)b.load_ct(longer); }, {"trailing bytes"});
  std::vector<std::uint8_t> tiny(b.ct.begin(), b.ct.begin() + 5);
  expect_error<ParameterError>([&] { (void)b.load_ct(tiny); }, {"truncated", "magic"});
  // Too many Galois keys for the declared payload, refused from the metadata.
  auto many = b.galois;
  set_u32(many, kMeta, 900);
  reseal(many);
  expect_error<ParameterError>(
      [&] { (void)load_galois_keys(b.f.env.ctx, std::span<const std::uint8_t>(many)); },
      {"900 Galois keys need at least"});
  set_u32(many, kMeta, 5000);
  reseal(many);
  expect_error<ParameterError>(
      [&] { (void)load_galois_keys(b.f.env.ctx, std::span<const std::uint8_t>(many)); },
      {"5000 Galois keys", "only N = 1024"});
  // Section count.
  b.expect_ct_field_refused(serial::kOffSections, 9, {"sections"});
}

TEST(SerializationValidation, HeaderFields) {
  Blobs b;
  auto magic = b.ct;
  magic[1] = 'X';
  expect_error<ParameterError>([&] { (void)b.load_ct(magic); }, {"bad magic"});
  std::vector<std::uint8_t> old(b.ct);
  std::memcpy(old.data(), "THEOCTX2", 8);
  expect_error<ParameterError>([&] { (void)b.load_ct(old); }, {"older theodosian", "THEOCTX2"});
  const std::string json = to_json(small_params());
  const std::vector<std::uint8_t> text(json.begin(), json.end());
  expect_error<ParameterError>([&] { (void)b.load_ct(text); }, {"JSON", "parameter file"});
  b.expect_ct_field_refused(serial::kOffVersion, 3, {"container version 3", "newer theodosian"});
  expect_error<ParameterError>(
      [&] { (void)load_public_key(b.f.env.ctx, std::span<const std::uint8_t>(b.ct)); },
      {"holds a ciphertext, not a public key"});
  b.expect_ct_field_refused(serial::kOffType, 77, {"unknown object type 77"});
  b.expect_ct_field_refused(serial::kOffFlags, 6, {"unknown header flags"});
  b.expect_ct_field_refused(serial::kOffFlags, 1, {"compact flag"});
}

TEST(SerializationValidation, ChecksumsDetectCorruption) {
  Blobs b;
  auto header = b.ct;
  header[serial::kOffSections] ^= 1;
  expect_error<ParameterError>([&] { (void)b.load_ct(header); }, {"header checksum"});
  auto body = b.ct;
  body[body.size() - 100] ^= 0x10;
  expect_error<ParameterError>([&] { (void)b.load_ct(body); }, {"checksum mismatch", "corrupted"});
  // Sections do not move between positions or objects: each tag is keyed by the previous one.
  auto other = to_bytes(*b.f.env.ctx, b.f.env.encrypt(random_slots(8), 2));
  const auto s = sections(other);
  std::memcpy(other.data() + s[1].header, b.ct.data() + s[1].header, s[1].size + 32);
  expect_error<ParameterError>([&] { (void)b.load_ct(other); }, {"checksum mismatch"});
}

TEST(SerializationValidation, WordsLevelsSlotsScales) {
  Blobs b;
  const auto s = sections(b.ct);
  b.expect_ct_field_refused(s[1].body + 4 * 5, 0xffffffffu,
                            {"word 5 of limb 0", "4294967295", "not below its prime"});
  b.expect_ct_field_refused(kMeta, 99, {"level 99 does not exist"});
  b.expect_ct_field_refused(kMeta, 1, {"needs exactly"});
  for (const u32 slots : {0u, 3u, 1024u}) {
    b.expect_ct_field_refused(kMeta + 4, slots, {"slot count", std::to_string(slots).c_str()});
  }
  b.expect_ct_field_refused(kMeta + 8, 4, {"size 4"});
  for (const double bad_scale : {std::nan(""), -1.0, static_cast<double>(INFINITY), 0.0}) {
    auto bad = b.ct;
    set_f64(bad, kMeta + 24, bad_scale);
    reseal(bad);
    expect_error<ParameterError>([&] { (void)b.load_ct(bad); }, {"scale", "positive finite"});
  }
  auto split = b.ct;
  set_f64(split, kMeta + 32, 1e30);
  reseal(split);
  expect_error<ParameterError>([&] { (void)b.load_ct(split); }, {"canonical"});
  b.expect_ct_field_refused(kMeta + 20, 1, {"reserved"});
  b.expect_ct_field_refused(kMeta + 16, 8, {"hint"});
  b.expect_ct_field_refused(s[1].header, 4, {"is a seed section, expected a polynomial section"});
}

TEST(SerializationValidation, KeysSeedsAndCounts) {
  Blobs b;
  const auto& ctx = b.f.env.ctx;
  const auto s = sections(b.relin);
  // s[0]: key record {role, galois element, a form, count}.
  auto role = b.relin;
  set_u32(role, s[0].body, 9);
  reseal(role);
  expect_error<ParameterError>(
      [&] { (void)load_relin_key(ctx, std::span<const std::uint8_t>(role)); },
      {"unknown key role 9"});
  auto digits = b.relin;
  set_u32(digits, s[0].body + 12, ctx->dnum() + 1);
  reseal(digits);
  expect_error<ParameterError>(
      [&] { (void)load_relin_key(ctx, std::span<const std::uint8_t>(digits)); },
      {"digits", "needs"});
  // The seed section is the last one of a compact key.
  auto scheme = b.relin;
  set_u32(scheme, s.back().body, 7);
  reseal(scheme);
  expect_error<ParameterError>(
      [&] { (void)load_relin_key(ctx, std::span<const std::uint8_t>(scheme)); },
      {"seed expansion scheme 7 is not supported", "chacha20-wide"});
  // Galois elements: odd, below 2N, increasing.
  const auto g = sections(b.galois);
  auto even = b.galois;
  set_u32(even, g[1].body + 4, 6);
  reseal(even);
  expect_error<ParameterError>(
      [&] { (void)load_galois_keys(ctx, std::span<const std::uint8_t>(even)); },
      {"element 6", "odd"});
  auto order = b.galois;
  // The second key record (after the meta, 1 record + dnum b + seed sections of the first key).
  const std::size_t second = 1 + 1 + ctx->dnum() + 1;
  set_u32(order, g[second].body + 4, 3);
  reseal(order);
  expect_error<ParameterError>(
      [&] { (void)load_galois_keys(ctx, std::span<const std::uint8_t>(order)); },
      {"not above the previous key"});
  // Secret keys: ternary codes and the weight.
  const auto k = sections(b.sk);
  auto code = b.sk;
  code[k[1].body] = static_cast<std::uint8_t>((code[k[1].body] & 0xfc) | 2);
  reseal(code);
  expect_error<ParameterError>(
      [&] { (void)load_secret_key(ctx, std::span<const std::uint8_t>(code)); },
      {"coefficient 0", "invalid code 2"});
  auto weight = b.sk;
  set_u32(weight, k[0].body + 4, 7);
  reseal(weight);
  expect_error<ParameterError>(
      [&] { (void)load_secret_key(ctx, std::span<const std::uint8_t>(weight)); },
      {"hamming weight 7"});
}

// ---- encoding (point 2) ------------------------------------------------------------------------

TEST(EncoderValidation, RejectsNonFiniteAndOversizedValues) {
  Env e(small_params());
  std::vector<double> v(8, 0.5);
  v[3] = std::nan("");
  expect_error<ParameterError>([&] { (void)e.encoder.encode(v, 2); }, {"value 3", "NaN"});
  v[3] = -INFINITY;
  expect_error<ParameterError>([&] { (void)e.encoder.encode(v, 2); }, {"value 3", "infinite"});
  // |value| * scale must stay below Q_level / 2: the message gives the largest magnitude.
  v[3] = 1e30;
  expect_error<ParameterError>([&] { (void)e.encoder.encode(v, 2); },
                               {"value 3", "1e+30", "level 2", "largest", "magnitude"});
  // Just inside the limit encodes and decodes.
  const double limit = std::ldexp(1.0, static_cast<int>(e.ctx->level(2).log2_q) - 2) /
                       static_cast<double>(e.ctx->default_scale(2));
  v[3] = limit / 4;
  const auto back = e.encoder.decode_real(e.encoder.encode(v, 2));
  EXPECT_NEAR(back[3] / v[3], 1.0, 1e-6);
}

}  // namespace
}  // namespace theo::test
