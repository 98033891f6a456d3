// Fuzzes load_parameters (theo/ckks/serialization.h) with the checksums off: every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  std::vector<std::uint8_t> first;
  try {
    first = to_bytes(load_parameters(fuzz::bytes(data, size), fuzz::options()));
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_round_trip(
      first, [&](std::span<const std::uint8_t> b) { return to_bytes(load_parameters(b)); });
  return 0;
}
