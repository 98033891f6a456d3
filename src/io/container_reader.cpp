// The Reader of the serialization container (io/container.h, docs/serialization.md).

#include "io/container.h"

#include <algorithm>
#include <cstring>

#include "io/hash_pool.h"
#include "theo/errors.h"

namespace theo::detail::serial {

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

}  // namespace theo::detail::serial
