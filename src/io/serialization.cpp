// The public functions of the serialization (theo/io/serialization.h), the same steps for every
// type, driven by the type's Format (io/formats.h):
//   save / to_bytes / serialized_size: the format's layout, measured, then written to a stream or
//     into memory of exactly the measured size;
//   load_*: the header and the fingerprint, the format's read (every section checked), the end of
//     the data, the compact flag against the sections, then the object;
//   inspect: the header and the metadata, without a Context.

#include "theo/io/serialization.h"

#include <algorithm>
#include <string>

#include "common/enum_names.h"
#include "io/formats.h"
#include "theo/errors.h"

namespace theo {

using detail::serial::FieldReader;
using detail::serial::Format;
using detail::serial::kFlagSeeded;
using detail::serial::kHeaderBytes;
using detail::serial::Layout;
using detail::serial::Progress;
using detail::serial::Read;
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

std::vector<std::uint8_t> bytes_of(const Layout& layout, const SaveOptions& options) {
  std::vector<std::uint8_t> out(measure(layout));
  write(std::span<std::uint8_t>(out), options, layout);
  return out;
}

// Loads from a buffer through the stream loader `f`, refusing trailing bytes.
template <typename F>
auto from_span(std::span<const std::uint8_t> bytes, const LoadOptions& options, F&& f) {
  SpanStreamBuf buf(bytes);
  std::istream in(&buf);
  LoadOptions o = options;
  o.require_end = true;
  return f(in, o);
}

template <typename Saved, typename Loaded>
Loaded load_object(const Format<Saved, Loaded>& format, const ContextPtr& ctx_ptr, std::istream& in,
                   const LoadOptions& options, ObjectInfo* info) {
  if (!ctx_ptr) throw ContextError(std::string(format.loader) + ": the Context is null");
  const Context& ctx = *ctx_ptr;
  Reader r(in, options, format.loader);
  r.read_header(format.type);
  r.require_fingerprint(ctx);
  Read<Loaded> read = format.read(r, ctx, options);
  r.finish(options.require_end);
  detail::serial::require_seeded_flag(r, read.seeded);
  if (info) {
    *info = ObjectInfo{};
    info->type = format.type;
    info->version = r.header().version;
    info->compact = read.seeded;
    info->fingerprint = r.header().fingerprint;
    info->total_bytes = kHeaderBytes + r.header().payload_bytes;
    info->real_slots = read.real_slots;
  }
  return read.make();
}

}  // namespace

namespace detail::serial {

void require_seeded_flag(Reader& r, bool seeded) {
  const bool flag = (r.header().flags & kFlagSeeded) != 0;
  if (flag != seeded) {
    r.fail(std::string("the header's compact flag is ") + (flag ? "set" : "clear") +
           " but the object " + (seeded ? "has" : "has no") + " seeded polynomials");
  }
}

}  // namespace detail::serial

std::string object_type_name(ObjectType type) {
  if (const char* name = find_enum_name(kObjectTypeNames, type)) return name;
  return "object type " + std::to_string(static_cast<u32>(type));
}

Fingerprint context_fingerprint(const Context& ctx) {
  return parameter_fingerprint(ctx.params());
}

// ---- objects of a Context ----------------------------------------------------------------------

template <typename T>
u64 serialized_size(const Context& ctx, const T& object, const SaveOptions& options) {
  return measure(format_of(object).layout(ctx, object, options));
}

template <typename T>
std::vector<std::uint8_t> to_bytes(const Context& ctx, const T& object,
                                   const SaveOptions& options) {
  return bytes_of(format_of(object).layout(ctx, object, options), options);
}

template <typename T>
void to_bytes(const Context& ctx, const T& object, std::span<std::uint8_t> out,
              const SaveOptions& options) {
  write(out, options, format_of(object).layout(ctx, object, options));
}

