#pragma once
// Serialization of everything a client sends or a server keeps: parameter sets, secret keys,
// public keys, relinearization keys, Galois keys (all, or a chosen subset of rotations, when saving
// and when loading), evaluation-key bundles (relinearization + Galois + the bootstrapping
// encapsulation keys of one client), plaintexts and ciphertexts. The versioned binary format is
// documented in docs/serialization.md: a header with magic, container version, object type, the
// parameter fingerprint and the payload size, then sections that each carry a BLAKE2b checksum
// (computed over 256 KiB pieces on several threads: SaveOptions / LoadOptions::threads).
//
// Streams are read and written one section (one polynomial) at a time, so saving or loading a key
// set of many gigabytes holds the object plus one polynomial, never two copies. Compact forms store
// the 32-byte seed of each uniform polynomial instead of its words (keys: about half the size; a
// fresh secret-key ciphertext: about half).
//
// Loading validates before it allocates or computes: the header (magic, version, checksum, object
// type, flags), the fingerprint against the Context's (ContextError naming both), the declared size
// against LoadOptions::max_bytes and against the bytes present, every count, level, slot count,
// scale, Galois element and seed scheme, every section's size against the one the Context implies,
// each section's checksum, and every word below its prime. Malformed data raises ParameterError
// naming what is wrong; nothing is returned from data that failed a check.

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"
#include "theo/ckks/keys.h"
#include "theo/math/fingerprint.h"
#include "theo/math/uniform_seed.h"
#include "theo/ring/poly.h"

