// Uses the installed library: a bundled preset, the PRNG and the CPU ring backend.
#include <theo/backend/factory.h>
#include <theo/math/params.h>
#include <theo/math/prng.h>
#include <theo/ring/backend.h>

#include <cstdio>
#include <vector>

int main() {
  const theo::ParameterSet params = theo::load_preset("bootparam_40");
  std::printf("preset bootparam_40: N = %u, %zu main primes\n", params.n(),
              params.main_primes.size());

  theo::Prng prng;
  const std::vector<theo::i32> secret = theo::sample_ternary_hw(prng, params.n(), 192);
  std::printf("sampled a ternary secret of %zu coefficients\n", secret.size());

  const theo::RingParams ring{10, {static_cast<theo::u32>(params.main_primes.at(0))}};
  const bool ntt_friendly = params.main_primes.at(0) % (2u << 10) == 1;
  if (ntt_friendly) {
    auto backend = theo::make_cpu_backend(ring, 1);
    std::printf("backend: %s\n", backend->name().c_str());
  }
#if defined(THEO_HAVE_CUDA)
  std::printf("CUDA backend: yes\n");
#else
  std::printf("CUDA backend: no\n");
#endif
  return 0;
}
