// Fuzzes load_evaluation_keys (theo/io/serialization.h; bootstrapping keys are such bundles)
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
  LoadOptions o = fuzz::options();
  if (size % 2 == 1) o.galois_elements = std::vector<u32>{5};
  return fuzz::load_then_round_trip(
      data, size, o,
      [](auto b, const auto& lo) { return load_evaluation_keys(fuzz::context(), b, lo); },
      [](const EvaluationKeys& e) { return resave(*fuzz::context(), e); });
}
