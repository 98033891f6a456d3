// Fuzzes inspect (theo/io/serialization.h), which reads headers and metadata of any object
// type without a Context, with the checksums off.

#include "fuzz_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)theo::inspect(theo::fuzz::bytes(data, size), theo::fuzz::options());
  } catch (const theo::Error&) {
  }
  return 0;
}
