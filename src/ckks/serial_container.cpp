// The serialization container (ckks/serial_container.h, docs/serialization.md).

#include "ckks/serial_container.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "ckks/serial_pool.h"
#include "common/enum_names.h"
#include "theo/errors.h"

namespace theo::detail::serial {

namespace {

// Bodies pass through this much memory at a time (hashing, and skipping unseekable streams).
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

void store_u32(std::uint8_t* p, u32 v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void store_u64(std::uint8_t* p, u64 v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
u32 load_u32(const std::uint8_t* p) {
  u32 v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
u64 load_u64(const std::uint8_t* p) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

void ensure_sodium() {
  static const int rc = sodium_init();
  if (rc < 0) throw Error("libsodium: sodium_init() failed");
}

std::array<std::uint8_t, kChecksumBytes> header_checksum(const std::uint8_t* fields) {
  Checksum sum;
  sum.update(fields, kHeaderFieldBytes);
  return sum.final();
}

std::string size_string(u64 bytes) {
  return std::to_string(bytes) + " bytes";
}

constexpr EnumName<SectionKind> kSectionKindNames[] = {
    {SectionKind::kMeta, "metadata"},   {SectionKind::kKeyMeta, "key record"},
    {SectionKind::kPoly, "polynomial"}, {SectionKind::kSeed, "seed"},
    {SectionKind::kText, "text"},       {SectionKind::kTernary, "ternary coefficients"},
};

}  // namespace

std::string section_kind_name(u32 kind) {
  if (const char* name = find_enum_name(kSectionKindNames, static_cast<SectionKind>(kind)))
    return name;
  return "unknown section kind " + std::to_string(kind);
}

// ---- fields ------------------------------------------------------------------------------------

void FieldWriter::u32_le(u32 v) {
  std::uint8_t b[4];
  store_u32(b, v);
  out_.insert(out_.end(), b, b + 4);
}
void FieldWriter::u64_le(u64 v) {
  std::uint8_t b[8];
  store_u64(b, v);
  out_.insert(out_.end(), b, b + 8);
}
void FieldWriter::f64(double d) {
  u64 v = 0;
  std::memcpy(&v, &d, sizeof v);
  u64_le(v);
}

u32 FieldReader::u32_le() {
  if (pos_ + 4 > bytes_.size()) throw Error("FieldReader: read past the metadata");
  const u32 v = load_u32(bytes_.data() + pos_);
  pos_ += 4;
  return v;
}
u64 FieldReader::u64_le() {
  if (pos_ + 8 > bytes_.size()) throw Error("FieldReader: read past the metadata");
  const u64 v = load_u64(bytes_.data() + pos_);
  pos_ += 8;
  return v;
}
double FieldReader::f64() {
  const u64 v = u64_le();
  double d = 0;
  std::memcpy(&d, &v, sizeof d);
  return d;
}

// ---- checksum ----------------------------------------------------------------------------------

Checksum::Checksum(std::span<const std::uint8_t> key) {
  ensure_sodium();
  crypto_generichash_init(&state_, key.empty() ? nullptr : key.data(), key.size(), kChecksumBytes);
}
void Checksum::update(const void* data, std::size_t bytes) {
  crypto_generichash_update(&state_, static_cast<const unsigned char*>(data), bytes);
}
std::array<std::uint8_t, kChecksumBytes> Checksum::final() {
  std::array<std::uint8_t, kChecksumBytes> out{};
  crypto_generichash_final(&state_, out.data(), out.size());
  return out;
}

// ---- progress ----------------------------------------------------------------------------------

Progress::Progress(const char* label, u64 total, bool bar, const ProgressCallback& callback)
    : total_(total), callback_(callback ? &callback : nullptr) {
  if (!callback_ && bar) bar_.emplace(label, total, true, ProgressBar::Unit::kBytes);
}

void Progress::advance(u64 bytes) {
  done_ += bytes;
  if (callback_) (*callback_)(std::min(done_, total_), total_);
  if (bar_) bar_->step(bytes);
}

// ---- tags --------------------------------------------------------------------------------------

Tag section_tag(u32 version, const Tag& chain, u32 index, const std::uint8_t* section_header,
                std::span<const std::uint8_t> body, std::uint8_t* copy_to, unsigned threads) {
  Checksum sum(chain);
  std::uint8_t idx[4];
  store_u32(idx, index);
  sum.update(idx, 4);
  sum.update(section_header, kSectionHeaderBytes);
  if (version == 1) {
    sum.update(body.data(), body.size());
    if (copy_to != nullptr && !body.empty()) std::memcpy(copy_to, body.data(), body.size());
    return sum.final();
  }
  ensure_sodium();
  const std::size_t pieces = (body.size() + kPieceBytes - 1) / kPieceBytes;
  // Small sections (metadata, seeds): one piece, hashed here.
  std::uint8_t one[kPieceDigestBytes];
  std::vector<std::uint8_t> many(pieces > 1 ? pieces * kPieceDigestBytes : 0);
  std::uint8_t* digests = pieces > 1 ? many.data() : one;
  static const std::array<std::uint8_t, crypto_generichash_blake2b_SALTBYTES> salt{};
  const auto piece = [&](std::size_t i) {
    const std::size_t at = i * kPieceBytes;
    const std::size_t len = std::min(kPieceBytes, body.size() - at);
    if (copy_to != nullptr) std::memcpy(copy_to + at, body.data() + at, len);
    crypto_generichash_blake2b_salt_personal(
        digests + i * kPieceDigestBytes, kPieceDigestBytes, body.data() + at, len, nullptr, 0,
        salt.data(), reinterpret_cast<const unsigned char*>(kPiecePersonal));
  };
  if (pieces == 1) {
    piece(0);
  } else {
    parallel_for(pieces, threads, piece);
  }
  sum.update(digests, pieces * kPieceDigestBytes);
  return sum.final();
}

Buffer staging_buffer(const Context& ctx, std::size_t words) {
  return Buffer(ctx.backend().host_staging_allocator(), words);
}

void check_words(const Context& ctx, const Basis& basis, const u32* words, unsigned threads,
                 const std::function<void(const std::string&)>& fail, const char* what) {
  const u32 n = ctx.n();
  std::vector<std::uint8_t> bad(basis.size, 0);
  parallel_for(basis.size, threads, [&](std::size_t l) {
    const u32 q = ctx.prime(basis[static_cast<u32>(l)]);
    const u32* row = words + l * n;
    // Branch-free, so that it vectorizes: a pass at memory speed, the position only on failure.
    u32 any = 0;
    for (u32 i = 0; i < n; ++i)
      any |= static_cast<u32>(row[i] >= q);
    bad[l] = static_cast<std::uint8_t>(any);
  });
  for (u32 l = 0; l < basis.size; ++l) {
    if (!bad[l]) continue;
    const u32 q = ctx.prime(basis[l]);
    const u32* row = words + static_cast<std::size_t>(l) * n;
    u32 i = 0;
    while (row[i] < q)
      ++i;
    fail(std::string(what) + ": word " + std::to_string(i) + " of limb " + std::to_string(l) +
         " is " + std::to_string(row[i]) + ", not below its prime " + std::to_string(q));
  }
}

// ---- writer ------------------------------------------------------------------------------------

Writer::Writer(std::ostream& out, ObjectType type, u32 flags, const Fingerprint& fingerprint,
               u64 payload_bytes, u32 sections, Progress* progress, unsigned threads)
    : out_(&out),
      progress_(progress),
      threads_(threads),
      declared_bytes_(payload_bytes),
      declared_sections_(sections) {
  header(type, flags, fingerprint);
}

Writer::Writer(std::span<std::uint8_t> out, ObjectType type, u32 flags,
               const Fingerprint& fingerprint, u64 payload_bytes, u32 sections, Progress* progress,
               unsigned threads)
    : mem_(out),
      progress_(progress),
      threads_(threads),
      declared_bytes_(payload_bytes),
      declared_sections_(sections) {
  if (out.size() != kHeaderBytes + payload_bytes) {
    throw Error("serialization: the output buffer holds " + size_string(out.size()) +
                ", the object takes " + size_string(kHeaderBytes + payload_bytes));
  }
  header(type, flags, fingerprint);
}

void Writer::header(ObjectType type, u32 flags, const Fingerprint& fingerprint) {
  std::uint8_t h[kHeaderBytes] = {};
  std::memcpy(h, kMagic.data(), kMagic.size());
  store_u32(h + 8, kContainerVersion);
  store_u32(h + 12, static_cast<u32>(type));
  store_u32(h + 16, flags);
  store_u32(h + 20, declared_sections_);
  store_u64(h + 24, declared_bytes_);
  std::memcpy(h + 32, fingerprint.data(), fingerprint.size());
  header_sum_ = header_checksum(h);
  chain_ = header_sum_;
  std::memcpy(h + kHeaderFieldBytes, header_sum_.data(), kChecksumBytes);
  put(h, sizeof h);
  if (progress_) progress_->advance(kHeaderBytes);
}

void Writer::put(const void* data, std::size_t bytes) {
  if (out_ == nullptr) {
    if (bytes > mem_.size() - pos_) {
      throw Error("serialization: the object changed between measuring and writing it");
    }
    if (bytes > 0) std::memcpy(mem_.data() + pos_, data, bytes);
    pos_ += bytes;
    return;
  }
  out_->write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!*out_) {
    throw Error("serialization: writing " + size_string(bytes) +
                " to the output stream failed (disk full, closed file or pipe?)");
  }
}

bool Writer::count(u64 body_bytes) {
  bytes_ += kSectionOverhead + body_bytes;
  ++sections_;
  if (measuring()) return false;
  if (sections_ > declared_sections_ || bytes_ > declared_bytes_) {
    throw Error("serialization: the object changed between measuring and writing it");
  }
  return true;
}

std::uint8_t* Writer::in_place(u64 bytes) {
  if (out_ != nullptr || std::endian::native != std::endian::little) return nullptr;
  if (kSectionOverhead + bytes > mem_.size() - pos_) {
    throw Error("serialization: the object changed between measuring and writing it");
  }
  std::uint8_t* p = mem_.data() + pos_ + kSectionHeaderBytes;
  return reinterpret_cast<std::uintptr_t>(p) % alignof(u32) == 0 ? p : nullptr;
}

void Writer::emit(SectionKind kind, std::span<const std::uint8_t> body, bool body_in_place) {
  std::uint8_t h[kSectionHeaderBytes] = {};
  store_u32(h, static_cast<u32>(kind));
  store_u64(h + 8, body.size());
  // Into memory, the body is copied on the hashing threads.
  std::uint8_t* copy_to = nullptr;
  if (!body_in_place && out_ == nullptr) copy_to = mem_.data() + pos_ + kSectionHeaderBytes;
  const Tag tag = section_tag(kContainerVersion, chain_, sections_ - 1, h, body, copy_to, threads_);
  put(h, sizeof h);
  if (out_ != nullptr) {
    put(body.data(), body.size());
  } else {
    pos_ += body.size();  // in place, or copied above (bounds checked by in_place / count)
  }
  put(tag.data(), tag.size());
  chain_ = tag;
  if (progress_) progress_->advance(kSectionOverhead + body.size());
}

void Writer::section(SectionKind kind, std::span<const std::uint8_t> body_bytes) {
  if (!count(body_bytes.size())) return;
  if (out_ == nullptr && kSectionOverhead + body_bytes.size() > mem_.size() - pos_) {
    throw Error("serialization: the object changed between measuring and writing it");
  }
  emit(kind, body_bytes, false);
}

void Writer::poly(const Context& ctx, const RnsPoly& poly) {
  const u64 bytes = static_cast<u64>(poly.words()) * 4;
  if (!count(bytes)) return;
  if (std::uint8_t* dst = in_place(bytes)) {
    ctx.backend().download(poly.cref(), reinterpret_cast<u32*>(dst));
    emit(SectionKind::kPoly, {dst, static_cast<std::size_t>(bytes)}, true);
    return;
  }
  Buffer host = staging_buffer(ctx, poly.words());
  ctx.backend().download(poly.cref(), host.data());
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < host.words(); ++i) {
      std::uint8_t le[4];
      store_u32(le, host.data()[i]);
      std::memcpy(host.data() + i, le, 4);
    }
  }
  emit(SectionKind::kPoly,
       {reinterpret_cast<const std::uint8_t*>(host.data()), static_cast<std::size_t>(bytes)},
       false);
}

void Writer::words(std::span<const u32> words) {
  const u64 bytes = static_cast<u64>(words.size()) * 4;
  if (!count(bytes)) return;
  if constexpr (std::endian::native == std::endian::little) {
    if (out_ == nullptr && kSectionOverhead + bytes > mem_.size() - pos_) {
      throw Error("serialization: the object changed between measuring and writing it");
    }
    emit(SectionKind::kPoly,
         {reinterpret_cast<const std::uint8_t*>(words.data()), static_cast<std::size_t>(bytes)},
         false);
  } else {
    std::vector<std::uint8_t> le(bytes);
    for (std::size_t i = 0; i < words.size(); ++i)
      store_u32(le.data() + 4 * i, words[i]);
    emit(SectionKind::kPoly, le, false);
  }
}

void Writer::seed(const UniformSeed& seed) {
  std::uint8_t b[kSeedBodyBytes] = {};
  store_u32(b, static_cast<u32>(seed.scheme));
  std::memcpy(b + 8, seed.seed.data(), seed.seed.size());
  section(SectionKind::kSeed, b);
}

void Writer::finish() {
  if (measuring()) return;
  if (sections_ != declared_sections_ || bytes_ != declared_bytes_) {
    throw Error("serialization: the object changed between measuring and writing it");
  }
  if (out_ == nullptr) {
    if (pos_ != mem_.size()) {
      throw Error("serialization: the object changed between measuring and writing it");
    }
    return;
  }
  out_->flush();
  if (!*out_) throw Error("serialization: flushing the output stream failed");
}

// ---- reader ------------------------------------------------------------------------------------

Reader::Reader(std::istream& in, const LoadOptions& options, std::string who)
    : in_(in),
      span_(dynamic_cast<SpanStreamBuf*>(in.rdbuf())),
      options_(options),
      who_(std::move(who)) {}

void Reader::fail(const std::string& msg) const {
  throw ParameterError(who_ + ": " + msg);
}

void Reader::read_exact(void* dst, std::size_t bytes, const char* what) {
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (got != bytes) {
    fail(std::string("data truncated: the ") + what + " needs " + size_string(bytes) +
         " more, the input ends after " + std::to_string(got));
  }
}

std::optional<u64> Reader::stream_bytes_left() {
  if (span_ != nullptr) return span_->rest().size();
  const auto here = in_.tellg();
  if (here == std::istream::pos_type(-1)) {
    in_.clear();
    return std::nullopt;
  }
  in_.seekg(0, std::ios::end);
  const auto end = in_.tellg();
  in_.seekg(here);
  if (end == std::istream::pos_type(-1) || !in_ || end < here) {
    in_.clear();
    in_.seekg(here);
    return std::nullopt;
  }
  return static_cast<u64>(end - here);
}

const Header& Reader::read_header(std::optional<ObjectType> expected) {
  std::uint8_t h[kHeaderBytes];
  in_.read(reinterpret_cast<char*>(h), kMagic.size());
  if (static_cast<std::size_t>(in_.gcount()) != kMagic.size()) {
    fail("data truncated: " + std::to_string(in_.gcount()) +
         " bytes, shorter than the 8-byte magic of a theodosian object");
  }
  if (std::memcmp(h, kMagic.data(), kMagic.size()) != 0) {
    if (std::memcmp(h, "THEOCTX", 7) == 0) {
      fail(std::string("this is a ciphertext in the format of an older theodosian (THEOCTX") +
           static_cast<char>(h[7]) +
           "), which had no checksum; re-encrypt or re-serialize it with this version");
    }
    std::size_t i = 0;
    while (i < kMagic.size() && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
      ++i;
    if (i < kMagic.size() && h[i] == '{') {
      fail(
          "this looks like a JSON text (a parameter file?), not a theodosian binary object; "
          "read parameter files with load_parameter_file / Parameters.from_file");
    }
    fail("not a theodosian serialized object (bad magic)");
  }
  read_exact(h + kMagic.size(), kHeaderBytes - kMagic.size(), "header");
  std::memcpy(header_sum_.data(), h + kHeaderFieldBytes, kChecksumBytes);
  chain_ = header_sum_;
  if (options_.verify_integrity && header_checksum(h) != header_sum_) {
    fail("header checksum mismatch: the header is corrupted");
  }
  header_.version = load_u32(h + 8);
  const u32 type = load_u32(h + 12);
  header_.flags = load_u32(h + 16);
  header_.sections = load_u32(h + 20);
  header_.payload_bytes = load_u64(h + 24);
  std::memcpy(header_.fingerprint.data(), h + 32, header_.fingerprint.size());
  if (header_.version < kOldestContainerVersion || header_.version > kContainerVersion) {
    fail("container version " + std::to_string(header_.version) +
         " is not supported by this build (it reads versions " +
         std::to_string(kOldestContainerVersion) + " to " + std::to_string(kContainerVersion) +
         ")" + (header_.version > kContainerVersion ? "; a newer theodosian wrote it" : ""));
  }
  if (type < static_cast<u32>(ObjectType::kParameters) ||
      type > static_cast<u32>(ObjectType::kCiphertext)) {
    fail("unknown object type " + std::to_string(type));
  }
  header_.type = static_cast<ObjectType>(type);
  if (expected && header_.type != *expected) {
    fail("the data holds " + object_type_name(header_.type) + ", not " +
         object_type_name(*expected));
  }
  if ((header_.flags & ~kFlagSeeded) != 0) {
    fail("unknown header flags 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%x", header_.flags);
      return std::string(b);
    }());
  }
  if (header_.sections == 0) fail("the header declares no sections");
  if (header_.payload_bytes > options_.max_bytes) {
    fail("the data declares " + size_string(header_.payload_bytes + kHeaderBytes) +
         ", more than the limit of " + size_string(options_.max_bytes) +
         " (LoadOptions::max_bytes / max_bytes=)");
  }
  if (header_.payload_bytes / kSectionOverhead < header_.sections) {
    fail("the header declares " + std::to_string(header_.sections) + " sections in " +
         size_string(header_.payload_bytes) + ", too few bytes for them");
  }
  if (const auto left = stream_bytes_left(); left && *left < header_.payload_bytes) {
    fail("data truncated: the header declares a payload of " + size_string(header_.payload_bytes) +
         " but only " + size_string(*left) + " follow it");
  }
  if (options_.on_progress || options_.progress) {
    progress_.emplace("load", header_.payload_bytes + kHeaderBytes, options_.progress,
                      options_.on_progress);
    progress_->advance(kHeaderBytes);
  }
  return header_;
}

