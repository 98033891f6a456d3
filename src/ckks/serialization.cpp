// Object layouts of the serialization format (docs/serialization.md) on top of the container of
// ckks/serial_container.h.
//
//   parameters        text (the JSON parameter file)
//   secret key        meta {n, hamming weight, encoding = 1, 0}, ternary (N/4 bytes)
//   public key        key record
//   relin key         key record
//   Galois keys       meta {count, dnum, 0, 0}, count key records (Galois elements increasing)
//   evaluation keys   meta {parts, Galois count, dnum, 0}, [relin record], [Galois records],
//                     [to_sparse record, to_dense record]
//   plaintext         meta {level, slots, hints, 0, scale hi, scale lo}, poly
//   ciphertext        meta {level, slots, size, c1 form, hints, 0, scale hi, scale lo},
//                     poly c0, (seed | poly c1), [poly c2]
//
// A key record is key meta {role, Galois element, a form, count}, `count` polys b_k over
// Q_max u P, then the seed of the a_k (stream k) or the `count` polys a_k (count = 1 for a public
// key, dnum for switching keys).

#include "theo/ckks/serialization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "ckks/serial_container.h"
#include "common/enum_names.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

using detail::serial::FieldReader;
using detail::serial::FieldWriter;
using detail::serial::kFlagSeeded;
using detail::serial::kHeaderBytes;
using detail::serial::Progress;
using detail::serial::Reader;
using detail::serial::SectionKind;
using detail::serial::SpanStreamBuf;
using detail::serial::VectorStreamBuf;
using detail::serial::Writer;

namespace {

constexpr EnumName<ObjectType> kObjectTypeNames[] = {
    {ObjectType::kParameters, "a parameter set"}, {ObjectType::kSecretKey, "a secret key"},
    {ObjectType::kPublicKey, "a public key"},     {ObjectType::kRelinKey, "a relinearization key"},
    {ObjectType::kGaloisKeys, "Galois keys"},     {ObjectType::kEvaluationKeys, "evaluation keys"},
    {ObjectType::kPlaintext, "a plaintext"},      {ObjectType::kCiphertext, "a ciphertext"},
};

}  // namespace

std::string object_type_name(ObjectType type) {
  if (const char* name = find_enum_name(kObjectTypeNames, type)) return name;
  return "object type " + std::to_string(static_cast<u32>(type));
}

Fingerprint context_fingerprint(const Context& ctx) {
  return parameter_fingerprint(ctx.params());
}

namespace {

// ---- layout constants --------------------------------------------------------------------------

constexpr std::size_t kSecretMetaBytes = 16;
constexpr std::size_t kKeyMetaBytes = 16;
constexpr std::size_t kGaloisMetaBytes = 16;
constexpr std::size_t kBundleMetaBytes = 16;
constexpr std::size_t kPlaintextMetaBytes = 32;
constexpr std::size_t kCiphertextMetaBytes = 40;
// A parameter file is a few kilobytes; the limit keeps a hostile one from costing much.
constexpr u64 kMaxParameterText = u64{1} << 20;

constexpr u32 kTernaryEncoding = 1;
constexpr u32 kHintRealSlots = 1;

enum class KeyRole : u32 { kPublic = 1, kRelin = 2, kGalois = 3, kToSparse = 4, kToDense = 5 };
enum class AForm : u32 { kExpanded = 0, kSeeded = 1 };
constexpr u32 kPartRelin = 1, kPartGalois = 2, kPartBootstrapping = 4;

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

// ---- writing -----------------------------------------------------------------------------------

// An object's layout: emit(Writer&, bool& seeded) runs twice, measuring, then writing.
struct Layout {
  ObjectType type{};
  Fingerprint fingerprint{};
  const char* label = "";
  std::function<void(Writer&, bool&)> emit;
};

u64 measure(const Layout& layout) {
  Writer m;
  bool seeded = false;
  layout.emit(m, seeded);
  return kHeaderBytes + m.payload_bytes();
}

// `out`: a std::ostream& or a std::span<std::uint8_t> of exactly measure(layout) bytes.
template <typename Out>
void write(Out&& out, const SaveOptions& options, const Layout& layout) {
  Writer m;
  bool seeded = false;
  layout.emit(m, seeded);
  std::optional<Progress> progress;
  if (options.progress || options.on_progress) {
    progress.emplace(layout.label, kHeaderBytes + m.payload_bytes(), options.progress,
                     options.on_progress);
  }
  Writer w(std::forward<Out>(out), layout.type, seeded ? kFlagSeeded : 0u, layout.fingerprint,
           m.payload_bytes(), m.sections(), progress ? &*progress : nullptr, options.threads);
  layout.emit(w, seeded);
  w.finish();
}

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

// ---- reading -----------------------------------------------------------------------------------

struct KeyRecord {
  KeyRole role{};
  u32 galois_element = 0;
  bool seeded = false;
  u32 count = 0;
};

KeyRecord read_key_meta(Reader& r, const Context& ctx) {
  const auto b = r.small_section(SectionKind::kKeyMeta, kKeyMetaBytes, "key record");
  FieldReader f(b);
  const u32 role = f.u32_le();
  const u32 g = f.u32_le();
  const u32 form = f.u32_le();
  const u32 count = f.u32_le();
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
      detail::serial::expand_uniform(ctx, *out.seed, i, out.a.back().ref());
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
                         GaloisKeys& out, bool& seeded, std::vector<u32>* elements) {
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
    if (elements) elements->push_back(k.galois_element);
    if (filter.wants(k.galois_element) && !elements) {
      out.insert(k.galois_element, read_switching_key(r, ctx, k));
      filter.found(k.galois_element);
    } else {
      skip_key_body(r, k);
    }
  }
}

