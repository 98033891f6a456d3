#include "theo/ckks/encoder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "ckks/checks.h"
#include "ckks/rns_util.h"
#include "ckks/special_fft.h"
#include "common/thread_pool.h"
#include "theo/errors.h"

namespace theo {

struct Encoder::Tables {
  explicit Tables(u32 log_n) : fft(log_n) {}
  detail::SpecialFft fft;
  // Exact BConv plans from the first k primes of a level to the rest, keyed by (level, k).
  std::mutex plans_mu;
  std::map<std::pair<u32, u32>, std::shared_ptr<const BConvPlan>> spread_plans;
};

// The host half of one encoding: the rounded coefficients modulo the first source_limbs primes of
// the level (limb-major, N words each), enough primes that their product exceeds 4 max |coeff|.
struct Encoder::HostPlaintext {
  u32 slots = 0;
  u32 source_limbs = 0;
  std::vector<u32> words;
};

namespace {

long double checked_scale(const Context& ctx, u32 level, std::optional<long double> scale) {
  const long double delta = scale.value_or(ctx.level(level).scale);
  if (!(delta > 0) || !std::isfinite(delta)) {
    throw ParameterError("Encoder::encode: scale must be positive and finite");
  }
  return delta;
}

}  // namespace

Encoder::Encoder(std::shared_ptr<const Context> ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw ContextError("Encoder: the Context is null");
  tables_ = std::make_unique<Tables>(ctx_->log_n());
}
Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

Encoder::HostPlaintext Encoder::encode_host(std::span<const std::complex<double>> values, u32 level,
                                            long double delta) const {
  const LevelData& lv = ctx_->level(level);
  const u32 n_max = ctx_->max_slots();
  if (values.size() > n_max) {
    throw ParameterError("Encoder::encode: " + std::to_string(values.size()) +
                         " values exceed the " + std::to_string(n_max) + " slots");
  }
  const u32 slots = std::bit_ceil(std::max<u32>(1, static_cast<u32>(values.size())));
  // |value| * delta < Q_l / 2 keeps every coefficient (|coefficient| <= max |value|) inside the
  // centered range of the modulus, so the value decodes; beyond it the words wrap around.
  const long double max_scaled = std::ldexp(1.0L, static_cast<int>(std::floor(lv.log2_q)) - 1);
  const long double max_value = max_scaled / delta;
  std::vector<detail::SpecialFft::Complex> u(slots);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double re = values[i].real(), im = values[i].imag();
    if (std::isnan(re) || std::isnan(im)) {
      throw ParameterError("Encoder::encode: value " + std::to_string(i) + " is NaN");
    }
    if (std::isinf(re) || std::isinf(im)) {
      throw ParameterError("Encoder::encode: value " + std::to_string(i) + " is infinite");
    }
    const long double magnitude = std::hypot(static_cast<long double>(re), im);
    if (magnitude >= max_value) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "Encoder::encode: value %zu (|value| = %.6g) scaled by 2^%.2f is 2^%.2f, "
                    "which does not fit the modulus of level %u (2^%.2f): the largest magnitude "
                    "this level and scale can encode is %.6g (2^%.2f)",
                    i, static_cast<double>(magnitude), static_cast<double>(std::log2(delta)),
                    static_cast<double>(std::log2(magnitude * delta)), level, lv.log2_q,
                    static_cast<double>(max_value), static_cast<double>(std::log2(max_value)));
      throw ParameterError(buf);
    }
    u[i] = {re, im};
  }
  tables_->fft.inverse(u);

  const u32 n = ctx_->n();
  const u32 gap = n / (2 * slots);
  std::vector<long double> coeffs(2 * slots);
  long double max_abs = 0;
  for (u32 k = 0; k < slots; ++k) {
    coeffs[k] = std::round(u[k].real() * delta);
    coeffs[k + slots] = std::round(u[k].imag() * delta);
    max_abs = std::max({max_abs, std::fabs(coeffs[k]), std::fabs(coeffs[k + slots])});
  }
  if (max_abs > 0 && std::log2(max_abs) >= lv.log2_q - 1) {
    throw ParameterError("Encoder::encode: scaled values (2^" +
                         std::to_string(static_cast<double>(std::log2(max_abs))) +
                         ") do not fit the modulus of level " + std::to_string(level) + " (2^" +
                         std::to_string(lv.log2_q) + ")");
  }
  // Source primes: a product above 4 max |coeff| keeps the coefficients well inside the exact
  // BConv's (-Q/2, Q/2], so the spread limbs get exactly the words a direct reduction would give.
  const double log2_max = max_abs > 0 ? static_cast<double>(std::log2(max_abs)) : 0.0;
  u32 source = 0;
  double log2_source = 0;
  while (source < lv.limbs && log2_source < log2_max + 2.0) {
    log2_source += std::log2(static_cast<double>(ctx_->prime(lv.q_basis[source])));
    ++source;
  }
  source = std::max<u32>(source, 1);

  HostPlaintext host;
  host.slots = slots;
  host.source_limbs = source;
  host.words.assign(static_cast<std::size_t>(source) * n, 0);
  for (u32 l = 0; l < source; ++l) {
    const u32 q = ctx_->prime(lv.q_basis[l]);
    u32* row = host.words.data() + static_cast<std::size_t>(l) * n;
    for (u32 k = 0; k < 2 * slots; ++k) {
      row[static_cast<std::size_t>(k) * gap] = detail::reduce_long_double(coeffs[k], q);
    }
  }
  return host;
}

