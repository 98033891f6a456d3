// Fuzzes load_galois_keys (theo/io/serialization.h) with the checksums off, loading all keys or
// a subset (picked from the input size, so that skipping is fuzzed too): every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  LoadOptions o = fuzz::options();
  const u32 two_n = 2 * fuzz::context()->n();
  if (size % 3 == 1) o.galois_elements = std::vector<u32>{5};
  if (size % 3 == 2) o.galois_elements = std::vector<u32>{5, two_n - 1};
  return fuzz::load_then_round_trip(data, size, o, [](auto b, const auto& lo) {
    return load_galois_keys(fuzz::context(), b, lo);
  });
}
