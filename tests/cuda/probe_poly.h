#pragma once
// Inputs of the CUDA probes and micro-benchmarks (bconv_probe.cpp, cuda_microbench.cpp; not
// tests): polynomials of pseudo-random canonical words from the caller's fixed-seed generator.

#include <cstddef>
#include <random>
#include <vector>

#include "theo/ring/backend.h"

namespace theo::probe {

// A polynomial over `b` on `be`, each word rng() mod its limb's prime.
inline RnsPoly random_poly(Backend& be, const Basis& b, std::mt19937& rng) {
  RnsPoly p = be.make_poly(b);
  std::vector<u32> w(p.words());
  for (u32 l = 0; l < b.size; ++l)
    for (u32 i = 0; i < be.n(); ++i)
      w[static_cast<std::size_t>(l) * be.n() + i] =
          static_cast<u32>(rng() % be.modulus(b.ids[l]).q);
  be.upload(w.data(), p.ref());
  return p;
}

}  // namespace theo::probe
