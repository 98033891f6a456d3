#pragma once
// The container every serialized object uses (docs/serialization.md has the byte layout): an
// 80-byte header (magic, container version, object type, flags, parameter fingerprint, payload
// size, section count, BLAKE2b-128 of the header) followed by sections. A section is a 16-byte
// section header (kind, reserved, body size), the body, and a BLAKE2b-128 tag over (section index,
// section header, body) keyed by the previous section's tag (the first section's by the header
// checksum): the tags chain, so a section moved, dropped or taken from another object breaks the
// chain. Every section is verified before its body is used, so a stream of many gigabytes is read
// and checked one section at a time, and a reader may skip whole sections (Galois keys it was not
// asked for) without reading their bodies: it reads only their tags, to continue the chain.
//
// Writer and Reader know nothing about the objects: serialization.cpp lays the objects out in
// sections with them.

#include <sodium.h>

#include <array>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "ckks/progress_bar.h"
#include "theo/ckks/context.h"
#include "theo/ckks/serialization.h"

namespace theo::detail::serial {

inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'T', 'H', 'E', 'O', '\r', '\n', 0x1a};
inline constexpr u32 kContainerVersion = 1;
inline constexpr std::size_t kHeaderFieldBytes = 64;
inline constexpr std::size_t kChecksumBytes = 16;
inline constexpr std::size_t kHeaderBytes = kHeaderFieldBytes + kChecksumBytes;
inline constexpr std::size_t kSectionHeaderBytes = 16;
inline constexpr std::size_t kTagBytes = 16;
inline constexpr std::size_t kSectionOverhead = kSectionHeaderBytes + kTagBytes;

// Header flags.
inline constexpr u32 kFlagSeeded = 1;  // some uniform polynomial is stored as a seed

enum class SectionKind : u32 {
  kMeta = 1,     // fixed-size metadata of the object
  kKeyMeta = 2,  // one key record: role, Galois element, form of its `a`
  kPoly = 3,     // limbs x N words, u32 little endian, limb-major, NTT domain
  kSeed = 4,     // u32 expansion scheme, u32 reserved, 32 seed bytes
  kText = 5,     // UTF-8 text (parameter sets: the JSON parameter file)
  kTernary = 6,  // N coefficients in {-1, 0, 1}, 2 bits each (00: 0, 01: 1, 11: -1)
};
inline constexpr std::size_t kSeedBodyBytes = 40;

std::string section_kind_name(u32 kind);

// Little-endian field packing for the fixed-size metadata sections.
class FieldWriter {
 public:
  void u32_le(u32 v);
  void u64_le(u64 v);
  void f64(double d);
  const std::vector<std::uint8_t>& bytes() const { return out_; }

 private:
  std::vector<std::uint8_t> out_;
};

class FieldReader {
 public:
  explicit FieldReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  u32 u32_le();
  u64 u64_le();
  double f64();

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

// BLAKE2b with a 16-byte output (libsodium crypto_generichash).
class Checksum {
 public:
  explicit Checksum(std::span<const std::uint8_t> key = {});
  void update(const void* data, std::size_t bytes);
  std::array<std::uint8_t, kChecksumBytes> final();

 private:
  crypto_generichash_state state_;
};

// Reports bytes done through SaveOptions / LoadOptions: the callback when set, else the stderr
// bar when asked for.
class Progress {
 public:
  Progress(const char* label, u64 total, bool bar, const ProgressCallback& callback);
  void advance(u64 bytes);

 private:
  u64 total_;
  u64 done_ = 0;
  const ProgressCallback* callback_;
  std::optional<ProgressBar> bar_;
};

// Lays sections out twice: measure() counts the sections and bytes without reading any data
// (so that the header, written first, can carry the payload size), then write() emits them.
class Writer {
 public:
  // A measuring writer.
  Writer() = default;
  // A writer that emits to `out`; `payload_bytes` and `sections` come from a measuring pass.
  Writer(std::ostream& out, ObjectType type, u32 flags, const Fingerprint& fingerprint,
         u64 payload_bytes, u32 sections, Progress* progress);

  bool measuring() const { return out_ == nullptr; }
  u64 payload_bytes() const { return bytes_; }
  u32 sections() const { return sections_; }