void require_seeded_flag(Reader& r, bool seeded) {
  const bool flag = (r.header().flags & kFlagSeeded) != 0;
  if (flag != seeded) {
    r.fail(std::string("the header's compact flag is ") + (flag ? "set" : "clear") +
           " but the object " + (seeded ? "has" : "has no") + " seeded polynomials");
  }
}

long double read_scale(Reader& r, double hi, double lo) {
  if (!std::isfinite(hi) || !(hi > 0) || !std::isfinite(lo)) {
    r.fail("scale " + std::to_string(hi) + " + " + std::to_string(lo) +
           " is not a positive finite number");
  }
  // Exactly the split save() writes (so one scale has one encoding, -0.0 and lost low parts
  // included).
  const long double s = static_cast<long double>(hi) + lo;
  const double hi2 = static_cast<double>(s);
  const double lo2 = static_cast<double>(s - hi2);
  if (hi2 != hi || lo2 != lo || std::signbit(lo) != std::signbit(lo2)) {
    r.fail("scale parts " + std::to_string(hi) + " and " + std::to_string(lo) +
           " are not the canonical split of a long double");
  }
  return s;
}

void check_slots(Reader& r, const Context& ctx, u32 slots) {
  if (slots == 0 || slots > ctx.max_slots() || (slots & (slots - 1)) != 0) {
    r.fail("slot count " + std::to_string(slots) +
           " is not a power of two in [1, N/2 = " + std::to_string(ctx.max_slots()) + "]");
  }
}

void check_level(Reader& r, const Context& ctx, u32 level) {
  if (level > ctx.max_level()) {
    r.fail("level " + std::to_string(level) + " does not exist (this Context's levels are 0.." +
           std::to_string(ctx.max_level()) + ")");
  }
}

u32 check_hints(Reader& r, u32 hints) {
  if ((hints & ~kHintRealSlots) != 0) r.fail("unknown hint bits " + std::to_string(hints));
  return hints;
}

const ContextPtr& require_context(const ContextPtr& ctx, const char* who) {
  if (!ctx) throw ContextError(std::string(who) + ": the Context is null");
  return ctx;
}

template <typename F>
auto from_span(std::span<const std::uint8_t> bytes, const LoadOptions& options, F&& f) {
  SpanStreamBuf buf(bytes);
  std::istream in(&buf);
  LoadOptions o = options;
  o.require_end = true;
  return f(in, o);
}

}  // namespace

// ---- parameters --------------------------------------------------------------------------------

void save(const ParameterSet& params, std::ostream& out, const SaveOptions& options) {
  validate(params);
  const std::string json = to_json(params);
  Layout l{ObjectType::kParameters, parameter_fingerprint(params), "save parameters",
           [&json](Writer& w, bool&) {
             w.section(SectionKind::kText,
                       std::span(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()));
           }};
  write(out, options, l);
}

ParameterSet load_parameters(std::istream& in, const LoadOptions& options) {
  Reader r(in, options, "load_parameters");
  r.read_header(ObjectType::kParameters);
  // The text section's length is the one size no Context fixes: it fills the payload, bounded.
  const u64 bytes = r.payload_left() >= detail::serial::kSectionOverhead
                        ? r.payload_left() - detail::serial::kSectionOverhead
                        : 0;
  if (bytes > kMaxParameterText) {
    r.fail("parameter text of " + std::to_string(bytes) + " bytes exceeds the limit of " +
           std::to_string(kMaxParameterText));
  }
  const auto text = r.small_section(SectionKind::kText, bytes, "parameter text");
  r.finish(options.require_end);
  if ((r.header().flags & kFlagSeeded) != 0) r.fail("a parameter set has no compact form");
  ParameterSet p;
  try {
    p = parse_parameters(std::string(text.begin(), text.end()));
  } catch (const ParameterError& e) {
    r.fail(std::string("the parameter text is invalid: ") + e.what());
  }
  if (parameter_fingerprint(p) != r.header().fingerprint) {
    r.fail("the header's fingerprint " + fingerprint_hex(r.header().fingerprint) +
           " is not the fingerprint of the parameters it holds (" +
           fingerprint_hex(parameter_fingerprint(p)) + ")");
  }
  return p;
}

