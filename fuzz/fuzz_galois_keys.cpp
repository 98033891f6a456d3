// Fuzzes load_galois_keys (theo/ckks/serialization.h) with the checksums off, loading all keys or
// a subset (picked from the input size, so that skipping is fuzzed too): every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  const ContextPtr& ctx = fuzz::context();
  LoadOptions o = fuzz::options();
  const u32 two_n = 2 * ctx->n();
  if (size % 3 == 1) o.galois_elements = std::vector<u32>{5};
  if (size % 3 == 2) o.galois_elements = std::vector<u32>{5, two_n - 1};
  std::vector<std::uint8_t> first;
  try {
    first = to_bytes(*ctx, load_galois_keys(ctx, fuzz::bytes(data, size), o));
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_round_trip(first, [&](std::span<const std::uint8_t> b) {
    return to_bytes(*ctx, load_galois_keys(ctx, b));
  });
  return 0;
}