Plaintext Encoder::encode_on_backend(const HostPlaintext& host, u32 level,
                                     long double delta) const {
  const LevelData& lv = ctx_->level(level);
  Backend& be = ctx_->backend();
  RnsPoly poly = be.make_poly(lv.q_basis);
  const u32 k = host.source_limbs;
  be.upload(host.words.data(), poly.slice(0, k));
  if (k < lv.limbs) {
    std::shared_ptr<const BConvPlan> plan;
    {
      const std::lock_guard<std::mutex> lock(tables_->plans_mu);
      auto& slot = tables_->spread_plans[{level, k}];
      if (!slot)
        slot = be.make_bconv(lv.q_basis.slice(0, k), lv.q_basis.slice(k, lv.limbs - k), true);
      plan = slot;
    }
    be.bconv(*plan, poly.slice(0, k), poly.slice(k, lv.limbs - k));
  }
  const PolyRef refs[] = {poly.ref()};
  be.ntt(refs);
  return Plaintext(ctx_->id(), level, delta, host.slots, std::move(poly));
}

Plaintext Encoder::encode(std::span<const std::complex<double>> values, u32 level,
                          std::optional<long double> scale) const {
  const long double delta = checked_scale(*ctx_, level, scale);
  return encode_on_backend(encode_host(values, level, delta), level, delta);
}

std::vector<Plaintext> Encoder::encode_batch(
    std::span<const std::vector<std::complex<double>>> values, u32 level,
    std::optional<long double> scale) const {
  const long double delta = checked_scale(*ctx_, level, scale);
  std::vector<Plaintext> out;
  out.reserve(values.size());
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // Chunks bound the host memory in flight; each chunk's host halves run in parallel.
  const std::size_t chunk = 2 * static_cast<std::size_t>(threads);
  std::optional<ThreadPool> pool;
  if (threads > 1 && values.size() > 1) pool.emplace(threads);
  std::vector<HostPlaintext> host(std::min(chunk, values.size()));
  for (std::size_t first = 0; first < values.size(); first += chunk) {
    const std::size_t count = std::min(chunk, values.size() - first);
    const auto work = [&](std::size_t i) {
      host[i] = encode_host(values[first + i], level, delta);
    };
    if (pool) {
      pool->run(count, work);
    } else {
      for (std::size_t i = 0; i < count; ++i)
        work(i);
    }
    for (std::size_t i = 0; i < count; ++i)
      out.push_back(encode_on_backend(host[i], level, delta));
  }
  return out;
}

Plaintext Encoder::encode(std::span<const double> values, u32 level,
                          std::optional<long double> scale) const {
  std::vector<std::complex<double>> c(values.begin(), values.end());
  return encode(std::span<const std::complex<double>>(c), level, scale);
}

Plaintext Encoder::encode(std::span<const std::complex<double>> values) const {
  return encode(values, ctx_->default_encryption_level());
}

Plaintext Encoder::encode(std::span<const double> values) const {
  return encode(values, ctx_->default_encryption_level());
}

std::vector<std::complex<double>> Encoder::decode(const Plaintext& pt) const {
  detail::require_usable(*ctx_, pt, "Encoder::decode: plaintext");
  const LevelData& lv = ctx_->level(pt.level());
  const u32 n = ctx_->n();
  const u32 slots = pt.slots();
  if (slots == 0 || slots > ctx_->max_slots() || !std::has_single_bit(slots)) {
    throw ParameterError("Encoder::decode: plaintext has an invalid slot count " +
                         std::to_string(slots));
  }
  Backend& be = ctx_->backend();
  RnsPoly coeff = be.make_poly(lv.q_basis);
  be.copy(pt.poly().cref(), coeff.ref());
  const PolyRef refs[] = {coeff.ref()};
  be.intt(refs);
  std::vector<u32> host(static_cast<std::size_t>(lv.limbs) * n);
  be.download(coeff.cref(), host.data());

  const u32 gap = n / (2 * slots);
  std::vector<u32> residues(lv.limbs);
  auto coefficient = [&](u32 k) {
    const std::size_t idx = static_cast<std::size_t>(k) * gap;
    for (u32 l = 0; l < lv.limbs; ++l)
      residues[l] = host[static_cast<std::size_t>(l) * n + idx];
    return lv.crt->centered_to_long_double(std::span<const u32>(residues), pt.scale());
  };
  std::vector<detail::SpecialFft::Complex> u(slots);
  for (u32 k = 0; k < slots; ++k)
    u[k] = {coefficient(k), coefficient(k + slots)};
  tables_->fft.forward(u);
  std::vector<std::complex<double>> out(slots);
  for (u32 j = 0; j < slots; ++j) {
    out[j] = {static_cast<double>(u[j].real()), static_cast<double>(u[j].imag())};
  }
  return out;
}

std::vector<double> Encoder::decode_real(const Plaintext& pt) const {
  const auto c = decode(pt);
  std::vector<double> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i)
    out[i] = c[i].real();
  return out;
}

}  // namespace theo