// ---- secret key --------------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const SecretKey& key, const SaveOptions&) {
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

}  // namespace

SecretKey load_secret_key(const ContextPtr& ctx_ptr, std::istream& in, const LoadOptions& options) {
  const Context& ctx = *require_context(ctx_ptr, "load_secret_key");
  Reader r(in, options, "load_secret_key");
  r.read_header(ObjectType::kSecretKey);
  r.require_fingerprint(ctx);
  const auto meta = r.small_section(SectionKind::kMeta, kSecretMetaBytes, "metadata");
  FieldReader f(meta);
  const u32 n = f.u32_le();
  const u32 weight = f.u32_le();
  const u32 encoding = f.u32_le();
  const u32 reserved = f.u32_le();
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
  const auto packed = r.small_section(SectionKind::kTernary, n / 4, "coefficients");
  r.finish(options.require_end);
  require_seeded_flag(r, false);
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
}

// ---- public key --------------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const PublicKey& key, const SaveOptions& options) {
  detail::require_usable(ctx, key, "save: public key");
  const bool compact = options.compact;
  return {ObjectType::kPublicKey, context_fingerprint(ctx), "save public key",
          [&ctx, &key, compact](Writer& w, bool& seeded) {
            emit_key(w, ctx, KeyRole::kPublic, 0, {&key.b()}, {&key.a()}, key.a_seed(), compact,
                     seeded);
          }};
}

}  // namespace

PublicKey load_public_key(const ContextPtr& ctx_ptr, std::istream& in, const LoadOptions& options) {
  const Context& ctx = *require_context(ctx_ptr, "load_public_key");
  Reader r(in, options, "load_public_key");
  r.read_header(ObjectType::kPublicKey);
  r.require_fingerprint(ctx);
  const KeyRecord k = expect_key(r, ctx, KeyRole::kPublic);
  KeyParts p = read_key_body(r, ctx, k);
  r.finish(options.require_end);
  require_seeded_flag(r, k.seeded);
  return PublicKey(ctx.id(), std::move(p.b[0]), std::move(p.a[0]), p.seed);
}

// ---- relinearization key -----------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const RelinKey& key, const SaveOptions& options) {
  require_switching_key(ctx, key.key(), "save: relinearization key");
  const bool compact = options.compact;
  return {ObjectType::kRelinKey, context_fingerprint(ctx), "save relin key",
          [&ctx, &key, compact](Writer& w, bool& seeded) {
            emit_switching_key(w, ctx, key.key(), KeyRole::kRelin, 0, compact, seeded);
          }};
}

}  // namespace

RelinKey load_relin_key(const ContextPtr& ctx_ptr, std::istream& in, const LoadOptions& options) {
  const Context& ctx = *require_context(ctx_ptr, "load_relin_key");
  Reader r(in, options, "load_relin_key");
  r.read_header(ObjectType::kRelinKey);
  r.require_fingerprint(ctx);
  const KeyRecord k = expect_key(r, ctx, KeyRole::kRelin);
  SwitchingKey key = read_switching_key(r, ctx, k);
  r.finish(options.require_end);
  require_seeded_flag(r, k.seeded);
  return RelinKey(std::move(key));
}

// ---- Galois keys -------------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const GaloisKeys& keys, const SaveOptions& options) {
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
  const u64 min_key = detail::serial::kSectionOverhead * (ctx.dnum() + 2) + kKeyMetaBytes +
                      detail::serial::kSeedBodyBytes + ctx.dnum() * poly_bytes;
  if (keys > r.payload_left() / min_key) {
    r.fail(std::to_string(keys) + " " + noun + " need at least " + std::to_string(keys * min_key) +
           " bytes; the header declares a payload of " + std::to_string(r.header().payload_bytes));
  }
}

u32 read_galois_meta(Reader& r, const Context& ctx, const char* what) {
  const auto meta = r.small_section(SectionKind::kMeta, kGaloisMetaBytes, what);
  FieldReader f(meta);
  const u32 count = f.u32_le();
  const u32 dnum = f.u32_le();
  const u32 r0 = f.u32_le();
  const u32 r1 = f.u32_le();
  require_key_digits(r, ctx, dnum);
  if (r0 != 0 || r1 != 0) r.fail("reserved metadata fields are not 0");
  require_galois_count(r, ctx, count);
  require_key_payload(r, ctx, count, "Galois keys");
  return count;
}

}  // namespace