// One line per type: its format (format_of, which the templates above find by the object's type),
// save, the templates for the type, and the loaders from a stream and from a buffer.
#define THEO_IO_WRITERS(Saved, format)                                                 \
  [[maybe_unused]] static const auto& format_of(const Saved&) {                        \
    return format;                                                                     \
  }                                                                                    \
  void save(const Context& ctx, const Saved& object, std::ostream& out,                \
            const SaveOptions& options) {                                              \
    write(out, options, format.layout(ctx, object, options));                          \
  }                                                                                    \
  template std::vector<std::uint8_t> to_bytes<Saved>(const Context&, const Saved&,     \
                                                     const SaveOptions&);              \
  template void to_bytes<Saved>(const Context&, const Saved&, std::span<std::uint8_t>, \
                                const SaveOptions&);                                   \
  template u64 serialized_size<Saved>(const Context&, const Saved&, const SaveOptions&);
#define THEO_IO_LOADERS(Loaded, load, format)                                        \
  Loaded load(const ContextPtr& ctx, std::istream& in, const LoadOptions& options) { \
    return load_object(format, ctx, in, options, nullptr);                           \
  }                                                                                  \
  Loaded load(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,            \
              const LoadOptions& options) {                                          \
    return from_span(bytes, options, [&](std::istream& in, const LoadOptions& o) {   \
      return load_object(format, ctx, in, o, nullptr);                               \
    });                                                                              \
  }
// Plaintexts and ciphertexts: the loaders also say what the data's metadata holds (ObjectInfo).
#define THEO_IO_LOADERS_INFO(Loaded, load, format)                                 \
  Loaded load(const ContextPtr& ctx, std::istream& in, const LoadOptions& options, \
              ObjectInfo* info) {                                                  \
    return load_object(format, ctx, in, options, info);                            \
  }                                                                                \
  Loaded load(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,          \
              const LoadOptions& options, ObjectInfo* info) {                      \
    return from_span(bytes, options, [&](std::istream& in, const LoadOptions& o) { \
      return load_object(format, ctx, in, o, info);                                \
    });                                                                            \
  }

using detail::serial::kCiphertextFormat;
using detail::serial::kEvaluationKeysFormat;
using detail::serial::kGaloisKeysFormat;
using detail::serial::kPlaintextFormat;
using detail::serial::kPublicKeyFormat;
using detail::serial::kRelinKeyFormat;
using detail::serial::kSecretKeyFormat;

THEO_IO_WRITERS(SecretKey, kSecretKeyFormat)
THEO_IO_WRITERS(PublicKey, kPublicKeyFormat)
THEO_IO_WRITERS(RelinKey, kRelinKeyFormat)
THEO_IO_WRITERS(GaloisKeys, kGaloisKeysFormat)
THEO_IO_WRITERS(EvaluationKeysView, kEvaluationKeysFormat)
THEO_IO_WRITERS(Plaintext, kPlaintextFormat)
THEO_IO_WRITERS(Ciphertext, kCiphertextFormat)
THEO_IO_LOADERS(SecretKey, load_secret_key, kSecretKeyFormat)
THEO_IO_LOADERS(PublicKey, load_public_key, kPublicKeyFormat)
THEO_IO_LOADERS(RelinKey, load_relin_key, kRelinKeyFormat)
THEO_IO_LOADERS(GaloisKeys, load_galois_keys, kGaloisKeysFormat)
THEO_IO_LOADERS(EvaluationKeys, load_evaluation_keys, kEvaluationKeysFormat)
THEO_IO_LOADERS_INFO(Plaintext, load_plaintext, kPlaintextFormat)
THEO_IO_LOADERS_INFO(Ciphertext, load_ciphertext, kCiphertextFormat)
#undef THEO_IO_WRITERS
#undef THEO_IO_LOADERS
#undef THEO_IO_LOADERS_INFO

// ---- parameter sets ----------------------------------------------------------------------------

void save(const ParameterSet& params, std::ostream& out, const SaveOptions& options) {
  write(out, options, detail::serial::parameters_layout(params));
}

