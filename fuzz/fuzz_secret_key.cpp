// Fuzzes load_secret_key (theo/ckks/serialization.h) with the checksums off: every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  const ContextPtr& ctx = fuzz::context();
  std::vector<std::uint8_t> first;
  try {
    first = to_bytes(*ctx, load_secret_key(ctx, fuzz::bytes(data, size), fuzz::options()));
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_round_trip(first, [&](std::span<const std::uint8_t> b) {
    return to_bytes(*ctx, load_secret_key(ctx, b));
  });
  return 0;
}
