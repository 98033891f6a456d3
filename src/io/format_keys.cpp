// The formats of keys (io/formats.h): secret, public, relinearization and Galois keys, and
// evaluation-key bundles, all but the secret key made of key records.

#include <array>
#include <set>
#include <string>

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "common/enum_names.h"
#include "io/formats.h"
#include "theo/errors.h"

namespace theo::detail::serial {

namespace {

constexpr u32 kTernaryEncoding = 1;

constexpr EnumName<KeyRole> kKeyRoleNames[] = {
    {KeyRole::kPublic, "public key"},
    {KeyRole::kRelin, "relinearization key"},
    {KeyRole::kGalois, "Galois key"},
    {KeyRole::kToSparse, "bootstrapping key dense -> sparse"},
    {KeyRole::kToDense, "bootstrapping key sparse -> dense"},
};

const char* role_name(KeyRole role) {
  return enum_name(kKeyRoleNames, role, "key");
}

// A metadata section of four u32 fields (every key format's: 16 bytes), read and unpacked.
std::array<u32, 4> four_fields(Reader& r, SectionKind kind, const char* what) {
  const auto b = r.small_section(kind, 16, what);
  FieldReader f(b);
  std::array<u32, 4> out{};
  for (u32& x : out)
    x = f.u32_le();
  return out;
}

// ---- key records, written --------------------------------------------------------------------

// One key record: `count` b polys, then the seed or the `count` a polys.
void emit_key(Writer& w, const Context& ctx, KeyRole role, u32 galois_element,
              const std::vector<const RnsPoly*>& b, const std::vector<const RnsPoly*>& a,
              const std::optional<UniformSeed>& a_seed, bool compact, bool& seeded) {
  const bool use_seed = compact && a_seed.has_value();
  FieldWriter f;
  f.u32_le(static_cast<u32>(role));
  f.u32_le(galois_element);
  f.u32_le(static_cast<u32>(use_seed ? AForm::kSeeded : AForm::kExpanded));
  f.u32_le(static_cast<u32>(b.size()));
  w.section(SectionKind::kKeyMeta, f.bytes());
  for (const RnsPoly* p : b)
    w.poly(ctx, *p);
  if (use_seed) {
    w.seed(*a_seed);
    seeded = true;
  } else {
    for (const RnsPoly* p : a)
      w.poly(ctx, *p);
  }
}

void emit_switching_key(Writer& w, const Context& ctx, const SwitchingKey& key, KeyRole role,
                        u32 galois_element, bool compact, bool& seeded) {
  std::vector<const RnsPoly*> b, a;
  for (u32 k = 0; k < key.dnum(); ++k) {
    b.push_back(&key.b(k));
    if (!key.compact()) a.push_back(&key.a(k));
  }
  // A compact key has only its seed to write.
  emit_key(w, ctx, role, galois_element, b, a, key.a_seed(), compact || key.compact(), seeded);
}

void require_switching_key(const Context& ctx, const SwitchingKey& key, const char* what) {
  detail::require_usable(ctx, key, what);
  if (key.dnum() != ctx.dnum()) {
    throw ParameterError(std::string(what) + " has " + std::to_string(key.dnum()) +
                         " digits; this Context's keys have " + std::to_string(ctx.dnum()));
  }
}

// The Galois elements to write: all, or the requested ones (each must have a key).
std::vector<u32> galois_to_write(const GaloisKeys& keys, const SaveOptions& options,
                                 const char* who) {
  if (!options.galois_elements) return keys.galois_elements();
  std::set<u32> want(options.galois_elements->begin(), options.galois_elements->end());
  for (const u32 g : want) {
    if (!keys.contains(g)) {
      throw MissingKeyError(std::string(who) + ": the Galois keys have no key for Galois element " +
                            std::to_string(g) + ", so it cannot be saved");
    }
  }
  return {want.begin(), want.end()};
}

// ---- key records, read -----------------------------------------------------------------------

struct KeyRecord {
  KeyRole role{};
  u32 galois_element = 0;
  bool seeded = false;
  u32 count = 0;
};

KeyRecord read_key_meta(Reader& r, const Context& ctx) {
  const auto [role, g, form, count] = four_fields(r, SectionKind::kKeyMeta, "key record");
  if (role < static_cast<u32>(KeyRole::kPublic) || role > static_cast<u32>(KeyRole::kToDense)) {
    r.fail("key record: unknown key role " + std::to_string(role));
  }
  KeyRecord k;
  k.role = static_cast<KeyRole>(role);
  if (form > static_cast<u32>(AForm::kSeeded)) {
    r.fail(std::string(role_name(k.role)) + ": unknown form " + std::to_string(form) +
           " of its uniform polynomials (0: words, 1: seed)");
  }
  k.seeded = form == static_cast<u32>(AForm::kSeeded);
  const u32 want = k.role == KeyRole::kPublic ? 1 : ctx.dnum();
  if (count != want) {
    r.fail(std::string(role_name(k.role)) + " has " + std::to_string(count) +
           " digits; this Context's needs " + std::to_string(want));
  }
  k.count = count;
  if (k.role == KeyRole::kGalois) {
    if (g % 2 == 0 || g >= 2 * ctx.n() || g == 1) {
      r.fail("Galois key for element " + std::to_string(g) +
             ": not an odd number in [3, 2N = " + std::to_string(2 * ctx.n()) + ")");
    }
  } else if (g != 0) {
    r.fail(std::string(role_name(k.role)) + ": Galois element field is " + std::to_string(g) +
           ", not 0");
  }
  k.galois_element = g;
  return k;
}

struct KeyParts {
  std::vector<RnsPoly> b, a;
  std::optional<UniformSeed> seed;
};

KeyParts read_key_body(Reader& r, const Context& ctx, const KeyRecord& k) {
  const Basis basis = ctx.key_basis();
  KeyParts out;
  for (u32 i = 0; i < k.count; ++i)
    out.b.push_back(r.poly(ctx, basis, role_name(k.role)));
  if (k.seeded) {
    out.seed = r.seed(role_name(k.role));
    Backend& be = ctx.backend();
    for (u32 i = 0; i < k.count; ++i) {
      out.a.push_back(be.make_poly(basis));
      expand_uniform(ctx, *out.seed, i, out.a.back().ref());
    }
  } else {
    for (u32 i = 0; i < k.count; ++i)
      out.a.push_back(r.poly(ctx, basis, role_name(k.role)));
  }
  return out;
}

void skip_key_body(Reader& r, const KeyRecord& k) {
  for (u32 i = 0; i < k.count; ++i)
    r.skip(role_name(k.role));
  const u32 a_sections = k.seeded ? 1 : k.count;
  for (u32 i = 0; i < a_sections; ++i)
    r.skip(role_name(k.role));
}

SwitchingKey read_switching_key(Reader& r, const Context& ctx, const KeyRecord& k) {
  KeyParts p = read_key_body(r, ctx, k);
  return SwitchingKey(ctx.id(), std::move(p.b), std::move(p.a), p.seed);
}

KeyRecord expect_key(Reader& r, const Context& ctx, KeyRole role) {
  const KeyRecord k = read_key_meta(r, ctx);
  if (k.role != role) {
    r.fail(std::string("expected the ") + role_name(role) + " here, found the " +
           role_name(k.role));
  }
  return k;
}

// A requested subset of Galois elements, or all.
class GaloisFilter {
 public:
  explicit GaloisFilter(const LoadOptions& o) {
    if (o.galois_elements) {
      want_.emplace(o.galois_elements->begin(), o.galois_elements->end());
    }
  }
  bool wants(u32 g) const { return !want_ || want_->count(g) != 0; }
  void found(u32 g) { seen_.insert(g); }
  void require_all(const std::string& who) const {
    if (!want_) return;
    for (const u32 g : *want_) {
      if (seen_.count(g) == 0) {
        throw MissingKeyError(who + ": the data has no key for Galois element " +
                              std::to_string(g) + " (it holds " + std::to_string(seen_.size()) +
                              " of the requested keys)");
      }
    }
  }

