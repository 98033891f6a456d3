// Fuzzes load_secret_key (theo/io/serialization.h) with the checksums off: every other check must
// hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  return fuzz::load_then_round_trip(data, size, fuzz::options(), [](auto b, const auto& o) {
    return load_secret_key(fuzz::context(), b, o);
  });
}
