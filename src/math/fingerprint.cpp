// Parameter fingerprints (theo/math/fingerprint.h).

#include "theo/math/fingerprint.h"

#include <sodium.h>

#include <vector>

#include "theo/errors.h"

namespace theo {

namespace {

// The encoding is fixed: changing it changes every fingerprint, so a new encoding needs a new
// domain tag.
constexpr char kDomain[] = "theodosian parameter fingerprint v1";

void put_u64(std::vector<std::uint8_t>& out, u64 v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_list(std::vector<std::uint8_t>& out, const std::vector<u64>& list) {
  put_u64(out, list.size());
  for (const u64 v : list)
    put_u64(out, v);
}

}  // namespace

Fingerprint parameter_fingerprint(const ParameterSet& p) {
  std::vector<std::uint8_t> enc(kDomain, kDomain + sizeof kDomain);
  put_u64(enc, p.log_degree);
  put_u64(enc, p.log_default_scale);
  put_u64(enc, p.boot ? 1 : 0);
  put_u64(enc, p.dense_hamming_weight);
  put_u64(enc, p.sparse_hamming_weight);
  put_u64(enc, p.num_cts_levels);
  put_u64(enc, p.num_stc_levels);
  put_list(enc, p.terminal_primes);
  put_list(enc, p.main_primes);
  put_list(enc, p.auxiliary_primes);
  put_u64(enc, p.default_encryption_level);
  put_u64(enc, p.level_config.size());
  for (const auto& c : p.level_config) {
    put_u64(enc, c[0]);
    put_u64(enc, c[1]);
  }
  put_u64(enc, p.additional_base[0]);
  put_u64(enc, p.additional_base[1]);
  if (sodium_init() < 0) throw Error("libsodium: sodium_init() failed");
  Fingerprint f{};
  crypto_generichash(f.data(), f.size(), enc.data(), enc.size(), nullptr, 0);
  return f;
}

std::string fingerprint_hex(const Fingerprint& f) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * f.size());
  for (const std::uint8_t b : f) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace theo