namespace theo {

enum class ObjectType : u32 {
  kParameters = 1,
  kSecretKey = 2,
  kPublicKey = 3,
  kRelinKey = 4,
  kGaloisKeys = 5,
  kEvaluationKeys = 6,
  kPlaintext = 7,
  kCiphertext = 8,
};
// "ciphertext", "Galois keys", ... (for messages).
std::string object_type_name(ObjectType type);

// The default limit on the declared size of one object (a bootstrapping key set at N = 2^16 is
// about 9 GiB expanded).
inline constexpr u64 kDefaultMaxSerializedBytes = u64{64} << 30;

// Called after every section with the bytes done and the object's total.
using ProgressCallback = std::function<void(u64 bytes_done, u64 bytes_total)>;

struct SaveOptions {
  // Store the seed of every uniform polynomial that has one instead of its words.
  bool compact = true;
  // A progress bar on stderr (ignored when on_progress is set).
  bool progress = false;
  ProgressCallback on_progress;
  // Plaintexts and ciphertexts: the hint that the slots hold real values (Python's is_real),
  // stored in the metadata and returned by ObjectInfo.
  bool real_slots = false;
  // Galois keys and evaluation keys: write only the keys of these Galois elements (each must be
  // in the set, else MissingKeyError). nullopt: all.
  std::optional<std::vector<u32>> galois_elements;
  // Threads that hash (and copy) a large section's pieces, the caller included (0: every hardware
  // thread; 1: the caller alone). The bytes are the same for any value.
  unsigned threads = 0;
};

struct LoadOptions {
  // Objects that declare more bytes than this are refused before anything is allocated.
  u64 max_bytes = kDefaultMaxSerializedBytes;
  // Galois keys and evaluation keys: load only the keys of these Galois elements (MissingKeyError
  // naming the first one the data lacks); the others are skipped without being read when the
  // stream can seek. nullopt: all.
  std::optional<std::vector<u32>> galois_elements;
  bool progress = false;
  ProgressCallback on_progress;
  // Refuse bytes after the object (loads from buffers always do; stream loads leave the stream
  // after the object, so that several objects may follow each other).
  bool require_end = false;
  // false skips the checksums (every other check still runs). For fuzzing, which must reach the
  // checks behind them; never for data from outside the process.
  bool verify_integrity = true;
  // Threads that hash a large section's pieces and check its words, the caller included (0: every
  // hardware thread; 1: the caller alone).
  unsigned threads = 0;
};

// What a serialized object's header and metadata say.
struct ObjectInfo {
  ObjectType type{};
  u32 version = 0;
  bool compact = false;  // some polynomial is stored as a seed
  Fingerprint fingerprint{};
  u64 total_bytes = 0;
  bool real_slots = false;              // plaintexts and ciphertexts
  std::vector<u32> galois_elements;     // Galois keys and evaluation keys, in the data's order
  bool has_relin_key = false;           // evaluation keys
  bool has_bootstrapping_keys = false;  // evaluation keys: the two encapsulation keys
};

// The evaluation keys of one client, as one object: each part may be absent (empty).
struct EvaluationKeys {
  RelinKey relin;
  GaloisKeys galois;
  // Bootstrapping's encapsulation keys (dense s -> sparse s', s' -> s); both or neither.
  SwitchingKey to_sparse;
  SwitchingKey to_dense;
};
// What save() writes for evaluation keys: pointers to parts owned elsewhere (null: absent), so that
// keys held by other objects (BootstrappingKeys) are written without a copy.
struct EvaluationKeysView {
  const RelinKey* relin = nullptr;
  const GaloisKeys* galois = nullptr;
  const SwitchingKey* to_sparse = nullptr;
  const SwitchingKey* to_dense = nullptr;
};

// ---- streams -----------------------------------------------------------------------------------
// save() writes one object at the stream's position; load_*() reads one object from the stream's
// position and leaves the stream after it (several objects may follow each other in one stream).

void save(const ParameterSet& params, std::ostream& out, const SaveOptions& options = {});
void save(const Context& ctx, const SecretKey& key, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const PublicKey& key, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const RelinKey& key, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const GaloisKeys& keys, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const EvaluationKeysView& keys, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const Plaintext& pt, std::ostream& out,
          const SaveOptions& options = {});
void save(const Context& ctx, const Ciphertext& ct, std::ostream& out,
          const SaveOptions& options = {});

ParameterSet load_parameters(std::istream& in, const LoadOptions& options = {});
SecretKey load_secret_key(const ContextPtr& ctx, std::istream& in, const LoadOptions& options = {});
PublicKey load_public_key(const ContextPtr& ctx, std::istream& in, const LoadOptions& options = {});
RelinKey load_relin_key(const ContextPtr& ctx, std::istream& in, const LoadOptions& options = {});
GaloisKeys load_galois_keys(const ContextPtr& ctx, std::istream& in,
                            const LoadOptions& options = {});
EvaluationKeys load_evaluation_keys(const ContextPtr& ctx, std::istream& in,
                                    const LoadOptions& options = {});
Plaintext load_plaintext(const ContextPtr& ctx, std::istream& in, const LoadOptions& options = {},
                         ObjectInfo* info = nullptr);
Ciphertext load_ciphertext(const ContextPtr& ctx, std::istream& in, const LoadOptions& options = {},
                           ObjectInfo* info = nullptr);

// Reads the header and the metadata of one object (Galois keys: every key record, skipping the
// polynomials) and checks their checksums; does not need a Context.
ObjectInfo inspect(std::istream& in, const LoadOptions& options = {});

// ---- buffers -----------------------------------------------------------------------------------
// to_bytes() reserves the exact size first; load from a buffer also refuses trailing bytes.

std::vector<std::uint8_t> to_bytes(const ParameterSet& params, const SaveOptions& options = {});
template <typename T>
std::vector<std::uint8_t> to_bytes(const Context& ctx, const T& object,
                                   const SaveOptions& options = {});
// The exact size to_bytes() / save() produce.
template <typename T>
u64 serialized_size(const Context& ctx, const T& object, const SaveOptions& options = {});
// Writes into `out`, which must be exactly serialized_size() bytes (no copy through a stream: the
// words are downloaded where they belong).
template <typename T>
void to_bytes(const Context& ctx, const T& object, std::span<std::uint8_t> out,
              const SaveOptions& options = {});

ParameterSet load_parameters(std::span<const std::uint8_t> bytes, const LoadOptions& options = {});
SecretKey load_secret_key(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                          const LoadOptions& options = {});
PublicKey load_public_key(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                          const LoadOptions& options = {});
RelinKey load_relin_key(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                        const LoadOptions& options = {});
GaloisKeys load_galois_keys(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                            const LoadOptions& options = {});
EvaluationKeys load_evaluation_keys(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                                    const LoadOptions& options = {});
Plaintext load_plaintext(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                         const LoadOptions& options = {}, ObjectInfo* info = nullptr);
Ciphertext load_ciphertext(const ContextPtr& ctx, std::span<const std::uint8_t> bytes,
                           const LoadOptions& options = {}, ObjectInfo* info = nullptr);
ObjectInfo inspect(std::span<const std::uint8_t> bytes, const LoadOptions& options = {});

// ---- ciphertexts in host memory -----------------------------------------------------------------
// to_bytes / load_ciphertext split at the device: download() and upload() are the only steps that
// touch the backend (the copies); to_bytes and load_host_ciphertext (checksums, framing, every
// check of load_ciphertext) use the CPU only, so they can run on other threads while the device
// computes, and a server holds its device only for the copies. The bytes are those of to_bytes /
// load_ciphertext for the same ciphertext and options.

struct HostCiphertext {
  Fingerprint fingerprint{};  // of the parameters the words are for
  u32 level = 0;
  u32 slots = 0;
  long double scale = 0;
  bool real_slots = false;  // the metadata hint (SaveOptions::real_slots)
  u32 size = 0;             // polynomials: 2 or 3
  // c1 as its seed (compact form of a fresh secret-key ciphertext): `words` then holds c0 only.
  std::optional<UniformSeed> c1_seed;
  // The stored polynomials one after the other, each limbs x N words, limb-major (NTT domain);
  // page-locked on CUDA (Backend::host_staging_allocator).
  Buffer words;
};

// Copies the ciphertext's words to host memory (compact: c1 as its seed when it has one).
HostCiphertext download(const Context& ctx, const Ciphertext& ct, const SaveOptions& options = {});
// The ciphertext on the Context's backend (a seeded c1 is expanded there).
Ciphertext upload(const ContextPtr& ctx, const HostCiphertext& host);
u64 serialized_size(const Context& ctx, const HostCiphertext& host);
std::vector<std::uint8_t> to_bytes(const Context& ctx, const HostCiphertext& host,
                                   const SaveOptions& options = {});
void to_bytes(const Context& ctx, const HostCiphertext& host, std::span<std::uint8_t> out,
              const SaveOptions& options = {});
// Every check of load_ciphertext (ParameterError / ContextError alike); nothing is uploaded.
HostCiphertext load_host_ciphertext(const Context& ctx, std::span<const std::uint8_t> bytes,
                                    const LoadOptions& options = {});

// Shorthands kept from the first ciphertext API (same format as to_bytes / load_ciphertext).
std::vector<std::uint8_t> serialize(const Context& ctx, const Ciphertext& ct);
Ciphertext deserialize_ciphertext(const std::shared_ptr<const Context>& ctx,
                                  const std::vector<std::uint8_t>& bytes);

// The fingerprint of the Context's parameter set (theo/math/fingerprint.h).
Fingerprint context_fingerprint(const Context& ctx);

}  // namespace theo
