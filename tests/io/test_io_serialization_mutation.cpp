// 1,000 random mutations of each serialized object type: bit flips, byte overwrites, truncation,
// extension and header field changes, as they come (the checksums must catch them), plus header and
// section field changes resealed with fresh checksums (the checks behind the checksums must catch
// them). Every load either throws a theodosian Error or returns an object; a returned object must
// be the original (re-serializing gives the original bytes) or, for resealed data, exactly the
// object those bytes describe (re-serializing gives the mutated bytes). Anything else - another
// exception, a crash, a sanitizer report, or an object that differs from its bytes - fails.

#include <functional>
#include <map>
#include <random>

#include "ckks/ckks_test_util.h"
#include "serialization_test_util.h"

namespace theo::test {
namespace {

constexpr int kMutations = 1000;

using Bytes = std::vector<std::uint8_t>;
// Loads the bytes and serializes the result again (throws on bad data).
using RoundTrip = std::function<Bytes(const Bytes&)>;

struct Outcome {
  int errors = 0;
  int identical = 0;
  int resealed_valid = 0;
};

enum class Kind {
  kBitFlips,
  kBytes,
  kTruncate,
  kExtend,
  kHeaderRaw,
  kHeaderResealed,
  kFieldResealed
};
const char* kind_name(Kind k) {
  static const char* names[] = {"bit flips",     "byte overwrite", "truncation",
                                "extension",     "header field",   "header field resealed",
                                "field resealed"};
  return names[static_cast<int>(k)];
}

Bytes mutate(const Bytes& in, Kind kind, std::mt19937_64& rng) {
  Bytes b = in;
  auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  switch (kind) {
    case Kind::kBitFlips: {
      const int flips = 1 + static_cast<int>(pick(8));
      for (int i = 0; i < flips; ++i)
        b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
      break;
    }
    case Kind::kBytes: {
      const std::size_t at = pick(b.size());
      const std::size_t n = std::min<std::size_t>(1 + pick(16), b.size() - at);
      for (std::size_t i = 0; i < n; ++i)
        b[at + i] = static_cast<std::uint8_t>(rng());
      break;
    }
    case Kind::kTruncate:
      b.resize(pick(b.size()));
      break;
    case Kind::kExtend: {
      const std::size_t n = 1 + pick(64);
      for (std::size_t i = 0; i < n; ++i)
        b.push_back(static_cast<std::uint8_t>(rng()));
      break;
    }
    case Kind::kHeaderRaw:
    case Kind::kHeaderResealed: {
      // A 32-bit field of the header (version, type, flags, section count, payload size, one
      // fingerprint word): a random value, a small change or a bit.
      static const std::size_t fields[] = {8, 12, 16, 20, 24, 28, 32, 48};
      const std::size_t at = fields[pick(std::size(fields))];
      const u32 old = serial::get_u32(b, at);
      const u32 v = pick(3) == 0   ? static_cast<u32>(rng())
                    : pick(2) == 0 ? old + static_cast<u32>(1 + pick(4)) - 2u
                                   : old ^ (1u << pick(32));
      serial::set_u32(b, at, v);
      if (kind == Kind::kHeaderResealed) serial::reseal(b);
      break;
    }
    case Kind::kFieldResealed: {
      // A 32-bit word in a section header or in one of the first 48 bytes of a section body
      // (metadata, key records, seeds, first words of a polynomial).
      const auto secs = serial::sections(b);
      const serial::Section& s = secs[pick(secs.size())];
      const std::size_t span = serial::kSectionHeader + std::min<u64>(s.size, 48);
      const std::size_t at = s.header + 4 * pick(span / 4);
      const u32 old = serial::get_u32(b, at);
      const u32 v = pick(3) == 0   ? static_cast<u32>(rng())
                    : pick(2) == 0 ? old + static_cast<u32>(1 + pick(4)) - 2u
                                   : old ^ (1u << pick(32));
      serial::set_u32(b, at, v);
      serial::reseal(b);
      break;
    }
  }
  return b;
}

void run(const char* name, const Bytes& original, const RoundTrip& round_trip) {
  // The unmutated bytes load and serialize back to themselves.
  ASSERT_EQ(round_trip(original), original) << name;
  const u64 seed = std::random_device{}();
  std::printf("[mutation] %-22s %zu bytes, seed %llu\n", name, original.size(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::map<Kind, Outcome> by_kind;
  for (int i = 0; i < kMutations; ++i) {
    const Kind kind = static_cast<Kind>(i % 7);
    const Bytes mutated = mutate(original, kind, rng);
    Outcome& o = by_kind[kind];
    try {
      const Bytes back = round_trip(mutated);
      if (back == original) {
        ++o.identical;
      } else if ((kind == Kind::kHeaderResealed || kind == Kind::kFieldResealed) &&
                 back == mutated) {
        ++o.resealed_valid;  // a well-formed other object, loaded exactly as written
      } else {
        ADD_FAILURE() << name << ": mutation " << i << " (" << kind_name(kind)
                      << ") was accepted as an object that differs from the original (seed " << seed
                      << ")";
      }
    } catch (const Error&) {
      ++o.errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": mutation " << i << " (" << kind_name(kind)
                    << ") raised a non-theodosian exception: " << e.what() << " (seed " << seed
                    << ")";
    }
  }
  for (const auto& [kind, o] : by_kind) {
    std::printf("[mutation]   %-22s errors %4d, identical %3d, valid after reseal %3d\n",
                kind_name(kind), o.errors, o.identical, o.resealed_valid);
  }
}

struct Keys {
  Keys()
      : env(generated_params(10, 2)),
        relin(env.keygen.create_relin_key(env.sk)),
        galois(env.keygen.create_galois_keys(env.sk, {1, -2}, false)),
        other(env.keygen.create_secret_key_with_weight(8)),
        to_sparse(env.keygen.create_switching_key(other, env.sk.ntt().cref())),
        to_dense(env.keygen.create_switching_key(env.sk, other.ntt().cref())) {}
  Env env;
  RelinKey relin;
  GaloisKeys galois;
  SecretKey other;
  SwitchingKey to_sparse, to_dense;
};

Keys& keys() {
  static Keys k;
  return k;
}

template <typename Load>
RoundTrip via(Load load) {
  return [load](const Bytes& b) { return load(std::span<const std::uint8_t>(b)); };
}

TEST(SerializationMutation, Parameters) {
  const ParameterSet p = load_preset("test_boot_n12");
  run("parameters", to_bytes(p),
      via([](std::span<const std::uint8_t> b) { return to_bytes(load_parameters(b)); }));
}

TEST(SerializationMutation, SecretKey) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  run("secret key", to_bytes(ctx, k.env.sk), via([&](std::span<const std::uint8_t> b) {
        return to_bytes(ctx, load_secret_key(k.env.ctx, b));
      }));
}

TEST(SerializationMutation, PublicKey) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  run("public key", to_bytes(ctx, k.env.pk), via([&](std::span<const std::uint8_t> b) {
        return to_bytes(ctx, load_public_key(k.env.ctx, b));
      }));
}

TEST(SerializationMutation, RelinKey) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  run("relin key", to_bytes(ctx, k.relin), via([&](std::span<const std::uint8_t> b) {
        return to_bytes(ctx, load_relin_key(k.env.ctx, b));
      }));
  SaveOptions expanded;
  expanded.compact = false;
  run("relin key (expanded)", to_bytes(ctx, k.relin, expanded),
      via([&](std::span<const std::uint8_t> b) {
        return to_bytes(ctx, load_relin_key(k.env.ctx, b), expanded);
      }));
}

TEST(SerializationMutation, GaloisKeys) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  run("Galois keys", to_bytes(ctx, k.galois), via([&](std::span<const std::uint8_t> b) {
        return to_bytes(ctx, load_galois_keys(k.env.ctx, b));
      }));
}