void Reader::require_fingerprint(const Context& ctx) const {
  const Fingerprint mine = context_fingerprint(ctx);
  if (header_.fingerprint != mine) {
    const std::string name = ctx.params().name.empty() ? "" : " ('" + ctx.params().name + "')";
    throw ContextError(who_ + ": the data was made for parameters with fingerprint " +
                       fingerprint_hex(header_.fingerprint) + ", but this Context's parameters" +
                       name + " have fingerprint " + fingerprint_hex(mine));
  }
}

void Reader::expect(SectionKind kind, u64 body_bytes, const char* what) {
  if (in_section_) fail("internal: section not finished");
  if (index_ >= header_.sections) {
    fail(std::string("the header declares ") + std::to_string(header_.sections) +
         " sections, but the " + what + " would be section " + std::to_string(index_ + 1));
  }
  if (kSectionOverhead + body_bytes > payload_left()) {
    fail(std::string("the ") + what + " (" + size_string(body_bytes) +
         ") does not fit in the payload size the header declares (" +
         size_string(header_.payload_bytes) + ")");
  }
  std::uint8_t* h = section_header_;
  read_exact(h, kSectionHeaderBytes, "section header");
  const u32 got_kind = load_u32(h);
  const u32 reserved = load_u32(h + 4);
  const u64 got_bytes = load_u64(h + 8);
  const std::string at = "section " + std::to_string(index_) + " (" + what + ")";
  if (got_kind != static_cast<u32>(kind)) {
    fail(at + " is a " + section_kind_name(got_kind) + " section, expected a " +
         section_kind_name(static_cast<u32>(kind)) + " section");
  }
  if (reserved != 0) fail(at + ": reserved field is " + std::to_string(reserved) + ", not 0");
  if (got_bytes != body_bytes) {
    fail(at + " declares " + size_string(got_bytes) + "; this Context needs exactly " +
         size_string(body_bytes));
  }
  section_bytes_ = body_bytes;
  in_section_ = true;
  consumed_ += kSectionHeaderBytes;
}

