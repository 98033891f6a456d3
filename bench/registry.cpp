#include "bench_case.h"

namespace theo::bench {

namespace {

// Function-local so registration from other translation units' static objects is ordered.
std::vector<BenchCase>& cases() {
  static std::vector<BenchCase> all;
  return all;
}

}  // namespace

void register_case(BenchCase c) {
  cases().push_back(std::move(c));
}

const std::vector<BenchCase>& registered_cases() {
  return cases();
}

RnsPoly CaseEnv::random_poly(const Basis& basis) {
  const u32 n = backend.n();
  std::vector<u32> w(static_cast<std::size_t>(basis.size) * n);
  for (u32 l = 0; l < basis.size; ++l) {
    std::uniform_int_distribution<u32> dist(0, backend.modulus(basis[l]).q - 1);
    for (u32 c = 0; c < n; ++c)
      w[static_cast<std::size_t>(l) * n + c] = dist(rng);
  }
  RnsPoly p = backend.make_poly(basis);
  backend.upload(w.data(), p.ref());
  return p;
}

}  // namespace theo::bench