TEST(SerializationMutation, EvaluationKeys) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  const EvaluationKeysView view{&k.relin, &k.galois, &k.to_sparse, &k.to_dense};
  run("evaluation keys", to_bytes(ctx, view), via([&](std::span<const std::uint8_t> b) {
        const EvaluationKeys e = load_evaluation_keys(k.env.ctx, b);
        const EvaluationKeysView v{e.relin.empty() ? nullptr : &e.relin,
                                   e.galois.empty() ? nullptr : &e.galois,
                                   e.to_sparse.empty() ? nullptr : &e.to_sparse,
                                   e.to_dense.empty() ? nullptr : &e.to_dense};
        return to_bytes(ctx, v);
      }));
}

TEST(SerializationMutation, Plaintext) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  const Plaintext pt = k.env.encoder.encode(random_slots(64), 2);
  run("plaintext", to_bytes(ctx, pt), via([&](std::span<const std::uint8_t> b) {
        ObjectInfo info;
        const Plaintext back = load_plaintext(k.env.ctx, b, {}, &info);
        SaveOptions o;
        o.real_slots = info.real_slots;
        return to_bytes(ctx, back, o);
      }));
}

TEST(SerializationMutation, Ciphertext) {
  Keys& k = keys();
  const Context& ctx = *k.env.ctx;
  const auto round_trip = via([&](std::span<const std::uint8_t> b) {
    ObjectInfo info;
    const Ciphertext back = load_ciphertext(k.env.ctx, b, {}, &info);
    SaveOptions o;
    o.real_slots = info.real_slots;
    return to_bytes(ctx, back, o);
  });
  Encryptor sym(k.env.ctx, k.env.sk);
  run("ciphertext (seeded)", to_bytes(ctx, sym.encrypt(k.env.encoder.encode(random_slots(8), 1))),
      round_trip);
  const Ciphertext ct = k.env.encrypt(random_slots(8), 2);
  run("ciphertext (3 polys)", to_bytes(ctx, k.env.evaluator.multiply(ct, ct)), round_trip);
}

}  // namespace
}  // namespace theo::test