GaloisKeys load_galois_keys(const ContextPtr& ctx_ptr, std::istream& in,
                            const LoadOptions& options) {
  const Context& ctx = *require_context(ctx_ptr, "load_galois_keys");
  Reader r(in, options, "load_galois_keys");
  r.read_header(ObjectType::kGaloisKeys);
  r.require_fingerprint(ctx);
  const u32 count = read_galois_meta(r, ctx, "metadata");
  GaloisFilter filter(options);
  GaloisKeys keys(ctx.id());
  bool seeded = false;
  read_galois_records(r, ctx, count, filter, keys, seeded, nullptr);
  r.finish(options.require_end);
  require_seeded_flag(r, seeded);
  filter.require_all("load_galois_keys");
  return keys;
}

// ---- evaluation keys ---------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const EvaluationKeysView& keys, const SaveOptions& options) {
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
  const auto meta = r.small_section(SectionKind::kMeta, kBundleMetaBytes, "metadata");
  FieldReader f(meta);
  BundleMeta m;
  m.parts = f.u32_le();
  m.galois_count = f.u32_le();
  const u32 dnum = f.u32_le();
  const u32 reserved = f.u32_le();
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

}  // namespace

EvaluationKeys load_evaluation_keys(const ContextPtr& ctx_ptr, std::istream& in,
                                    const LoadOptions& options) {
  const Context& ctx = *require_context(ctx_ptr, "load_evaluation_keys");
  Reader r(in, options, "load_evaluation_keys");
  r.read_header(ObjectType::kEvaluationKeys);
  r.require_fingerprint(ctx);
  const BundleMeta m = read_bundle_meta(r, ctx);
  EvaluationKeys out;
  bool seeded = false;
  if (m.parts & kPartRelin) {
    const KeyRecord k = expect_key(r, ctx, KeyRole::kRelin);
    seeded = seeded || k.seeded;
    out.relin = RelinKey(read_switching_key(r, ctx, k));
  }
  GaloisFilter filter(options);
  if (m.parts & kPartGalois) {
    out.galois = GaloisKeys(ctx.id());
    read_galois_records(r, ctx, m.galois_count, filter, out.galois, seeded, nullptr);
  }
  if (m.parts & kPartBootstrapping) {
    const KeyRecord ks = expect_key(r, ctx, KeyRole::kToSparse);
    seeded = seeded || ks.seeded;
    out.to_sparse = read_switching_key(r, ctx, ks);
    const KeyRecord kd = expect_key(r, ctx, KeyRole::kToDense);
    seeded = seeded || kd.seeded;
    out.to_dense = read_switching_key(r, ctx, kd);
  }
  r.finish(options.require_end);
  require_seeded_flag(r, seeded);
  filter.require_all("load_evaluation_keys");
  return out;
}

// ---- plaintext ---------------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const Plaintext& pt, const SaveOptions& options) {
  detail::require_usable(ctx, pt, "save: plaintext");
  const u32 hints = options.real_slots ? kHintRealSlots : 0u;
  const auto emit = [&ctx, &pt, hints](Writer& w, bool&) {
    FieldWriter f;
    f.u32_le(pt.level());
    f.u32_le(pt.slots());
    f.u32_le(hints);
    f.u32_le(0);
    const double hi = static_cast<double>(pt.scale());
    f.f64(hi);
    f.f64(static_cast<double>(pt.scale() - hi));
    w.section(SectionKind::kMeta, f.bytes());
    w.poly(ctx, pt.poly());
  };
  return {ObjectType::kPlaintext, context_fingerprint(ctx), "save plaintext", emit};
}

}  // namespace

Plaintext load_plaintext(const ContextPtr& ctx_ptr, std::istream& in, const LoadOptions& options,
                         ObjectInfo* info) {
  const Context& ctx = *require_context(ctx_ptr, "load_plaintext");
  Reader r(in, options, "load_plaintext");
  r.read_header(ObjectType::kPlaintext);
  r.require_fingerprint(ctx);
  const auto meta = r.small_section(SectionKind::kMeta, kPlaintextMetaBytes, "metadata");
  FieldReader f(meta);
  const u32 level = f.u32_le();
  const u32 slots = f.u32_le();
  const u32 hints = f.u32_le();
  const u32 reserved = f.u32_le();
  const double hi = f.f64();
  const double lo = f.f64();
  check_level(r, ctx, level);
  check_slots(r, ctx, slots);
  check_hints(r, hints);
  if (reserved != 0) r.fail("reserved metadata field is not 0");
  const long double scale = read_scale(r, hi, lo);
  RnsPoly poly = r.poly(ctx, ctx.level(level).q_basis, "plaintext");
  r.finish(options.require_end);
  require_seeded_flag(r, false);
  if (info) {
    *info = ObjectInfo{};
    info->type = ObjectType::kPlaintext;
    info->version = r.header().version;
    info->fingerprint = r.header().fingerprint;
    info->total_bytes = kHeaderBytes + r.header().payload_bytes;
    info->real_slots = (hints & kHintRealSlots) != 0;
  }
  return Plaintext(ctx.id(), level, scale, slots, std::move(poly));
}