void Reader::body(std::uint8_t* dst, std::size_t bytes) {
  if (!in_section_ || bytes != section_bytes_) fail("internal: section body size");
  std::span<const std::uint8_t> body;
  std::uint8_t* copy_to = nullptr;
  if (span_ != nullptr) {
    // Hashed where it lies and copied to dst on the same threads.
    const auto rest = span_->rest();
    if (rest.size() < bytes) {
      fail("data truncated: the section body needs " + size_string(bytes) +
           " more, the input ends after " + std::to_string(rest.size()));
    }
    body = rest.first(bytes);
    copy_to = dst;
  } else {
    read_exact(dst, bytes, "section body");
    body = {dst, bytes};
  }
  const unsigned threads = options_.threads;
  Tag want{};
  if (options_.verify_integrity) {
    want = section_tag(header_.version, chain_, index_, section_header_, body, copy_to, threads);
  } else if (copy_to != nullptr && bytes > 0) {
    std::memcpy(copy_to, body.data(), bytes);
  }
  if (span_ != nullptr) span_->advance(bytes);
  Tag tag{};
  read_exact(tag.data(), tag.size(), "section checksum");
  chain_ = tag;
  if (options_.verify_integrity && tag != want) {
    fail("checksum mismatch in section " + std::to_string(index_) + ": the data is corrupted");
  }
  consumed_ += bytes + kTagBytes;
  in_section_ = false;
  if (progress_) progress_->advance(kSectionOverhead + section_bytes_);
  ++index_;
}

