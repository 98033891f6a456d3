// Fuzzes parameter files (JSON text): parse_parameters validates every field; an accepted set must
// survive to_json -> parse unchanged, get a fingerprint and a security verdict, and small ones
// must build a Context.

#include <string>

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  ParameterSet p;
  try {
    p = parse_parameters(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ParameterError&) {
    return 0;
  }
  const ParameterSet again = parse_parameters(to_json(p));
  if (!(again == p)) __builtin_trap();
  (void)parameter_fingerprint(p);
  try {
    check_security(p, false);
  } catch (const SecurityError&) {
  }
  // Small sets also build their Context (tables, levels, key-switching plans).
  const std::size_t primes =
      p.terminal_primes.size() + p.main_primes.size() + p.auxiliary_primes.size();
  if (p.log_degree <= 11 && primes <= 12 && p.level_config.size() <= 16) {
    ContextOptions o;
    o.backend = BackendChoice::kCpu;
    o.allow_insecure = true;
    o.threads = 1;
    try {
      (void)Context::create(p, o);
    } catch (const ParameterError&) {
    }
  }
  return 0;
}
