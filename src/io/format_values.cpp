// The formats of values (io/formats.h): parameter sets, plaintexts and ciphertexts (on the device
// or in host memory), the latter two sharing one metadata layout.

#include <cmath>
#include <string>

#include "ckks/checks.h"
#include "io/formats.h"
#include "theo/errors.h"

namespace theo::detail::serial {

namespace {

// A parameter file is a few kilobytes; the limit keeps a hostile one from costing much.
constexpr u64 kMaxParameterText = u64{1} << 20;

// ---- the metadata of plaintexts and ciphertexts ------------------------------------------------
// {level, slots, [size, c1 form,] hints, 0, scale hi, scale lo}: size and c1 form for ciphertexts
// only. The scale is a long double stored as two doubles, hi + lo.

struct ValueMeta {
  u32 level = 0;
  u32 slots = 0;
  u32 size = 0;         // ciphertexts: polynomials (2 or 3)
  bool seeded = false;  // ciphertexts: c1 stored as its seed
  u32 hints = 0;
  long double scale = 0;
};

void emit_value_meta(Writer& w, const ValueMeta& m, bool ciphertext) {
  FieldWriter f;
  f.u32_le(m.level);
  f.u32_le(m.slots);
  if (ciphertext) {
    f.u32_le(m.size);
    f.u32_le(static_cast<u32>(m.seeded ? AForm::kSeeded : AForm::kExpanded));
  }
  f.u32_le(m.hints);
  f.u32_le(0);
  const double hi = static_cast<double>(m.scale);
  f.f64(hi);
  f.f64(static_cast<double>(m.scale - hi));
  w.section(SectionKind::kMeta, f.bytes());
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

// The metadata section, checked: the level exists, the slots are a power of two up to N/2, no
// unknown hint, reserved 0, a ciphertext's size 2 or 3 (a seeded c1 only with 2), a canonical
// positive scale.
ValueMeta read_value_meta(Reader& r, const Context& ctx, bool ciphertext) {
  const auto meta = r.small_section(
      SectionKind::kMeta, ciphertext ? kCiphertextMetaBytes : kPlaintextMetaBytes, "metadata");
  FieldReader f(meta);
  ValueMeta m;
  m.level = f.u32_le();
  m.slots = f.u32_le();
  u32 form = 0;
  if (ciphertext) {
    m.size = f.u32_le();
    form = f.u32_le();
  }
  m.hints = f.u32_le();
  const u32 reserved = f.u32_le();
  const double hi = f.f64();
  const double lo = f.f64();
  if (m.level > ctx.max_level()) {
    r.fail("level " + std::to_string(m.level) + " does not exist (this Context's levels are 0.." +
           std::to_string(ctx.max_level()) + ")");
  }
  if (m.slots == 0 || m.slots > ctx.max_slots() || (m.slots & (m.slots - 1)) != 0) {
    r.fail("slot count " + std::to_string(m.slots) +
           " is not a power of two in [1, N/2 = " + std::to_string(ctx.max_slots()) + "]");
  }
  if ((m.hints & ~kHintRealSlots) != 0) r.fail("unknown hint bits " + std::to_string(m.hints));
  if (reserved != 0) r.fail("reserved metadata field is not 0");
  if (ciphertext) {
    if (m.size != 2 && m.size != 3) {
      r.fail("ciphertext size " + std::to_string(m.size) + " is not 2 or 3 polynomials");
    }
    if (form > static_cast<u32>(AForm::kSeeded)) {
      r.fail("unknown form " + std::to_string(form) + " of c1 (0: words, 1: seed)");
    }
    m.seeded = form == static_cast<u32>(AForm::kSeeded);
    if (m.seeded && m.size != 2) r.fail("only a 2-polynomial ciphertext can have a seeded c1");
  }
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

// ---- plaintext -------------------------------------------------------------------------------

Layout plaintext_layout(const Context& ctx, const Plaintext& pt, const SaveOptions& options) {
  detail::require_usable(ctx, pt, "save: plaintext");
  const ValueMeta m{pt.level(), pt.slots(), 0, false, options.real_slots ? kHintRealSlots : 0u,
                    pt.scale()};
  return {ObjectType::kPlaintext, context_fingerprint(ctx), "save plaintext",
          [&ctx, &pt, m](Writer& w, bool&) {
            emit_value_meta(w, m, false);
            w.poly(ctx, pt.poly());
          }};
}

Read<Plaintext> read_plaintext(Reader& r, const Context& ctx, const LoadOptions&) {
  const ValueMeta m = read_value_meta(r, ctx, false);
  auto poly = std::make_shared<RnsPoly>(r.poly(ctx, ctx.level(m.level).q_basis, "plaintext"));
  return {false, (m.hints & kHintRealSlots) != 0, [&ctx, m, poly] {
            return Plaintext(ctx.id(), m.level, m.scale, m.slots, std::move(*poly));
          }};
}

// ---- ciphertext ------------------------------------------------------------------------------

Layout ciphertext_layout(const Context& ctx, const Ciphertext& ct, const SaveOptions& options) {
  detail::require_usable(ctx, ct, "save: ciphertext");
  const bool use_seed = options.compact && ct.is_seeded() && ct.size() == 2;
  const ValueMeta m{
      ct.level(), ct.slots(), ct.size(), use_seed, options.real_slots ? kHintRealSlots : 0u,
      ct.scale()};
  return {ObjectType::kCiphertext, context_fingerprint(ctx), "save ciphertext",
          [&ctx, &ct, m](Writer& w, bool& seeded) {
            emit_value_meta(w, m, true);
            w.poly(ctx, ct.poly(0));
            if (m.seeded) {
              w.seed(UniformSeed{*ct.seed(), ExpansionScheme::kChaCha20Wide});
              seeded = true;
            } else {
              for (u32 i = 1; i < ct.size(); ++i)
                w.poly(ctx, ct.poly(i));
            }
          }};
}

Read<Ciphertext> read_ciphertext(Reader& r, const Context& ctx, const LoadOptions&) {
  const ValueMeta m = read_value_meta(r, ctx, true);
  const Basis& basis = ctx.level(m.level).q_basis;
  auto polys = std::make_shared<std::vector<RnsPoly>>();
  polys->push_back(r.poly(ctx, basis, "ciphertext c0"));
  std::optional<UniformSeed> seed;
  if (m.seeded) {
    seed = read_ciphertext_seed(r);
  } else {
    for (u32 i = 1; i < m.size; ++i)
      polys->push_back(r.poly(ctx, basis, ciphertext_poly_name(i)));
  }
  return {m.seeded, (m.hints & kHintRealSlots) != 0, [&ctx, &basis, m, polys, seed] {
            if (seed) {
              polys->push_back(ctx.backend().make_poly(basis));
              expand_uniform(ctx, *seed, 0, polys->back().ref());
            }
            Ciphertext ct(ctx.id(), m.level, m.scale, m.slots, std::move(*polys));
            if (seed) ct.set_seed(seed->seed);
            return ct;
          }};
}

// ---- host ciphertexts ------------------------------------------------------------------------

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

}  // namespace

const Format<Plaintext> kPlaintextFormat{ObjectType::kPlaintext, "load_plaintext", plaintext_layout,
                                         read_plaintext};
const Format<Ciphertext> kCiphertextFormat{ObjectType::kCiphertext, "load_ciphertext",
                                           ciphertext_layout, read_ciphertext};

// ---- parameters ------------------------------------------------------------------------------

Layout parameters_layout(const ParameterSet& params) {
  validate(params);
  return {ObjectType::kParameters, parameter_fingerprint(params), "save parameters",
          [json = to_json(params)](Writer& w, bool&) {
            w.section(SectionKind::kText,
                      std::span(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()));
          }};
}

ParameterSet read_parameters(Reader& r, const LoadOptions& options) {
  r.read_header(ObjectType::kParameters);
  // The text section's length is the one size no Context fixes: it fills the payload, bounded.
  const u64 bytes = r.payload_left() >= kSectionOverhead ? r.payload_left() - kSectionOverhead : 0;
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

// ---- host ciphertexts ------------------------------------------------------------------------

Layout host_ciphertext_layout(const Context& ctx, const HostCiphertext& h) {
  require_host_ciphertext(ctx, h, "to_bytes: host ciphertext");
  const ValueMeta m{
      h.level, h.slots, h.size, h.c1_seed.has_value(), h.real_slots ? kHintRealSlots : 0u, h.scale};
  return {ObjectType::kCiphertext, h.fingerprint, "save ciphertext",
          [&ctx, &h, m](Writer& w, bool& seeded) {
            emit_value_meta(w, m, true);
            const std::size_t per = poly_words(ctx, h.level);
            const std::size_t stored = h.c1_seed ? 1 : h.size;
            for (std::size_t i = 0; i < stored; ++i) {
              w.words({h.words.data() + i * per, per});
              if (i == 0 && h.c1_seed) {
                w.seed(*h.c1_seed);
                seeded = true;
              }
            }
          }};
}

HostCiphertext read_host_ciphertext(Reader& r, const Context& ctx) {
  r.read_header(ObjectType::kCiphertext);
  r.require_fingerprint(ctx);
  const ValueMeta m = read_value_meta(r, ctx, true);
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
  h.words = staging_buffer(ctx, stored * per);
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

}  // namespace theo::detail::serial

namespace theo {

using detail::serial::poly_words;
using detail::serial::require_host_ciphertext;

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
  if (!ctx_ptr) throw ContextError("upload: the Context is null");
  const Context& ctx = *ctx_ptr;
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

}  // namespace theo