// ---- ciphertext --------------------------------------------------------------------------------

namespace {

Layout layout(const Context& ctx, const Ciphertext& ct, const SaveOptions& options) {
  detail::require_usable(ctx, ct, "save: ciphertext");
  const bool use_seed = options.compact && ct.is_seeded() && ct.size() == 2;
  const u32 hints = options.real_slots ? kHintRealSlots : 0u;
  const auto emit = [&ctx, &ct, use_seed, hints](Writer& w, bool& seeded) {
    FieldWriter f;
    f.u32_le(ct.level());
    f.u32_le(ct.slots());
    f.u32_le(ct.size());
    f.u32_le(static_cast<u32>(use_seed ? AForm::kSeeded : AForm::kExpanded));
    f.u32_le(hints);
    f.u32_le(0);
    const double hi = static_cast<double>(ct.scale());
    f.f64(hi);
    f.f64(static_cast<double>(ct.scale() - hi));
    w.section(SectionKind::kMeta, f.bytes());
    w.poly(ctx, ct.poly(0));
    if (use_seed) {
      w.seed(UniformSeed{*ct.seed(), ExpansionScheme::kChaCha20Wide});
      seeded = true;
    } else {
      for (u32 i = 1; i < ct.size(); ++i)
        w.poly(ctx, ct.poly(i));
    }
  };
  return {ObjectType::kCiphertext, context_fingerprint(ctx), "save ciphertext", emit};
}

}  // namespace

namespace {

// What a ciphertext's metadata says, checked.
struct CiphertextMeta {
  u32 level = 0;
  u32 slots = 0;
  u32 size = 0;
  bool seeded = false;
  u32 hints = 0;
  long double scale = 0;
};

CiphertextMeta read_ciphertext_meta(Reader& r, const Context& ctx) {
  r.read_header(ObjectType::kCiphertext);
  r.require_fingerprint(ctx);
  const auto meta = r.small_section(SectionKind::kMeta, kCiphertextMetaBytes, "metadata");
  FieldReader f(meta);
  CiphertextMeta m;
  m.level = f.u32_le();
  m.slots = f.u32_le();
  m.size = f.u32_le();
  const u32 form = f.u32_le();
  m.hints = f.u32_le();
  const u32 reserved = f.u32_le();
  const double hi = f.f64();
  const double lo = f.f64();
  check_level(r, ctx, m.level);
  check_slots(r, ctx, m.slots);
  check_hints(r, m.hints);
  if (reserved != 0) r.fail("reserved metadata field is not 0");
  if (m.size != 2 && m.size != 3) {
    r.fail("ciphertext size " + std::to_string(m.size) + " is not 2 or 3 polynomials");
  }
  if (form > static_cast<u32>(AForm::kSeeded)) {
    r.fail("unknown form " + std::to_string(form) + " of c1 (0: words, 1: seed)");
  }
  m.seeded = form == static_cast<u32>(AForm::kSeeded);
  if (m.seeded && m.size != 2) r.fail("only a 2-polynomial ciphertext can have a seeded c1");
  m.scale = read_scale(r, hi, lo);
  return m;
}

UniformSeed read_ciphertext_seed(Reader& r) {
  const UniformSeed seed = r.seed("ciphertext c1");
  if (seed.scheme != ExpansionScheme::kChaCha20Wide) {
    r.fail("ciphertext c1: seed expansion scheme " + std::to_string(static_cast<u32>(seed.scheme)) +
           " is not used for ciphertexts");
  }
  return seed;
}

const char* ciphertext_poly_name(u32 i) {
  return i == 0 ? "ciphertext c0" : i == 1 ? "ciphertext c1" : "ciphertext c2";
}

}  // namespace

Ciphertext load_ciphertext(const ContextPtr& ctx_ptr, std::istream& in, const LoadOptions& options,
                           ObjectInfo* info) {
  const Context& ctx = *require_context(ctx_ptr, "load_ciphertext");
  Reader r(in, options, "load_ciphertext");
  const CiphertextMeta m = read_ciphertext_meta(r, ctx);
  const Basis& basis = ctx.level(m.level).q_basis;
  std::vector<RnsPoly> polys;
  polys.push_back(r.poly(ctx, basis, "ciphertext c0"));
  std::optional<UniformSeed> seed;
  if (m.seeded) {
    seed = read_ciphertext_seed(r);
  } else {
    for (u32 i = 1; i < m.size; ++i)
      polys.push_back(r.poly(ctx, basis, ciphertext_poly_name(i)));
  }
  r.finish(options.require_end);
  require_seeded_flag(r, m.seeded);
  if (m.seeded) {
    polys.push_back(ctx.backend().make_poly(basis));
    detail::serial::expand_uniform(ctx, *seed, 0, polys.back().ref());
  }
  if (info) {
    *info = ObjectInfo{};
    info->type = ObjectType::kCiphertext;
    info->version = r.header().version;
    info->compact = m.seeded;
    info->fingerprint = r.header().fingerprint;
    info->total_bytes = kHeaderBytes + r.header().payload_bytes;
    info->real_slots = (m.hints & kHintRealSlots) != 0;
  }
  Ciphertext ct(ctx.id(), m.level, m.scale, m.slots, std::move(polys));
  if (m.seeded) ct.set_seed(seed->seed);
  return ct;
}

