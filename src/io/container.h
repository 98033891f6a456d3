#pragma once
// The container every serialized object uses (docs/serialization.md has the byte layout): an
// 80-byte header (magic, container version, object type, flags, parameter fingerprint, payload
// size, section count, BLAKE2b-128 of the header) followed by sections. A section is a 16-byte
// section header (kind, reserved, body size), the body, and a 16-byte tag keyed by the previous
// section's tag (the first section's by the header checksum): the tags chain, so a section moved,
// dropped or taken from another object breaks the chain. Version 2's tag is BLAKE2b-128 over
// (section index, section header, the BLAKE2b-256 digests of the body's 256 KiB pieces): the pieces
// are hashed in parallel (hash_pool.h); version 1's tag hashed the body itself, in one stream
// (still read). Every section is verified before its body is used, so a stream of many gigabytes
// is read and checked one section at a time, and a reader may skip whole sections (Galois keys it
// was not asked for) without reading their bodies: it reads only their tags, to continue the chain.
//
// Writer and Reader know nothing about the objects: the formats (io/formats.h) lay the objects out
// in sections with them. Both work on streams and, faster, on memory: a Writer over a span writes
// the downloaded words in place, and a Reader over a SpanStreamBuf hashes and checks the words
// where they lie, copying them once, into the staging memory they are uploaded from.

#include <sodium.h>

#include <array>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "ckks/progress_bar.h"
#include "theo/ckks/context.h"
#include "theo/io/serialization.h"

namespace theo::detail::serial {

inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'T', 'H', 'E', 'O', '\r', '\n', 0x1a};
// Written: 2. Read: 1 and 2.
inline constexpr u32 kContainerVersion = 2;
inline constexpr u32 kOldestContainerVersion = 1;
// Version 2: section bodies are hashed in pieces of this many bytes (the last one shorter), each
// to a BLAKE2b-256 digest personalized with kPiecePersonal.
inline constexpr std::size_t kPieceBytes = std::size_t{1} << 18;
inline constexpr std::size_t kPieceDigestBytes = 32;
inline constexpr char kPiecePersonal[17] = "theodosian piece";
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

// Little-endian words at p, and "N bytes" for messages.
void store_u32(std::uint8_t* p, u32 v);
void store_u64(std::uint8_t* p, u64 v);
u32 load_u32(const std::uint8_t* p);
u64 load_u64(const std::uint8_t* p);
std::string size_string(u64 bytes);

// Bodies pass through this much memory at a time (hashing, and skipping unseekable streams).
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

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

using Tag = std::array<std::uint8_t, kTagBytes>;

// The checksum of the header's kHeaderFieldBytes field bytes at `fields`.
std::array<std::uint8_t, kChecksumBytes> header_checksum(const std::uint8_t* fields);

// The tag of section `index` under container `version`, keyed by `chain`: `section_header` is its
// 16 bytes, `body` the body. Version 2 hashes the pieces on up to `threads` threads (0: all) and,
// when `copy_to` is set, copies the body there on the way (the copy is split the same way).
Tag section_tag(u32 version, const Tag& chain, u32 index, const std::uint8_t* section_header,
                std::span<const std::uint8_t> body, std::uint8_t* copy_to, unsigned threads);

// Host memory from the backend's staging allocator (page-locked on CUDA), not initialized.
Buffer staging_buffer(const Context& ctx, std::size_t words);

// Every word of the `limbs` x N words at `words` below its prime (`basis` names them);
// ParameterError through `fail` naming the first word that is not. Limbs are checked in parallel.
void check_words(const Context& ctx, const Basis& basis, const u32* words, unsigned threads,
                 const std::function<void(const std::string&)>& fail, const char* what);

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
// (so that the header, written first, can carry the payload size), then write() emits them, to a
// stream or into a span of exactly the measured size.
class Writer {
 public:
  // A measuring writer.
  Writer() = default;
  // A writer that emits to `out`; `payload_bytes` and `sections` come from a measuring pass.
  Writer(std::ostream& out, ObjectType type, u32 flags, const Fingerprint& fingerprint,
         u64 payload_bytes, u32 sections, Progress* progress, unsigned threads);
  // A writer that emits into `out` (header + payload bytes long).
  Writer(std::span<std::uint8_t> out, ObjectType type, u32 flags, const Fingerprint& fingerprint,
         u64 payload_bytes, u32 sections, Progress* progress, unsigned threads);

