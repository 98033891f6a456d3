// The Writer of the serialization container (io/container.h, docs/serialization.md).

#include "io/container.h"

#include <algorithm>
#include <cstring>

#include "io/hash_pool.h"
#include "theo/errors.h"

namespace theo::detail::serial {

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

}  // namespace theo::detail::serial
