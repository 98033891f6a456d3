// Fuzzes load_plaintext (theo/io/serialization.h) with the checksums off: every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return theo::fuzz::load_then_round_trip_with_hints(
      data, size, [](const auto&... a) { return theo::load_plaintext(a...); });
}