std::vector<std::uint8_t> Reader::small_section(SectionKind kind, u64 body_bytes,
                                                const char* what) {
  expect(kind, body_bytes, what);
  std::vector<std::uint8_t> out(body_bytes);
  body(out.data(), out.size());
  return out;
}

void Reader::poly_words(const Context& ctx, const Basis& basis, u32* dst, const char* what) {
  const u64 words = static_cast<u64>(basis.size) * ctx.n();
  expect(SectionKind::kPoly, words * 4, what);
  body(reinterpret_cast<std::uint8_t*>(dst), words * 4);
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < words; ++i)
      dst[i] = load_u32(reinterpret_cast<const std::uint8_t*>(dst + i));
  }
  check_words(
      ctx, basis, dst, options_.threads, [this](const std::string& m) { fail(m); }, what);
}

RnsPoly Reader::poly(const Context& ctx, const Basis& basis, const char* what) {
  Buffer host = staging_buffer(ctx, static_cast<std::size_t>(basis.size) * ctx.n());
  poly_words(ctx, basis, host.data(), what);
  Backend& be = ctx.backend();
  RnsPoly poly = be.make_poly(basis);
  be.upload(host.data(), poly.ref());
  return poly;
}

UniformSeed Reader::seed(const char* what) {
  const auto b = small_section(SectionKind::kSeed, kSeedBodyBytes, what);
  const u32 scheme = load_u32(b.data());
  const u32 reserved = load_u32(b.data() + 4);
  if (reserved != 0) {
    fail(std::string(what) + ": reserved field is " + std::to_string(reserved) + ", not 0");
  }
  const auto known = expansion_scheme_from_id(scheme);
  if (!known) {
    fail(std::string(what) + ": seed expansion scheme " + std::to_string(scheme) +
         " is not supported by this build (it knows " + known_expansion_schemes() +
         "); a newer theodosian wrote it");
  }
  UniformSeed s;
  s.scheme = *known;
  std::memcpy(s.seed.data(), b.data() + 8, s.seed.size());
  return s;
}