std::vector<std::uint8_t> to_bytes(const ParameterSet& params, const SaveOptions& options) {
  std::vector<std::uint8_t> out;
  VectorStreamBuf buf(out);
  std::ostream os(&buf);
  save(params, os, options);
  return out;
}

ParameterSet load_parameters(std::istream& in, const LoadOptions& options) {
  Reader r(in, options, "load_parameters");
  return detail::serial::read_parameters(r, options);
}

ParameterSet load_parameters(std::span<const std::uint8_t> bytes, const LoadOptions& options) {
  return from_span(bytes, options,
                   [&](std::istream& in, const LoadOptions& o) { return load_parameters(in, o); });
}

// ---- ciphertexts in host memory ----------------------------------------------------------------

u64 serialized_size(const Context& ctx, const HostCiphertext& host) {
  return measure(detail::serial::host_ciphertext_layout(ctx, host));
}

void to_bytes(const Context& ctx, const HostCiphertext& host, std::span<std::uint8_t> out,
              const SaveOptions& options) {
  write(out, options, detail::serial::host_ciphertext_layout(ctx, host));
}

std::vector<std::uint8_t> to_bytes(const Context& ctx, const HostCiphertext& host,
                                   const SaveOptions& options) {
  return bytes_of(detail::serial::host_ciphertext_layout(ctx, host), options);
}

HostCiphertext load_host_ciphertext(const Context& ctx, std::span<const std::uint8_t> bytes,
                                    const LoadOptions& options) {
  SpanStreamBuf buf(bytes);
  std::istream in(&buf);
  Reader r(in, options, "load_ciphertext");
  return detail::serial::read_host_ciphertext(r, ctx);
}

// ---- inspect -----------------------------------------------------------------------------------

ObjectInfo inspect(std::istream& in, const LoadOptions& options) {
  using detail::serial::KeyRole;
  using detail::serial::kHintRealSlots;
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
      const auto b =
          r.small_section(SectionKind::kKeyMeta, detail::serial::kKeyMetaBytes, "key record");
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
      const auto m =
          r.small_section(SectionKind::kMeta, detail::serial::kGaloisMetaBytes, "metadata");
      FieldReader f(m);
      key_records(std::min(f.u32_le(), r.sections_left()));
      break;
    }
    case ObjectType::kEvaluationKeys: {
      const auto m =
          r.small_section(SectionKind::kMeta, detail::serial::kBundleMetaBytes, "metadata");
      FieldReader f(m);
      const u32 parts = f.u32_le();
      const u32 galois = f.u32_le();
      const u32 keys = galois + ((parts & detail::serial::kPartRelin) ? 1 : 0) +
                       ((parts & detail::serial::kPartBootstrapping) ? 2 : 0);
      key_records(std::min(keys, r.sections_left()));
      break;
    }
    case ObjectType::kPlaintext:
    case ObjectType::kCiphertext: {
      const bool ciphertext = h.type == ObjectType::kCiphertext;
      const auto m = r.small_section(
          SectionKind::kMeta,
          ciphertext ? detail::serial::kCiphertextMetaBytes : detail::serial::kPlaintextMetaBytes,
          "metadata");
      FieldReader f(m);
      // level, slots, [size, c1 form,] then the hints.
      for (int skip = ciphertext ? 4 : 2; skip > 0; --skip)
        f.u32_le();
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

ObjectInfo inspect(std::span<const std::uint8_t> bytes, const LoadOptions& options) {
  return from_span(bytes, options,
                   [&](std::istream& in, const LoadOptions& o) { return inspect(in, o); });
}

// ---- shorthands --------------------------------------------------------------------------------

std::vector<std::uint8_t> serialize(const Context& ctx, const Ciphertext& ct) {
  return to_bytes(ctx, ct);
}

Ciphertext deserialize_ciphertext(const std::shared_ptr<const Context>& ctx,
                                  const std::vector<std::uint8_t>& bytes) {
  return load_ciphertext(ctx, std::span<const std::uint8_t>(bytes));
}

}  // namespace theo
