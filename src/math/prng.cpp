// ChaCha20 PRNG (libsodium) and the scheme's samplers (see theo/math/prng.h).

#include "theo/math/prng.h"

#include <gmp.h>
#include <sodium.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "math/gmp_number.h"
#include "theo/errors.h"

namespace theo {

static_assert(sizeof(unsigned long) == sizeof(u64), "theodosian needs a 64-bit unsigned long");

namespace {

void ensure_sodium() {
  static const int rc = sodium_init();  // thread-safe one-time initialization
  if (rc < 0) throw Error("libsodium: sodium_init() failed");
}

// All-zero input for crypto_stream_chacha20_xor_ic (the XOR with zeros is the raw keystream).
constexpr std::size_t kChaChaBlockBytes = 64;
constexpr std::array<std::uint8_t, 512> kZeros{};
constexpr std::array<std::uint8_t, crypto_stream_chacha20_NONCEBYTES> kNonce{};
static_assert(crypto_stream_chacha20_KEYBYTES == Prng::kSeedBytes);

u64 load_le64(const std::uint8_t* p) {
  u64 v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

}  // namespace

// ---- Prng ---------------------------------------------------------------------------------------

Prng::Seed Prng::os_seed() {
  ensure_sodium();
  Seed s;
  randombytes_buf(s.data(), s.size());
  return s;
}

Prng::Prng() : Prng(os_seed()) {}

Prng::Prng(const Seed& seed) : key_(seed) {
  ensure_sodium();
}

void Prng::refill() {
  static_assert(sizeof(buf_) % kChaChaBlockBytes == 0);
  // Blocks counter_ .. counter_ + 7 of the ChaCha20 keystream under key_ (nonce 0).
  crypto_stream_chacha20_xor_ic(buf_.data(), kZeros.data(), buf_.size(), kNonce.data(), counter_,
                                key_.data());
  counter_ += buf_.size() / kChaChaBlockBytes;
  pos_ = 0;
}

void Prng::fill_bytes(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    if (pos_ == buf_.size()) refill();
    const std::size_t take = std::min(out.size() - done, buf_.size() - pos_);
    std::memcpy(out.data() + done, buf_.data() + pos_, take);
    pos_ += take;
    done += take;
  }
}

u64 Prng::next_u64() {
  std::uint8_t b[8];
  fill_bytes(b);
  return load_le64(b);  // little-endian on every platform
}

u32 Prng::next_u32() {
  std::uint8_t b[4];
  fill_bytes(b);
  return static_cast<u32>(b[0]) | (static_cast<u32>(b[1]) << 8) | (static_cast<u32>(b[2]) << 16) |
         (static_cast<u32>(b[3]) << 24);
}

namespace {

// A value uniform in [0, bound) from next(), uniform over all T: the lowest 2^bits(T) mod bound
// values are rejected so that the rest splits into equal classes.
template <typename T, typename Next>
T uniform_below(T bound, const char* op, Next&& next) {
  if (bound == 0) throw ParameterError(std::string(op) + ": bound must be >= 1");
  const T threshold = static_cast<T>(-bound) % bound;
  for (;;) {
    const T x = next();
    if (x >= threshold) return x % bound;
  }
}

}  // namespace

u32 Prng::uniform(u32 bound) {
  return uniform_below(bound, "Prng::uniform", [this] { return next_u32(); });
}

u64 Prng::uniform64(u64 bound) {
  return uniform_below(bound, "Prng::uniform64", [this] { return next_u64(); });
}

double Prng::uniform_real() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

Prng Prng::fork() {
  Seed child;
  fill_bytes(child);
  return Prng(child);
}

// ---- samplers -----------------------------------------------------------------------------------

namespace {

// Hands out random bits one at a time, 64 per keystream word.
class BitSource {
 public:
  explicit BitSource(Prng& prng) : prng_(prng) {}
  u32 bits(u32 count) {  // count <= 32
    if (left_ < count) {
      word_ = prng_.next_u64();
      left_ = 64;
    }
    const u32 v = static_cast<u32>(word_ & ((u64{1} << count) - 1));
    word_ >>= count;
    left_ -= count;
    return v;
  }