  bool measuring() const { return out_ == nullptr && mem_.data() == nullptr; }
  u64 payload_bytes() const { return bytes_; }
  u32 sections() const { return sections_; }

  void section(SectionKind kind, std::span<const std::uint8_t> body);
  // A kPoly section with the words of `poly` (downloaded from the backend while writing).
  void poly(const Context& ctx, const RnsPoly& poly);
  // A kPoly section with words already in host memory.
  void words(std::span<const u32> words);
  void seed(const UniformSeed& seed);
  // Checks that exactly the measured sections were written, and flushes.
  void finish();

 private:
  void header(ObjectType type, u32 flags, const Fingerprint& fingerprint);
  // Counts a section; false when measuring.
  bool count(u64 body_bytes);
  // Where a body of `bytes` goes when it can be written in place (memory, aligned for u32 words),
  // else null.
  std::uint8_t* in_place(u64 bytes);
  // Header, body (copied unless `body` is already in place), tag.
  void emit(SectionKind kind, std::span<const std::uint8_t> body, bool body_in_place);
  void put(const void* data, std::size_t bytes);

  std::ostream* out_ = nullptr;
  std::span<std::uint8_t> mem_;
  std::size_t pos_ = 0;
  Progress* progress_ = nullptr;
  unsigned threads_ = 0;
  Tag header_sum_{};
  Tag chain_{};  // key of the next section's tag
  u64 declared_bytes_ = 0;
  u32 declared_sections_ = 0;
  u64 bytes_ = 0;
  u32 sections_ = 0;
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
// that differs from the Context's) whose message starts with `who`. Over a SpanStreamBuf, bodies
// are hashed where they lie instead of being read into memory first.
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

  // Whole small sections.
  std::vector<std::uint8_t> small_section(SectionKind kind, u64 body_bytes, const char* what);
  // A kPoly section over `basis`: checked (tag, every word below its prime), then uploaded.
  RnsPoly poly(const Context& ctx, const Basis& basis, const char* what);
  // A kPoly section over `basis` into host memory at `dst` (limbs x N words), checked.
  void poly_words(const Context& ctx, const Basis& basis, u32* dst, const char* what);
  UniformSeed seed(const char* what);
  // Skips the next section without reading its body when the stream can seek.
  void skip(const char* what);
  // Every section read, the payload size as declared, and no trailing bytes when `at_end`.
  void finish(bool at_end);

  [[noreturn]] void fail(const std::string& msg) const;

 private:
  // Reads the next section's header: its kind must be `kind` and its body `body_bytes` long.
  void expect(SectionKind kind, u64 body_bytes, const char* what);
  // The body of the section `expect` opened, verified against its tag; copied to `dst` (which
  // must hold the body). The section is done afterwards.
  void body(std::uint8_t* dst, std::size_t bytes);
  void read_exact(void* dst, std::size_t bytes, const char* what);
  // Bytes left in the stream from the current position, when it can tell.
  std::optional<u64> stream_bytes_left();

  std::istream& in_;
  class SpanStreamBuf* span_ = nullptr;  // the stream's buffer, when it is one
  const LoadOptions& options_;
  std::string who_;
  Header header_;
  Tag header_sum_{};
  Tag chain_{};  // key of the next section's tag
  u32 index_ = 0;
  u64 consumed_ = 0;
  u64 section_bytes_ = 0;
  std::uint8_t section_header_[kSectionHeaderBytes] = {};
  bool in_section_ = false;
  std::optional<Progress> progress_;
};

// Read-only std::streambuf over a byte span (seekable); Reader reads large bodies from it in place.
class SpanStreamBuf : public std::streambuf {
 public:
  explicit SpanStreamBuf(std::span<const std::uint8_t> bytes);
  // The bytes from the current position on, and a step over some of them.
  std::span<const std::uint8_t> rest() const;
  void advance(std::size_t bytes);

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
