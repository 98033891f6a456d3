#pragma once
// Helpers of the serialization tests: the container's offsets (docs/serialization.md), a walk over
// the sections of a serialized object, and resealing (recomputing every checksum after a field was
// changed), which is what a forger who wants a field past the checksums would do: the checks
// behind the checksums must then catch the field; and deserialized objects compared with their
// originals.

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "theo/common.h"

namespace theo::test::serial {

inline constexpr std::size_t kHeaderFields = 64;
inline constexpr std::size_t kHeaderBytes = 80;
inline constexpr std::size_t kOffVersion = 8, kOffType = 12, kOffFlags = 16, kOffSections = 20,
                             kOffPayload = 24, kOffFingerprint = 32;
inline constexpr std::size_t kSectionHeader = 16, kTag = 16;

inline u32 get_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
  u32 v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | b.at(at + i);
  return v;
}
inline u64 get_u64(const std::vector<std::uint8_t>& b, std::size_t at) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | b.at(at + i);
  return v;
}
inline void set_u32(std::vector<std::uint8_t>& b, std::size_t at, u32 v) {
  for (int i = 0; i < 4; ++i)
    b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void set_u64(std::vector<std::uint8_t>& b, std::size_t at, u64 v) {
  for (int i = 0; i < 8; ++i)
    b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void set_f64(std::vector<std::uint8_t>& b, std::size_t at, double d) {
  u64 v = 0;
  std::memcpy(&v, &d, sizeof v);
  set_u64(b, at, v);
}

struct Section {
  std::size_t header = 0;  // offset of the section header
  std::size_t body = 0;    // offset of the body
  u64 size = 0;            // body bytes
  u32 kind = 0;
};

// The sections of a well-formed object (stops at the first one that does not fit).
inline std::vector<Section> sections(const std::vector<std::uint8_t>& b) {
  std::vector<Section> out;
  std::size_t at = kHeaderBytes;
  while (at + kSectionHeader + kTag <= b.size()) {
    Section s;
    s.header = at;
    s.kind = get_u32(b, at);
    s.size = get_u64(b, at + 8);
    s.body = at + kSectionHeader;
    if (s.size > b.size() - s.body - kTag) break;
    out.push_back(s);
    at = s.body + s.size + kTag;
  }
  return out;
}

// The tag of one section (docs/serialization.md): BLAKE2b-128 keyed by the previous tag over
// (u32 index, section header, body) in container version 1; over (u32 index, section header, the
// BLAKE2b-256 digests, personalized "theodosian piece", of the body's 256 KiB pieces) in version 2.
inline void section_tag(u32 version, const std::uint8_t* key, u32 index,
                        const std::uint8_t* section, u64 body_bytes, std::uint8_t* tag) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, key, 16, 16);
  std::uint8_t idx[4];
  for (int i = 0; i < 4; ++i)
    idx[i] = static_cast<std::uint8_t>(index >> (8 * i));
  crypto_generichash_update(&st, idx, 4);
  crypto_generichash_update(&st, section, kSectionHeader);
  const std::uint8_t* body = section + kSectionHeader;
  if (version == 1) {
    crypto_generichash_update(&st, body, body_bytes);
  } else {
    constexpr u64 kPiece = u64{1} << 18;
    const std::uint8_t salt[16] = {};
    const auto* personal = reinterpret_cast<const unsigned char*>("theodosian piece");
    for (u64 at = 0; at < body_bytes; at += kPiece) {
      std::uint8_t d[32];
      crypto_generichash_blake2b_salt_personal(d, 32, body + at, std::min(kPiece, body_bytes - at),
                                               nullptr, 0, salt, personal);
      crypto_generichash_update(&st, d, 32);
    }
  }
  crypto_generichash_final(&st, tag, kTag);
}

// Recomputes the header checksum and every section tag, by the container version the header
// names (1: the old tags, else version 2's).
inline void reseal(std::vector<std::uint8_t>& b) {
  if (sodium_init() < 0 || b.size() < kHeaderBytes) return;
  const u32 version = get_u32(b, kOffVersion);
  crypto_generichash(b.data() + kHeaderFields, 16, b.data(), kHeaderFields, nullptr, 0);
  u32 index = 0;
  const std::uint8_t* key = b.data() + kHeaderFields;
  for (const Section& s : sections(b)) {
    section_tag(version, key, index, b.data() + s.header, s.size, b.data() + s.body + s.size);
    key = b.data() + s.body + s.size;
    ++index;
  }
}

// A copy of `b` with the u32 at `at` set to `v`, resealed.
inline std::vector<std::uint8_t> with_u32(std::vector<std::uint8_t> b, std::size_t at, u32 v) {
  set_u32(b, at, v);
  reseal(b);
  return b;
}

}  // namespace theo::test::serial

namespace theo::test {

// A deserialized object against the original: the same metadata and, limb for limb, the same
// basis and words.
inline std::vector<u32> words_of(const Context& ctx, const RnsPoly& p) {
  std::vector<u32> w(p.words());
  ctx.backend().download(p.cref(), w.data());
  return w;
}

inline void expect_same_poly(const Context& ctx, const RnsPoly& a, const RnsPoly& b) {
  ASSERT_TRUE(a.basis() == b.basis());
  EXPECT_EQ(words_of(ctx, a), words_of(ctx, b));
}

inline void expect_same_key(const Context& ctx, const SwitchingKey& a, const SwitchingKey& b) {
  ASSERT_EQ(a.dnum(), b.dnum());
  for (u32 k = 0; k < a.dnum(); ++k) {
    expect_same_poly(ctx, a.b(k), b.b(k));
    expect_same_poly(ctx, a.a(k), b.a(k));
  }
}

inline void expect_same_ct(const Context& ctx, const Ciphertext& a, const Ciphertext& b) {
  EXPECT_EQ(a.level(), b.level());
  EXPECT_EQ(a.scale(), b.scale());
  EXPECT_EQ(a.slots(), b.slots());
  ASSERT_EQ(a.size(), b.size());
  for (u32 i = 0; i < a.size(); ++i)
    expect_same_poly(ctx, a.poly(i), b.poly(i));
}

}  // namespace theo::test
