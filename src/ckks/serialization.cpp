#include "theo/ckks/serialization.h"

#include <cstring>
#include <string>

#include "ckks/checks.h"
#include "theo/ckks/encryptor.h"
#include "theo/errors.h"

namespace theo {

namespace {

// Format 2: a seeded ciphertext's `a` is Backend::sample_uniform(seed, 0) (ChaCha20 per prime and
// block); format 1 files expanded their seed differently, so they are refused by name.
constexpr char kMagic[8] = {'T', 'H', 'E', 'O', 'C', 'T', 'X', '2'};
constexpr char kMagicV1[8] = {'T', 'H', 'E', 'O', 'C', 'T', 'X', '1'};
constexpr std::size_t kHeaderBytes = 56;
constexpr u32 kFlagSeeded = 1;

// Fixed little-endian layout regardless of the host.
void put_u32(std::vector<std::uint8_t>& out, u32 v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<std::uint8_t>& out, u64 v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_f64(std::vector<std::uint8_t>& out, double d) {
  u64 v = 0;
  std::memcpy(&v, &d, sizeof v);
  put_u64(out, v);
}

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& bytes) : bytes_(bytes) {}
  void need(std::size_t n) const {
    if (pos_ + n > bytes_.size()) {
      throw ParameterError("deserialize_ciphertext: data truncated (" +
                           std::to_string(bytes_.size()) + " bytes)");
    }
  }
  u32 u32_le() {
    need(4);
    u32 v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<u32>(bytes_[pos_++]) << (8 * i);
    return v;
  }
  u64 u64_le() {
    need(8);
    u64 v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<u64>(bytes_[pos_++]) << (8 * i);
    return v;
  }
  double f64() {
    const u64 v = u64_le();
    double d = 0;
    std::memcpy(&d, &v, sizeof d);
    return d;
  }
  const std::uint8_t* take(std::size_t n) {
    need(n);
    const std::uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::size_t remaining() const { return bytes_.size() - pos_; }

 private:
  const std::vector<std::uint8_t>& bytes_;
  std::size_t pos_ = 0;
};

void put_poly(const Context& ctx, std::vector<std::uint8_t>& out, const RnsPoly& poly) {
  std::vector<u32> words(poly.words());
  ctx.backend().download(poly.cref(), words.data());
  for (const u32 w : words)
    put_u32(out, w);
}

RnsPoly get_poly(const Context& ctx, Reader& in, const Basis& basis) {
  Backend& be = ctx.backend();
  RnsPoly poly = be.make_poly(basis);
  std::vector<u32> words(poly.words());
  const std::uint8_t* p = in.take(words.size() * 4);
  for (std::size_t i = 0; i < words.size(); ++i) {
    words[i] = static_cast<u32>(p[4 * i]) | static_cast<u32>(p[4 * i + 1]) << 8 |
               static_cast<u32>(p[4 * i + 2]) << 16 | static_cast<u32>(p[4 * i + 3]) << 24;
  }
  for (u32 l = 0; l < basis.size; ++l) {
    const u32 q = ctx.prime(basis[l]);
    for (u32 i = 0; i < ctx.n(); ++i) {
      if (words[static_cast<std::size_t>(l) * ctx.n() + i] >= q) {
        throw ParameterError("deserialize_ciphertext: word not reduced modulo its prime");
      }
    }
  }
  be.upload(words.data(), poly.ref());
  return poly;
}

}  // namespace

u64 context_fingerprint(const Context& ctx) {
  u64 h = 1469598103934665603ull;
  auto mix = [&h](u32 v) {
    for (int i = 0; i < 4; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(ctx.log_n());
  for (const u32 q : ctx.ring().primes)
    mix(q);
  return h;
}

std::vector<std::uint8_t> serialize(const Context& ctx, const Ciphertext& ct) {
  detail::require_usable(ctx, ct, "serialize: ciphertext");
  const bool seeded = ct.is_seeded() && ct.size() == 2;
  std::vector<std::uint8_t> out;
  const std::size_t poly_bytes = ct.poly(0).words() * 4;
  out.reserve(kHeaderBytes + 32 + poly_bytes * (seeded ? 1 : ct.size()));
  for (const char c : kMagic)
    out.push_back(static_cast<std::uint8_t>(c));
  put_u32(out, ctx.log_n());
  put_u32(out, ct.level());
  put_u32(out, ct.size());
  put_u32(out, seeded ? kFlagSeeded : 0u);
  put_u32(out, ct.slots());
  put_u32(out, ct.poly(0).limbs());
  const double hi = static_cast<double>(ct.scale());
  put_f64(out, hi);
  put_f64(out, static_cast<double>(ct.scale() - hi));
  put_u64(out, context_fingerprint(ctx));
  if (seeded) {
    for (const std::uint8_t b : *ct.seed())
      out.push_back(b);
    put_poly(ctx, out, ct.poly(0));
  } else {
    for (const RnsPoly& p : ct.polys())
      put_poly(ctx, out, p);
  }
  return out;
}

Ciphertext deserialize_ciphertext(const std::shared_ptr<const Context>& ctx,
                                  const std::vector<std::uint8_t>& bytes) {
  if (!ctx) throw ContextError("deserialize_ciphertext: the Context is null");
  Reader in(bytes);
  const std::uint8_t* magic = in.take(8);
  if (std::memcmp(magic, kMagicV1, 8) == 0) {
    throw ParameterError(
        "deserialize_ciphertext: format 1 (an older theodosian) expanded seeded ciphertexts "
        "differently; re-encrypt or re-serialize the ciphertext with this version");
  }
  if (std::memcmp(magic, kMagic, 8) != 0) {
    throw ParameterError("deserialize_ciphertext: not a theodosian ciphertext (bad magic)");
  }
  const u32 log_n = in.u32_le();
  const u32 level = in.u32_le();
  const u32 size = in.u32_le();
  const u32 flags = in.u32_le();
  const u32 slots = in.u32_le();
  const u32 limbs = in.u32_le();
  const double hi = in.f64();
  const double lo = in.f64();
  const u64 fingerprint = in.u64_le();
  if (log_n != ctx->log_n() || fingerprint != context_fingerprint(*ctx)) {
    throw ContextError(
        "deserialize_ciphertext: the data was written by a Context with another "
        "parameter set (prime table fingerprint differs)");
  }
  if (level > ctx->max_level() || limbs != ctx->level(level).limbs || size < 2 || size > 3 ||
      (flags & ~kFlagSeeded) != 0 || slots == 0 || slots > ctx->max_slots()) {
    throw ParameterError("deserialize_ciphertext: malformed header");
  }
  const bool seeded = (flags & kFlagSeeded) != 0;
  if (seeded && size != 2) throw ParameterError("deserialize_ciphertext: malformed header");
  const Basis& basis = ctx->level(level).q_basis;
  std::vector<RnsPoly> polys;
  Prng::Seed seed{};
  if (seeded) {
    const std::uint8_t* s = in.take(seed.size());
    std::memcpy(seed.data(), s, seed.size());
    polys.push_back(get_poly(*ctx, in, basis));
    polys.push_back(expand_seeded_uniform(*ctx, seed, level));
  } else {
    for (u32 i = 0; i < size; ++i)
      polys.push_back(get_poly(*ctx, in, basis));
  }
  if (in.remaining() != 0) throw ParameterError("deserialize_ciphertext: trailing bytes");
  Ciphertext ct(ctx->id(), level, static_cast<long double>(hi) + lo, slots, std::move(polys));
  if (seeded) ct.set_seed(seed);
  return ct;
}

}  // namespace theo