void Reader::skip(const char* what) {
  if (in_section_) fail("internal: section not finished");
  if (index_ >= header_.sections) fail(std::string("no section left for the ") + what);
  std::uint8_t h[kSectionHeaderBytes];
  read_exact(h, sizeof h, "section header");
  const u64 bytes = load_u64(h + 8);
  if (kSectionOverhead + bytes > payload_left()) {
    fail(std::string("the ") + what + " (" + size_string(bytes) +
         ") does not fit in the payload size the header declares");
  }
  // The body is skipped unread (seeking when the stream can); its tag keys the next section.
  u64 left = bytes;
  const auto pos = in_.tellg();
  bool skipped = false;
  if (pos != std::istream::pos_type(-1)) {
    in_.seekg(static_cast<std::streamoff>(left), std::ios::cur);
    skipped = static_cast<bool>(in_);
    if (!skipped) {
      in_.clear();
      in_.seekg(pos);
    }
  } else {
    in_.clear();
  }
  if (!skipped) {
    std::vector<std::uint8_t> sink(static_cast<std::size_t>(std::min<u64>(left, kChunkBytes)));
    while (left > 0) {
      const auto n = static_cast<std::size_t>(std::min<u64>(left, sink.size()));
      read_exact(sink.data(), n, "skipped section");
      left -= n;
    }
  }
  read_exact(chain_.data(), chain_.size(), "section checksum");
  consumed_ += kSectionOverhead + bytes;
  if (progress_) progress_->advance(kSectionOverhead + bytes);
  ++index_;
}