  void section(SectionKind kind, std::span<const std::uint8_t> body);
  // A kPoly section with the words of `poly` (downloaded from the backend while writing).
  void poly(const Context& ctx, const RnsPoly& poly);
  void seed(const UniformSeed& seed);
  // Checks that exactly the measured sections were written, and flushes.
  void finish();

 private:
  void begin(SectionKind kind, u64 body_bytes);
  void body(const void* data, std::size_t bytes);
  void end();
  void put(const void* data, std::size_t bytes);

  std::ostream* out_ = nullptr;
  Progress* progress_ = nullptr;
  std::array<std::uint8_t, kChecksumBytes> header_sum_{};
  std::array<std::uint8_t, kChecksumBytes> chain_{};  // key of the next section's tag
  u64 declared_bytes_ = 0;
  u32 declared_sections_ = 0;
  u64 bytes_ = 0;
  u32 sections_ = 0;
  std::optional<Checksum> section_sum_;
  u64 body_left_ = 0;
};

struct Header {
  u32 version = 0;
  ObjectType type{};
  u32 flags = 0;
  Fingerprint fingerprint{};
  u64 payload_bytes = 0;
  u32 sections = 0;
};

// Reads and checks one object. Every error is a ParameterError (ContextError for a fingerprint
// that differs from the Context's) whose message starts with `who`.
class Reader {
 public:
  Reader(std::istream& in, const LoadOptions& options, std::string who);

  // Reads and checks the header: magic, version, checksum, type (== expected unless nullopt),
  // flags, payload size against the limit and against the bytes the stream holds, when it can
  // tell.
  const Header& read_header(std::optional<ObjectType> expected);
  // ContextError unless the header's fingerprint is the Context's.
  void require_fingerprint(const Context& ctx) const;
  const Header& header() const { return header_; }
  u32 sections_left() const { return header_.sections - index_; }
  u64 payload_left() const { return header_.payload_bytes - consumed_; }

  // Reads the next section's header: its kind must be `kind` and its body `body_bytes` long.
  void expect(SectionKind kind, u64 body_bytes, const char* what);
  // Body of the current section (in pieces, in order), then the tag check.
  void body(void* dst, std::size_t bytes);
  void end();
  // Whole small sections.
  std::vector<std::uint8_t> small_section(SectionKind kind, u64 body_bytes, const char* what);
  // A kPoly section over `basis`: words checked below their primes, then uploaded.
  RnsPoly poly(const Context& ctx, const Basis& basis, const char* what);
  UniformSeed seed(const char* what);
  // Skips the next section without reading its body when the stream can seek.
  void skip(const char* what);
  // Every section read, the payload size as declared, and no trailing bytes when `at_end`.
  void finish(bool at_end);

  [[noreturn]] void fail(const std::string& msg) const;

 private:
  void read_exact(void* dst, std::size_t bytes, const char* what);
  // Bytes left in the stream from the current position, when it can tell.
  std::optional<u64> stream_bytes_left();

  std::istream& in_;
  const LoadOptions& options_;
  std::string who_;
  Header header_;
  std::array<std::uint8_t, kChecksumBytes> header_sum_{};
  std::array<std::uint8_t, kChecksumBytes> chain_{};  // key of the next section's tag
  u32 index_ = 0;
  u64 consumed_ = 0;
  u64 body_left_ = 0;
  u64 section_bytes_ = 0;
  bool in_section_ = false;
  std::optional<Checksum> section_sum_;
  std::optional<Progress> progress_;
};

// Read-only std::streambuf over a byte span (seekable), and one that appends to a vector.
class SpanStreamBuf : public std::streambuf {
 public:
  explicit SpanStreamBuf(std::span<const std::uint8_t> bytes);

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode mode) override;
};

class VectorStreamBuf : public std::streambuf {
 public:
  explicit VectorStreamBuf(std::vector<std::uint8_t>& out) : out_(out) {}

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  std::vector<std::uint8_t>& out_;
};

// Expands a stored seed into `out` with the scheme it names (stream `stream_id`).
void expand_uniform(const Context& ctx, const UniformSeed& seed, u64 stream_id, PolyRef out);

}  // namespace theo::detail::serial
