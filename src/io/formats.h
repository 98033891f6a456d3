#pragma once
// The object formats of the serialization (docs/serialization.md has the byte layouts), one
// description per type on top of the container (io/container.h):
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
//
// A Format says both directions of one type: `layout` checks an object and lays it out in
// sections, `read` reads the sections back after the header (every section checked) and returns
// how to make the object once the reader has checked the end of the data. serialization.cpp runs
// every type through the same steps with its Format (format_keys.cpp, format_values.cpp).

#include <functional>
#include <string>

#include "io/container.h"
#include "theo/io/serialization.h"

namespace theo::detail::serial {

// An object's sections: emit(Writer&, bool& seeded) runs twice, measuring, then writing; `seeded`
// is set when some polynomial is written as its seed (the header's compact flag).
struct Layout {
  ObjectType type{};
  Fingerprint fingerprint{};
  const char* label = "";  // of the progress bar, e.g. "save relin key"
  std::function<void(Writer&, bool&)> emit;
};

// What a Format's read found, before the reader checks the end of the data.
template <typename T>
struct Read {
  bool seeded = false;      // some section was a seed (the header's compact flag must agree)
  bool real_slots = false;  // plaintexts and ciphertexts: the metadata hint
  std::function<T()> make;  // the object, once every check has passed
};

// One type's format: written from a Saved, read back as a Loaded.
template <typename Saved, typename Loaded = Saved>
struct Format {
  ObjectType type{};
  const char* loader = "";  // the loader named in messages, e.g. "load_relin_key"
  Layout (*layout)(const Context&, const Saved&, const SaveOptions&) = nullptr;
  Read<Loaded> (*read)(Reader&, const Context&, const LoadOptions&) = nullptr;
};

extern const Format<SecretKey> kSecretKeyFormat;
extern const Format<PublicKey> kPublicKeyFormat;
extern const Format<RelinKey> kRelinKeyFormat;
extern const Format<GaloisKeys> kGaloisKeysFormat;
extern const Format<EvaluationKeysView, EvaluationKeys> kEvaluationKeysFormat;
extern const Format<Plaintext> kPlaintextFormat;
extern const Format<Ciphertext> kCiphertextFormat;

// Parameter sets need no Context (format_values.cpp).
Layout parameters_layout(const ParameterSet& params);
ParameterSet read_parameters(Reader& r, const LoadOptions& options);

// Host ciphertexts: the ciphertext format over words in host memory (format_values.cpp).
Layout host_ciphertext_layout(const Context& ctx, const HostCiphertext& h);
HostCiphertext read_host_ciphertext(Reader& r, const Context& ctx);

// ---- layout constants that inspect() reads too
// ---------------------------------------------------

inline constexpr std::size_t kSecretMetaBytes = 16;
inline constexpr std::size_t kKeyMetaBytes = 16;
inline constexpr std::size_t kGaloisMetaBytes = 16;
inline constexpr std::size_t kBundleMetaBytes = 16;
inline constexpr std::size_t kPlaintextMetaBytes = 32;
inline constexpr std::size_t kCiphertextMetaBytes = 40;

inline constexpr u32 kHintRealSlots = 1;

enum class KeyRole : u32 { kPublic = 1, kRelin = 2, kGalois = 3, kToSparse = 4, kToDense = 5 };
enum class AForm : u32 { kExpanded = 0, kSeeded = 1 };
inline constexpr u32 kPartRelin = 1, kPartGalois = 2, kPartBootstrapping = 4;

// ParameterError through the reader unless the header's compact flag says what the sections are.
void require_seeded_flag(Reader& r, bool seeded);

}  // namespace theo::detail::serial
