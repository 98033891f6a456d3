// The serialization container (io/container.h, docs/serialization.md): fields, checksums, section
// tags, progress, word checks and the memory streams; the Writer and the Reader have files of their
// own (container_writer.cpp, container_reader.cpp).

#include "io/container.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "common/enum_names.h"
#include "io/hash_pool.h"
#include "theo/errors.h"

namespace theo::detail::serial {

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

std::string size_string(u64 bytes) {
  return std::to_string(bytes) + " bytes";
}

namespace {

void ensure_sodium() {
  static const int rc = sodium_init();
  if (rc < 0) throw Error("libsodium: sodium_init() failed");
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

std::array<std::uint8_t, kChecksumBytes> header_checksum(const std::uint8_t* fields) {
  Checksum sum;
  sum.update(fields, kHeaderFieldBytes);
  return sum.final();
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