// ---- ciphertexts in host memory ----------------------------------------------------------------

namespace {

std::size_t poly_words(const Context& ctx, u32 level) {
  return static_cast<std::size_t>(ctx.level(level).q_basis.size) * ctx.n();
}

void require_host_ciphertext(const Context& ctx, const HostCiphertext& h, const char* who) {
  if (h.fingerprint != context_fingerprint(ctx)) {
    throw ContextError(std::string(who) + ": the ciphertext was made for other parameters (" +
                       fingerprint_hex(h.fingerprint) + ") than this Context's (" +
                       fingerprint_hex(context_fingerprint(ctx)) + ")");
  }
  if (h.level > ctx.max_level() || (h.size != 2 && h.size != 3) || (h.c1_seed && h.size != 2)) {
    throw ParameterError(std::string(who) + ": malformed host ciphertext (level " +
                         std::to_string(h.level) + ", size " + std::to_string(h.size) + ")");
  }
  const std::size_t stored = h.c1_seed ? 1 : h.size;
  if (h.words.words() != stored * poly_words(ctx, h.level)) {
    throw ParameterError(std::string(who) + ": the host ciphertext holds " +
                         std::to_string(h.words.words()) + " words, its level and size need " +
                         std::to_string(stored * poly_words(ctx, h.level)));
  }
}

Layout layout(const Context& ctx, const HostCiphertext& h) {
  require_host_ciphertext(ctx, h, "to_bytes: host ciphertext");
  const auto emit = [&ctx, &h](Writer& w, bool& seeded) {
    FieldWriter f;
    f.u32_le(h.level);
    f.u32_le(h.slots);
    f.u32_le(h.size);
    f.u32_le(static_cast<u32>(h.c1_seed ? AForm::kSeeded : AForm::kExpanded));
    f.u32_le(h.real_slots ? kHintRealSlots : 0u);
    f.u32_le(0);
    const double hi = static_cast<double>(h.scale);
    f.f64(hi);
    f.f64(static_cast<double>(h.scale - hi));
    w.section(SectionKind::kMeta, f.bytes());
    const std::size_t per = poly_words(ctx, h.level);
    const std::size_t stored = h.c1_seed ? 1 : h.size;
    for (std::size_t i = 0; i < stored; ++i) {
      w.words({h.words.data() + i * per, per});
      if (i == 0 && h.c1_seed) {
        w.seed(*h.c1_seed);
        seeded = true;
      }
    }
  };
  return {ObjectType::kCiphertext, h.fingerprint, "save ciphertext", emit};
}

}  // namespace

HostCiphertext download(const Context& ctx, const Ciphertext& ct, const SaveOptions& options) {
  detail::require_usable(ctx, ct, "download: ciphertext");
  HostCiphertext h;
  h.fingerprint = context_fingerprint(ctx);
  h.level = ct.level();
  h.slots = ct.slots();
  h.scale = ct.scale();
  h.real_slots = options.real_slots;
  h.size = ct.size();
  if (options.compact && ct.is_seeded() && ct.size() == 2) {
    h.c1_seed = UniformSeed{*ct.seed(), ExpansionScheme::kChaCha20Wide};
  }
  const std::size_t per = poly_words(ctx, h.level);
  const std::size_t stored = h.c1_seed ? 1 : h.size;
  h.words = detail::serial::staging_buffer(ctx, stored * per);
  for (std::size_t i = 0; i < stored; ++i)
    ctx.backend().download(ct.poly(static_cast<u32>(i)).cref(), h.words.data() + i * per);
  return h;
}

Ciphertext upload(const ContextPtr& ctx_ptr, const HostCiphertext& h) {
  const Context& ctx = *require_context(ctx_ptr, "upload");
  require_host_ciphertext(ctx, h, "upload");
  const Basis& basis = ctx.level(h.level).q_basis;
  const std::size_t per = poly_words(ctx, h.level);
  Backend& be = ctx.backend();
  std::vector<RnsPoly> polys;
  const std::size_t stored = h.c1_seed ? 1 : h.size;
  for (std::size_t i = 0; i < stored; ++i) {
    polys.push_back(be.make_poly(basis));
    be.upload(h.words.data() + i * per, polys.back().ref());
  }
  if (h.c1_seed) {
    polys.push_back(be.make_poly(basis));
    detail::serial::expand_uniform(ctx, *h.c1_seed, 0, polys.back().ref());
  }
  Ciphertext ct(ctx.id(), h.level, h.scale, h.slots, std::move(polys));
  if (h.c1_seed) ct.set_seed(h.c1_seed->seed);
  return ct;
}