void Reader::finish(bool at_end) {
  if (in_section_) fail("internal: section not finished");
  if (index_ != header_.sections) {
    fail("the header declares " + std::to_string(header_.sections) + " sections but the " +
         "object ends after " + std::to_string(index_));
  }
  if (consumed_ != header_.payload_bytes) {
    fail("the header declares a payload of " + size_string(header_.payload_bytes) +
         " but the sections take " + size_string(consumed_));
  }
  if (at_end) {
    char c = 0;
    in_.read(&c, 1);
    if (in_.gcount() != 0) fail("trailing bytes after the object");
    in_.clear();
  }
}

// ---- memory streams ----------------------------------------------------------------------------

SpanStreamBuf::SpanStreamBuf(std::span<const std::uint8_t> bytes) {
  // std::streambuf's get area is char*; it is only read through.
  char* p = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
  setg(p, p, p + bytes.size());
}

std::span<const std::uint8_t> SpanStreamBuf::rest() const {
  return {reinterpret_cast<const std::uint8_t*>(gptr()),
          static_cast<std::size_t>(egptr() - gptr())};
}

void SpanStreamBuf::advance(std::size_t bytes) {
  setg(eback(), gptr() + static_cast<std::ptrdiff_t>(std::min(bytes, rest().size())), egptr());
}

