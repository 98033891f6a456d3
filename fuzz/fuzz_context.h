#pragma once
// Shared by the fuzz harnesses: the small insecure parameter set the seed corpus was made with
// (N = 2^10, 3 + 1 primes), the Context of the fuzzing process, and the load options.
//
// The harnesses load with LoadOptions::verify_integrity = false: a fuzzer cannot forge the
// BLAKE2b checksums, and every check behind them is what must hold against inputs from outside.

#include <cstddef>
#include <cstdint>
#include <span>

#include "theo/theodosian.h"

namespace theo::fuzz {

inline constexpr const char* kParametersJson = R"({
  "name": "fuzz_n10",
  "comment": "INSECURE, fuzzing only: generate_prime_system log_n 10, log_scale 30, levels 1",
  "log_degree": 10,
  "log_default_scale": 30,
  "boot": false,
  "dense_hamming_weight": 512,
  "sparse_hamming_weight": 0,
  "num_cts_levels": 0,
  "num_stc_levels": 0,
  "terminal_primes": [],
  "main_primes": [1067009, 1032193, 1073750017],
  "auxiliary_primes": [2147473409],
  "default_encryption_level": 1,
  "level_config": [[2, 0], [3, 0]],
  "additional_base": [0, 0]
})";

inline const ContextPtr& context() {
  static const ContextPtr ctx = [] {
    ContextOptions o;
    o.backend = BackendChoice::kCpu;
    o.allow_insecure = true;
    o.threads = 1;
    return Context::create(parse_parameters(kParametersJson), o);
  }();
  return ctx;
}

inline LoadOptions options() {
  LoadOptions o;
  o.verify_integrity = false;
  o.max_bytes = u64{64} << 20;
  return o;
}

inline std::span<const std::uint8_t> bytes(const std::uint8_t* data, std::size_t size) {
  return {data, size};
}

// A loaded object must serialize and load again (with the checksums on) to the same bytes.
template <typename Load>
void require_round_trip(const std::vector<std::uint8_t>& first, Load&& load_again) {
  const std::vector<std::uint8_t> second = load_again(std::span<const std::uint8_t>(first));
  if (second != first) __builtin_trap();
}

}  // namespace theo::fuzz