u64 serialized_size(const Context& ctx, const HostCiphertext& host) {
  return measure(layout(ctx, host));
}

void to_bytes(const Context& ctx, const HostCiphertext& host, std::span<std::uint8_t> out,
              const SaveOptions& options) {
  write(out, options, layout(ctx, host));
}

std::vector<std::uint8_t> to_bytes(const Context& ctx, const HostCiphertext& host,
                                   const SaveOptions& options) {
  const Layout l = layout(ctx, host);
  std::vector<std::uint8_t> out(measure(l));
  write(std::span<std::uint8_t>(out), options, l);
  return out;
}

HostCiphertext load_host_ciphertext(const Context& ctx, std::span<const std::uint8_t> bytes,
                                    const LoadOptions& options) {
  SpanStreamBuf buf(bytes);
  std::istream in(&buf);
  Reader r(in, options, "load_ciphertext");
  const CiphertextMeta m = read_ciphertext_meta(r, ctx);
  const Basis& basis = ctx.level(m.level).q_basis;
  const std::size_t per = poly_words(ctx, m.level);
  HostCiphertext h;
  h.fingerprint = r.header().fingerprint;
  h.level = m.level;
  h.slots = m.slots;
  h.scale = m.scale;
  h.real_slots = (m.hints & kHintRealSlots) != 0;
  h.size = m.size;
  const std::size_t stored = m.seeded ? 1 : m.size;
  h.words = detail::serial::staging_buffer(ctx, stored * per);
  r.poly_words(ctx, basis, h.words.data(), "ciphertext c0");
  if (m.seeded) {
    h.c1_seed = read_ciphertext_seed(r);
  } else {
    for (u32 i = 1; i < m.size; ++i)
      r.poly_words(ctx, basis, h.words.data() + i * per, ciphertext_poly_name(i));
  }
  r.finish(true);
  require_seeded_flag(r, m.seeded);
  return h;
}

// ---- inspect -----------------------------------------------------------------------------------

ObjectInfo inspect(std::istream& in, const LoadOptions& options) {
  Reader r(in, options, "inspect");
  const auto& h = r.read_header(std::nullopt);
  ObjectInfo info;
  info.type = h.type;
  info.version = h.version;
  info.compact = (h.flags & kFlagSeeded) != 0;
  info.fingerprint = h.fingerprint;
  info.total_bytes = kHeaderBytes + h.payload_bytes;
  // Metadata sections need no Context; key records are walked without their polynomials.
  const auto key_records = [&](u32 count) {
    for (u32 i = 0; i < count; ++i) {
      const auto b = r.small_section(SectionKind::kKeyMeta, kKeyMetaBytes, "key record");
      FieldReader f(b);
      const u32 role = f.u32_le();
      const u32 g = f.u32_le();
      const u32 form = f.u32_le();
      const u32 digits = f.u32_le();
      if (role == static_cast<u32>(KeyRole::kGalois)) info.galois_elements.push_back(g);
      if (role == static_cast<u32>(KeyRole::kRelin)) info.has_relin_key = true;
      if (role == static_cast<u32>(KeyRole::kToSparse)) info.has_bootstrapping_keys = true;
      if (form > 1 || digits > (u32{1} << 16)) r.fail("malformed key record");
      for (u32 k = 0; k < digits + (form == 1 ? 1 : digits); ++k)
        r.skip("key polynomial");
    }
  };
  switch (h.type) {
    case ObjectType::kGaloisKeys: {
      const auto m = r.small_section(SectionKind::kMeta, kGaloisMetaBytes, "metadata");
      FieldReader f(m);
      key_records(std::min(f.u32_le(), r.sections_left()));
      break;
    }
    case ObjectType::kEvaluationKeys: {
      const auto m = r.small_section(SectionKind::kMeta, kBundleMetaBytes, "metadata");
      FieldReader f(m);
      const u32 parts = f.u32_le();
      const u32 galois = f.u32_le();
      const u32 keys =
          galois + ((parts & kPartRelin) ? 1 : 0) + ((parts & kPartBootstrapping) ? 2 : 0);
      key_records(std::min(keys, r.sections_left()));
      break;
    }
    case ObjectType::kPlaintext:
    case ObjectType::kCiphertext: {
      const std::size_t bytes =
          h.type == ObjectType::kPlaintext ? kPlaintextMetaBytes : kCiphertextMetaBytes;
      const auto m = r.small_section(SectionKind::kMeta, bytes, "metadata");
      FieldReader f(m);
      f.u32_le();
      f.u32_le();
      if (h.type == ObjectType::kCiphertext) {
        f.u32_le();
        f.u32_le();
      }
      info.real_slots = (f.u32_le() & kHintRealSlots) != 0;
      while (r.sections_left() > 0)
        r.skip("polynomial");
      break;
    }
    default:
      while (r.sections_left() > 0)
        r.skip("section");
      break;
  }
  r.finish(options.require_end);
  return info;
}