 private:
  Prng& prng_;
  u64 word_ = 0;
  u32 left_ = 0;
};

using detail::Mpf;
using detail::Mpz;

constexpr mp_bitcnt_t kPrec = 256;

// out = exp(t) for 0 <= t <= ~50, in kPrec-bit GMP floats: exp(t) = exp(t / 2^10)^(2^10), the
// inner one by its Taylor series. Pure integer arithmetic: the same bits on every platform.
void mpf_exp(mpf_t out, const mpf_t t) {
  constexpr unsigned kHalvings = 10;
  Mpf u(kPrec), term(kPrec);
  mpf_div_2exp(u, t, kHalvings);
  mpf_set_ui(out, 1);
  mpf_set_ui(term, 1);
  for (unsigned long k = 1; k <= 40; ++k) {
    mpf_mul(term, term, u);
    mpf_div_ui(term, term, k);
    mpf_add(out, out, term);
  }
  for (unsigned i = 0; i < kHalvings; ++i)
    mpf_mul(out, out, out);
}

// Cumulative distribution table of the rounded Gaussian of deviation sigma on [-B, B],
// B = floor(6 sigma): cdt[v] = floor(2^64 * P(X <= v - B)) for v in [0, 2B).
std::vector<u64> gaussian_cdt(double sigma, u32& bound) {
  bound = static_cast<u32>(std::floor(6.0 * sigma));
  const u32 count = 2 * bound + 1;
  Mpf two_var(kPrec), t(kPrec), e(kPrec), sum(kPrec), acc(kPrec);
  mpf_set_d(two_var, sigma);  // exact
  mpf_mul(two_var, two_var, two_var);
  mpf_mul_2exp(two_var, two_var, 1);  // 2 sigma^2
  std::deque<Mpf> w;                  // w[k] = exp(-k^2 / (2 sigma^2)), k in [0, B]
  mpf_set_ui(sum, 0);
  for (u32 k = 0; k <= bound; ++k) {
    mpf_set_ui(t, static_cast<unsigned long>(k) * k);
    mpf_div(t, t, two_var);
    mpf_exp(e, t);
    w.emplace_back(kPrec);
    mpf_ui_div(w.back(), 1, e);
    mpf_add(sum, sum, w.back());
    if (k > 0) mpf_add(sum, sum, w.back());
  }
  std::vector<u64> cdt(count - 1);
  Mpz z;
  mpf_set_ui(acc, 0);
  for (u32 v = 0; v + 1 < count; ++v) {
    const u32 k = v < bound ? bound - v : v - bound;  // |v - B|
    mpf_add(acc, acc, w[k]);
    mpf_div(t, acc, sum);
    mpf_mul_2exp(t, t, 64);
    mpz_set_f(z, t);
    if (!mpz_fits_ulong_p(z)) throw Error("sample_gaussian: table overflow");  // unreachable
    cdt[v] = mpz_get_ui(z);
  }
  return cdt;
}

struct GaussianTable {
  std::vector<u64> cdt;
  u32 bound = 0;
};

// gaussian_cdt() costs ~1 ms of GMP arithmetic; key generation samples hundreds of errors with
// the same sigma, so each table is computed once per process.
const GaussianTable& cached_gaussian_cdt(double sigma) {
  static std::mutex mu;
  static std::map<double, GaussianTable> tables;  // node-based: references stay valid
  const std::lock_guard<std::mutex> lock(mu);
  auto it = tables.find(sigma);
  if (it == tables.end()) {
    GaussianTable t;
    t.cdt = gaussian_cdt(sigma, t.bound);
    it = tables.emplace(sigma, std::move(t)).first;
  }
  return it->second;
}

}  // namespace

std::vector<i32> sample_ternary_hw(Prng& prng, u32 n, u32 h) {
  if (h > n) {
    throw ParameterError("sample_ternary_hw: hamming weight " + std::to_string(h) +
                         " exceeds degree " + std::to_string(n));
  }
  std::vector<i32> out(n, 0);
  std::vector<u32> pos(n);
  for (u32 i = 0; i < n; ++i)
    pos[i] = i;
  BitSource bits(prng);
  // Partial Fisher-Yates: pos[0..h) becomes a uniform h-subset, each position gets a random sign.
  for (u32 i = 0; i < h; ++i) {
    const u32 j = i + prng.uniform(n - i);
    std::swap(pos[i], pos[j]);
    out[pos[i]] = bits.bits(1) ? 1 : -1;
  }
  return out;
}

std::vector<i32> sample_ternary(Prng& prng, u32 n) {
  std::vector<i32> out(n);
  BitSource bits(prng);
  for (u32 i = 0; i < n; ++i) {
    const u32 b = bits.bits(2);  // 0, 1 -> 0; 2 -> 1; 3 -> -1
    out[i] = (b < 2) ? 0 : (b == 2 ? 1 : -1);
  }
  return out;
}

namespace {

void check_sigma(double sigma) {
  if (!(sigma > 0.0) || !(sigma <= 1 << 20)) {
    throw ParameterError("sample_gaussian: sigma must be in (0, 2^20], got " +
                         std::to_string(sigma));
  }
}

}  // namespace

void gaussian_from_bytes(std::span<const std::uint8_t> bytes, std::span<i32> out, double sigma) {
  check_sigma(sigma);
  if (bytes.size() != out.size() * kGaussianBytesPerValue) {
    throw ParameterError("gaussian_from_bytes: " + std::to_string(bytes.size()) + " bytes for " +
                         std::to_string(out.size()) + " values (8 per value)");
  }
  const GaussianTable& table = cached_gaussian_cdt(sigma);
  const std::vector<u64>& cdt = table.cdt;
  const i32 bound = static_cast<i32>(table.bound);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const u64 u = load_le64(bytes.data() + i * kGaussianBytesPerValue);
    // Scan the whole table (no early exit): the index is the number of entries <= u.
    u32 idx = 0;
    for (const u64 c : cdt)
      idx += static_cast<u32>(u >= c);
    out[i] = static_cast<i32>(idx) - bound;
  }
}

std::vector<i32> sample_gaussian(Prng& prng, u32 n, double sigma) {
  check_sigma(sigma);
  // The same keystream words as n calls of next_u64(), drawn in one call.
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n) * kGaussianBytesPerValue);
  prng.fill_bytes(bytes);
  std::vector<i32> out(n);
  gaussian_from_bytes(bytes, out, sigma);
  return out;
}

}  // namespace theo