 private:
  std::optional<std::set<u32>> want_;
  std::set<u32> seen_;
};

// Reads `count` Galois key records (increasing elements), loading those the filter wants.
void read_galois_records(Reader& r, const Context& ctx, u32 count, GaloisFilter& filter,
                         GaloisKeys& out, bool& seeded) {
  u32 previous = 0;
  for (u32 i = 0; i < count; ++i) {
    const KeyRecord k = expect_key(r, ctx, KeyRole::kGalois);
    if (k.galois_element <= previous) {
      r.fail("Galois key " + std::to_string(i) + " has element " +
             std::to_string(k.galois_element) + ", not above the previous key's " +
             std::to_string(previous) + " (keys are stored in increasing order, once each)");
    }
    previous = k.galois_element;
    seeded = seeded || k.seeded;
    if (filter.wants(k.galois_element)) {
      out.insert(k.galois_element, read_switching_key(r, ctx, k));
      filter.found(k.galois_element);
    } else {
      skip_key_body(r, k);
    }
  }
}

// Checks of a key container's metadata, shared by Galois keys and evaluation key bundles.
void require_key_digits(Reader& r, const Context& ctx, u32 dnum) {
  if (dnum != ctx.dnum()) {
    r.fail("the keys have " + std::to_string(dnum) + " digits; this Context's have " +
           std::to_string(ctx.dnum()));
  }
}

void require_galois_count(Reader& r, const Context& ctx, u32 count) {
  if (count > ctx.n()) {
    r.fail(std::to_string(count) + " Galois keys: there are only N = " + std::to_string(ctx.n()) +
           " Galois elements");
  }
}

// `keys` key records (`noun`: what the message calls them) must fit in the declared payload.
void require_key_payload(Reader& r, const Context& ctx, u64 keys, const char* noun) {
  // Every key record holds at least its record, dnum b polys and a seed.
  const u64 poly_bytes = u64{4} * ctx.n() * ctx.key_basis().size;
  const u64 min_key = kSectionOverhead * (ctx.dnum() + 2) + kKeyMetaBytes + kSeedBodyBytes +
                      ctx.dnum() * poly_bytes;
  if (keys > r.payload_left() / min_key) {
    r.fail(std::to_string(keys) + " " + noun + " need at least " + std::to_string(keys * min_key) +
           " bytes; the header declares a payload of " + std::to_string(r.header().payload_bytes));
  }
}

// ---- secret key ------------------------------------------------------------------------------

Layout secret_key_layout(const Context& ctx, const SecretKey& key, const SaveOptions&) {
  detail::require_usable(ctx, key, "save: secret key");
  const u32 n = ctx.n();
  const auto emit = [&key, n](Writer& w, bool&) {
    FieldWriter f;
    f.u32_le(n);
    f.u32_le(key.hamming_weight());
    f.u32_le(kTernaryEncoding);
    f.u32_le(0);
    w.section(SectionKind::kMeta, f.bytes());
    std::vector<std::uint8_t> packed(n / 4, 0);
    if (!w.measuring()) {
      const std::vector<i32>& c = key.coefficients();
      for (u32 i = 0; i < n; ++i) {
        const std::uint8_t code = c[i] == 0 ? 0 : (c[i] == 1 ? 1 : 3);
        packed[i / 4] = static_cast<std::uint8_t>(packed[i / 4] | (code << (2 * (i % 4))));
      }
    }
    w.section(SectionKind::kTernary, packed);
  };
  return {ObjectType::kSecretKey, context_fingerprint(ctx), "save secret key", emit};
}

Read<SecretKey> read_secret_key(Reader& r, const Context& ctx, const LoadOptions&) {
  const auto [n, weight, encoding, reserved] = four_fields(r, SectionKind::kMeta, "metadata");
  if (n != ctx.n()) {
    r.fail("ring degree " + std::to_string(n) +
           " is not this Context's N = " + std::to_string(ctx.n()));
  }
  if (weight == 0 || weight > n) {
    r.fail("hamming weight " + std::to_string(weight) + " is not in [1, N]");
  }
  if (encoding != kTernaryEncoding)
    r.fail("unknown coefficient encoding " + std::to_string(encoding));
  if (reserved != 0) r.fail("reserved field is " + std::to_string(reserved) + ", not 0");
  auto packed = r.small_section(SectionKind::kTernary, n / 4, "coefficients");
  Read<SecretKey> out;
  // Init-captures: structured bindings can't be captured by name before C++20's P1091 (clang < 16).
  out.make = [&r, &ctx, n = n, weight = weight, packed = std::move(packed)] {
    std::vector<i32> coeffs(n);
    u32 nonzero = 0;
    for (u32 i = 0; i < n; ++i) {
      const u32 code = (packed[i / 4] >> (2 * (i % 4))) & 3u;
      if (code == 2) r.fail("coefficient " + std::to_string(i) + " has the invalid code 2");
      coeffs[i] = code == 0 ? 0 : (code == 1 ? 1 : -1);
      nonzero += code != 0;
    }
    if (nonzero != weight) {
      r.fail("the coefficients have " + std::to_string(nonzero) +
             " nonzero entries, but the metadata says hamming weight " + std::to_string(weight));
    }
    RnsPoly ntt = detail::small_poly_ntt(ctx, coeffs, ctx.key_basis());
    return SecretKey(ctx.id(), std::move(coeffs), weight, std::move(ntt));
  };
  return out;
}

// ---- public and relinearization keys ----------------------------------------------------------

Layout public_key_layout(const Context& ctx, const PublicKey& key, const SaveOptions& options) {
  detail::require_usable(ctx, key, "save: public key");
  const bool compact = options.compact;
  return {ObjectType::kPublicKey, context_fingerprint(ctx), "save public key",
          [&ctx, &key, compact](Writer& w, bool& seeded) {
            emit_key(w, ctx, KeyRole::kPublic, 0, {&key.b()}, {&key.a()}, key.a_seed(), compact,
                     seeded);
          }};
}

Read<PublicKey> read_public_key(Reader& r, const Context& ctx, const LoadOptions&) {
  const KeyRecord k = expect_key(r, ctx, KeyRole::kPublic);
  auto parts = std::make_shared<KeyParts>(read_key_body(r, ctx, k));
  return {k.seeded, false, [&ctx, parts] {
            return PublicKey(ctx.id(), std::move(parts->b[0]), std::move(parts->a[0]), parts->seed);
          }};
}

Layout relin_key_layout(const Context& ctx, const RelinKey& key, const SaveOptions& options) {
  require_switching_key(ctx, key.key(), "save: relinearization key");
  const bool compact = options.compact;
  return {ObjectType::kRelinKey, context_fingerprint(ctx), "save relin key",
          [&ctx, &key, compact](Writer& w, bool& seeded) {
            emit_switching_key(w, ctx, key.key(), KeyRole::kRelin, 0, compact, seeded);
          }};
}

Read<RelinKey> read_relin_key(Reader& r, const Context& ctx, const LoadOptions&) {
  const KeyRecord k = expect_key(r, ctx, KeyRole::kRelin);
  auto key = std::make_shared<SwitchingKey>(read_switching_key(r, ctx, k));
  return {k.seeded, false, [key] { return RelinKey(std::move(*key)); }};
}

// ---- Galois keys -----------------------------------------------------------------------------

Layout galois_keys_layout(const Context& ctx, const GaloisKeys& keys, const SaveOptions& options) {
  detail::require_usable(ctx, keys, "save: Galois keys");
  const std::vector<u32> elements = galois_to_write(keys, options, "save: Galois keys");
  for (const u32 g : elements)
    require_switching_key(ctx, *keys.find(g), "save: Galois key");
  const bool compact = options.compact;
  const auto emit = [&ctx, &keys, elements, compact](Writer& w, bool& seeded) {
    FieldWriter f;
    f.u32_le(static_cast<u32>(elements.size()));
    f.u32_le(ctx.dnum());
    f.u32_le(0);
    f.u32_le(0);
    w.section(SectionKind::kMeta, f.bytes());
    for (const u32 g : elements)
      emit_switching_key(w, ctx, *keys.find(g), KeyRole::kGalois, g, compact, seeded);
  };
  return {ObjectType::kGaloisKeys, context_fingerprint(ctx), "save Galois keys", emit};
}

Read<GaloisKeys> read_galois_keys(Reader& r, const Context& ctx, const LoadOptions& options) {
  const auto [count, dnum, r0, r1] = four_fields(r, SectionKind::kMeta, "metadata");
  require_key_digits(r, ctx, dnum);
  if (r0 != 0 || r1 != 0) r.fail("reserved metadata fields are not 0");
  require_galois_count(r, ctx, count);
  require_key_payload(r, ctx, count, "Galois keys");
  auto filter = std::make_shared<GaloisFilter>(options);
  auto keys = std::make_shared<GaloisKeys>(ctx.id());
  Read<GaloisKeys> out;
  read_galois_records(r, ctx, count, *filter, *keys, out.seeded);
  out.make = [filter, keys] {
    filter->require_all("load_galois_keys");
    return std::move(*keys);
  };
  return out;
}

// ---- evaluation keys -------------------------------------------------------------------------

Layout evaluation_keys_layout(const Context& ctx, const EvaluationKeysView& keys,
                              const SaveOptions& options) {
  const char* who = "save: evaluation keys";
  if (!keys.relin && !keys.galois && !keys.to_sparse && !keys.to_dense) {
    throw ParameterError(std::string(who) + ": no keys to save");
  }
  if ((keys.to_sparse == nullptr) != (keys.to_dense == nullptr)) {
    throw ParameterError(std::string(who) +
                         ": the bootstrapping keys come in pairs (to_sparse and to_dense)");
  }
  if (keys.relin) require_switching_key(ctx, keys.relin->key(), "save: relinearization key");
  std::vector<u32> elements;
  if (keys.galois) {
    detail::require_usable(ctx, *keys.galois, "save: Galois keys");
    elements = galois_to_write(*keys.galois, options, who);
    for (const u32 g : elements)
      require_switching_key(ctx, *keys.galois->find(g), "save: Galois key");
  } else if (options.galois_elements && !options.galois_elements->empty()) {
    throw MissingKeyError(std::string(who) +
                          ": Galois elements were requested but there are no "
                          "Galois keys");
  }
  if (keys.to_sparse) {
    require_switching_key(ctx, *keys.to_sparse, "save: bootstrapping key to_sparse");
    require_switching_key(ctx, *keys.to_dense, "save: bootstrapping key to_dense");
  }
  const u32 parts = (keys.relin ? kPartRelin : 0u) | (keys.galois ? kPartGalois : 0u) |
                    (keys.to_sparse ? kPartBootstrapping : 0u);
  const bool compact = options.compact;
  const auto emit = [&ctx, keys, elements, parts, compact](Writer& w, bool& seeded) {
    FieldWriter f;
    f.u32_le(parts);
    f.u32_le(static_cast<u32>(elements.size()));
    f.u32_le(ctx.dnum());
    f.u32_le(0);
    w.section(SectionKind::kMeta, f.bytes());
    if (keys.relin) {
      emit_switching_key(w, ctx, keys.relin->key(), KeyRole::kRelin, 0, compact, seeded);
    }
    for (const u32 g : elements) {
      emit_switching_key(w, ctx, *keys.galois->find(g), KeyRole::kGalois, g, compact, seeded);
    }
    if (keys.to_sparse) {
      emit_switching_key(w, ctx, *keys.to_sparse, KeyRole::kToSparse, 0, compact, seeded);
      emit_switching_key(w, ctx, *keys.to_dense, KeyRole::kToDense, 0, compact, seeded);
    }
  };
  return {ObjectType::kEvaluationKeys, context_fingerprint(ctx), "save evaluation keys", emit};
}

struct BundleMeta {
  u32 parts = 0;
  u32 galois_count = 0;
};

BundleMeta read_bundle_meta(Reader& r, const Context& ctx) {
  const auto [parts, galois_count, dnum, reserved] = four_fields(r, SectionKind::kMeta, "metadata");
  BundleMeta m{parts, galois_count};
  if (m.parts == 0 || (m.parts & ~(kPartRelin | kPartGalois | kPartBootstrapping)) != 0) {
    r.fail("parts field " + std::to_string(m.parts) +
           " is not a nonempty set of {1: relin, 2: Galois, 4: bootstrapping}");
  }
  require_key_digits(r, ctx, dnum);
  if (reserved != 0) r.fail("reserved metadata field is not 0");
  if ((m.parts & kPartGalois) == 0 && m.galois_count != 0) {
    r.fail("Galois key count " + std::to_string(m.galois_count) + " without the Galois part");
  }
  require_galois_count(r, ctx, m.galois_count);
  const u64 keys = u64{m.galois_count} + ((m.parts & kPartRelin) ? 1 : 0) +
                   ((m.parts & kPartBootstrapping) ? 2 : 0);
  require_key_payload(r, ctx, keys, "keys");
  return m;
}

Read<EvaluationKeys> read_evaluation_keys(Reader& r, const Context& ctx,
                                          const LoadOptions& options) {
  const BundleMeta m = read_bundle_meta(r, ctx);
  auto keys = std::make_shared<EvaluationKeys>();
  auto filter = std::make_shared<GaloisFilter>(options);
  Read<EvaluationKeys> out;
  // A switching key of `role` next, read into `to`.
  const auto read_key = [&](KeyRole role, SwitchingKey& to) {
    const KeyRecord k = expect_key(r, ctx, role);
    out.seeded = out.seeded || k.seeded;
    to = read_switching_key(r, ctx, k);
  };
  if (m.parts & kPartRelin) {
    SwitchingKey relin;
    read_key(KeyRole::kRelin, relin);
    keys->relin = RelinKey(std::move(relin));
  }
  if (m.parts & kPartGalois) {
    keys->galois = GaloisKeys(ctx.id());
    read_galois_records(r, ctx, m.galois_count, *filter, keys->galois, out.seeded);
  }
  if (m.parts & kPartBootstrapping) {
    read_key(KeyRole::kToSparse, keys->to_sparse);
    read_key(KeyRole::kToDense, keys->to_dense);
  }
  out.make = [filter, keys] {
    filter->require_all("load_evaluation_keys");
    return std::move(*keys);
  };
  return out;
}

}  // namespace

const Format<SecretKey> kSecretKeyFormat{ObjectType::kSecretKey, "load_secret_key",
                                         secret_key_layout, read_secret_key};
const Format<PublicKey> kPublicKeyFormat{ObjectType::kPublicKey, "load_public_key",
                                         public_key_layout, read_public_key};
const Format<RelinKey> kRelinKeyFormat{ObjectType::kRelinKey, "load_relin_key", relin_key_layout,
                                       read_relin_key};
const Format<GaloisKeys> kGaloisKeysFormat{ObjectType::kGaloisKeys, "load_galois_keys",
                                           galois_keys_layout, read_galois_keys};
const Format<EvaluationKeysView, EvaluationKeys> kEvaluationKeysFormat{
    ObjectType::kEvaluationKeys, "load_evaluation_keys", evaluation_keys_layout,
    read_evaluation_keys};

}  // namespace theo::detail::serial
