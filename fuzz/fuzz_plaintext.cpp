// Fuzzes load_plaintext (theo/ckks/serialization.h) with the checksums off: every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  const ContextPtr& ctx = fuzz::context();
  SaveOptions hints;
  std::vector<std::uint8_t> first;
  try {
    ObjectInfo info;
    const Plaintext loaded = load_plaintext(ctx, fuzz::bytes(data, size), fuzz::options(), &info);
    hints.real_slots = info.real_slots;
    first = to_bytes(*ctx, loaded, hints);
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_round_trip(first, [&](std::span<const std::uint8_t> b) {
    return to_bytes(*ctx, load_plaintext(ctx, b), hints);
  });
  return 0;
}