SpanStreamBuf::pos_type SpanStreamBuf::seekoff(off_type off, std::ios_base::seekdir dir,
                                               std::ios_base::openmode mode) {
  if (!(mode & std::ios_base::in)) return pos_type(off_type(-1));
  off_type base = 0;
  if (dir == std::ios_base::cur) base = gptr() - eback();
  if (dir == std::ios_base::end) base = egptr() - eback();
  const off_type to = base + off;
  if (to < 0 || to > egptr() - eback()) return pos_type(off_type(-1));
  setg(eback(), eback() + to, egptr());
  return pos_type(to);
}

SpanStreamBuf::pos_type SpanStreamBuf::seekpos(pos_type pos, std::ios_base::openmode mode) {
  return seekoff(off_type(pos), std::ios_base::beg, mode);
}

VectorStreamBuf::int_type VectorStreamBuf::overflow(int_type c) {
  if (!traits_type::eq_int_type(c, traits_type::eof()))
    out_.push_back(static_cast<std::uint8_t>(traits_type::to_char_type(c)));
  return traits_type::not_eof(c);
}

std::streamsize VectorStreamBuf::xsputn(const char* s, std::streamsize n) {
  out_.insert(out_.end(), reinterpret_cast<const std::uint8_t*>(s),
              reinterpret_cast<const std::uint8_t*>(s) + n);
  return n;
}

// ---- seeds -------------------------------------------------------------------------------------

void expand_uniform(const Context& ctx, const UniformSeed& seed, u64 stream_id, PolyRef out) {
  switch (seed.scheme) {
    case ExpansionScheme::kChaCha20Wide:
      ctx.backend().sample_uniform(seed.seed, stream_id, out);
      return;
  }
  throw ParameterError("seed expansion scheme " + std::to_string(static_cast<u32>(seed.scheme)) +
                       " is not supported by this build (it knows " + known_expansion_schemes() +
                       ")");
}

}  // namespace theo::detail::serial
