// Fuzzes load_evaluation_keys (theo/ckks/serialization.h; bootstrapping keys are such bundles)
// with the checksums off, loading all Galois keys or a subset (picked from the input size): every
// other check must hold, and whatever loads must serialize and load again to the same bytes.

#include "fuzz_context.h"

namespace {

std::vector<std::uint8_t> resave(const theo::Context& ctx, const theo::EvaluationKeys& e) {
  const theo::EvaluationKeysView v{
      e.relin.empty() ? nullptr : &e.relin, e.galois.empty() ? nullptr : &e.galois,
      e.to_sparse.empty() ? nullptr : &e.to_sparse, e.to_dense.empty() ? nullptr : &e.to_dense};
  return theo::to_bytes(ctx, v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace theo;
  const ContextPtr& ctx = fuzz::context();
  LoadOptions o = fuzz::options();
  if (size % 2 == 1) o.galois_elements = std::vector<u32>{5};
  std::vector<std::uint8_t> first;
  try {
    first = resave(*ctx, load_evaluation_keys(ctx, fuzz::bytes(data, size), o));
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_round_trip(first, [&](std::span<const std::uint8_t> b) {
    return resave(*ctx, load_evaluation_keys(ctx, b));
  });
  return 0;
}
