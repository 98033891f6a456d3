#pragma once
// Shared by the fuzz harnesses: the small insecure parameter set the seed corpus was made with
// (N = 2^10, 3 + 1 primes), the Context of the fuzzing process, and the load options.
//
// The harnesses load with LoadOptions::verify_integrity = false: a fuzzer cannot forge the
// BLAKE2b checksums, and every check behind them is what must hold against inputs from outside.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

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

// Saves an object of the fuzzing Context with the default SaveOptions.
struct SaveInContext {
  template <typename T>
  std::vector<std::uint8_t> operator()(const T& object) const {
    return to_bytes(*context(), object);
  }
};

// The "load, then round-trip" harness: `load(bytes, options)` reads the input with
// `first_options`; an input it refuses with an Error ends the run, and whatever loads must `save`
// to bytes that load again with the default LoadOptions (checksums on) and save to the same bytes.
// Returns what LLVMFuzzerTestOneInput returns.
template <typename Load, typename Save = SaveInContext>
int load_then_round_trip(const std::uint8_t* data, std::size_t size,
                         const LoadOptions& first_options, Load&& load, Save&& save = {}) {
  std::vector<std::uint8_t> first;
  try {
    first = save(load(bytes(data, size), first_options));
  } catch (const Error&) {
    return 0;
  }
  require_round_trip(first,
                     [&](std::span<const std::uint8_t> b) { return save(load(b, LoadOptions{})); });
  return 0;
}

// The same for plaintexts and ciphertexts (`load` is load_plaintext or load_ciphertext): they save
// with the slot count their first load reported (ObjectInfo::real_slots) as the hint.
template <typename Load>
int load_then_round_trip_with_hints(const std::uint8_t* data, std::size_t size, Load&& load) {
  std::optional<SaveOptions> hints;
  return load_then_round_trip(
      data, size, options(),
      [&](std::span<const std::uint8_t> b, const LoadOptions& o) {
        ObjectInfo info;
        auto loaded = load(context(), b, o, &info);
        if (!hints) {
          hints.emplace();
          hints->real_slots = info.real_slots;
        }
        return loaded;
      },
      [&](const auto& object) { return to_bytes(*context(), object, *hints); });
}

}  // namespace theo::fuzz