// ---- buffers -----------------------------------------------------------------------------------

std::vector<std::uint8_t> to_bytes(const ParameterSet& params, const SaveOptions& options) {
  std::vector<std::uint8_t> out;
  VectorStreamBuf buf(out);
  std::ostream os(&buf);
  save(params, os, options);
  return out;
}

template <typename T>
u64 serialized_size(const Context& ctx, const T& object, const SaveOptions& options) {
  return measure(layout(ctx, object, options));
}

template <typename T>
std::vector<std::uint8_t> to_bytes(const Context& ctx, const T& object,
                                   const SaveOptions& options) {
  const Layout l = layout(ctx, object, options);
  std::vector<std::uint8_t> out(measure(l));
  write(std::span<std::uint8_t>(out), options, l);
  return out;
}

template <typename T>
void to_bytes(const Context& ctx, const T& object, std::span<std::uint8_t> out,
              const SaveOptions& options) {
  write(out, options, layout(ctx, object, options));
}

#define THEO_SERIAL_INSTANTIATE(T)                                                                \
  void save(const Context& ctx, const T& object, std::ostream& out, const SaveOptions& options) { \
    write(out, options, layout(ctx, object, options));                                            \
  }                                                                                               \
  template std::vector<std::uint8_t> to_bytes<T>(const Context&, const T&, const SaveOptions&);   \
  template void to_bytes<T>(const Context&, const T&, std::span<std::uint8_t>,                    \
                            const SaveOptions&);                                                  \
  template u64 serialized_size<T>(const Context&, const T&, const SaveOptions&);
THEO_SERIAL_INSTANTIATE(SecretKey)
THEO_SERIAL_INSTANTIATE(PublicKey)
THEO_SERIAL_INSTANTIATE(RelinKey)
THEO_SERIAL_INSTANTIATE(GaloisKeys)
THEO_SERIAL_INSTANTIATE(EvaluationKeysView)
THEO_SERIAL_INSTANTIATE(Plaintext)
THEO_SERIAL_INSTANTIATE(Ciphertext)
#undef THEO_SERIAL_INSTANTIATE

ParameterSet load_parameters(std::span<const std::uint8_t> bytes, const LoadOptions& options) {
  return from_span(bytes, options,
                   [&](std::istream& in, const LoadOptions& o) { return load_parameters(in, o); });
}
// The span loaders read through the stream loaders.
#define THEO_SERIAL_LOAD_SPAN(T, load)                                                             \
  T load(const ContextPtr& ctx, std::span<const std::uint8_t> bytes, const LoadOptions& options) { \
    return from_span(bytes, options,                                                               \
                     [&](std::istream& in, const LoadOptions& o) { return load(ctx, in, o); });    \
  }
#define THEO_SERIAL_LOAD_SPAN_INFO(T, load)                                                      \
  T load(const ContextPtr& ctx, std::span<const std::uint8_t> bytes, const LoadOptions& options, \
         ObjectInfo* info) {                                                                     \
    return from_span(bytes, options, [&](std::istream& in, const LoadOptions& o) {               \
      return load(ctx, in, o, info);                                                             \
    });                                                                                          \
  }
THEO_SERIAL_LOAD_SPAN(SecretKey, load_secret_key)
THEO_SERIAL_LOAD_SPAN(PublicKey, load_public_key)
THEO_SERIAL_LOAD_SPAN(RelinKey, load_relin_key)
THEO_SERIAL_LOAD_SPAN(GaloisKeys, load_galois_keys)
THEO_SERIAL_LOAD_SPAN(EvaluationKeys, load_evaluation_keys)
THEO_SERIAL_LOAD_SPAN_INFO(Plaintext, load_plaintext)
THEO_SERIAL_LOAD_SPAN_INFO(Ciphertext, load_ciphertext)
#undef THEO_SERIAL_LOAD_SPAN
#undef THEO_SERIAL_LOAD_SPAN_INFO

ObjectInfo inspect(std::span<const std::uint8_t> bytes, const LoadOptions& options) {
  return from_span(bytes, options,
                   [&](std::istream& in, const LoadOptions& o) { return inspect(in, o); });
}

std::vector<std::uint8_t> serialize(const Context& ctx, const Ciphertext& ct) {
  return to_bytes(ctx, ct);
}

Ciphertext deserialize_ciphertext(const std::shared_ptr<const Context>& ctx,
                                  const std::vector<std::uint8_t>& bytes) {
  return load_ciphertext(ctx, std::span<const std::uint8_t>(bytes));
}

}  // namespace theo
