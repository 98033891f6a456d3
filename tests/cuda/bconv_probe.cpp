// bconv_probe: the CUDA BConv kernels side by side on the shapes key switching uses (not a test).
// Each row is the median of `reps` GPU times by cuda::EventTimer (CUDA events with the stream held
// until the op is queued, so no host enqueue time), with the bytes the op must move (inputs read
// once, outputs written once) and whether its words equal the tile kernel's (blocked = 0).
//   theo_bconv_probe [log_n=16] [reps=50]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "probe_poly.h"
#include "theo/backend/factory.h"
#include "theo/math/primes.h"

namespace {

using namespace theo;

struct Variant {
  const char* name;
  u32 blocked, threads, tensor;
};

}  // namespace

int main(int argc, char** argv) {
  const u32 log_n = argc > 1 ? static_cast<u32>(std::atoi(argv[1])) : 16;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 50;
  if (!cuda_available()) {
    std::printf("no usable CUDA GPU\n");
    return 77;
  }
  // Primes like bootparam_40's: level primes near 2^30 (some above), auxiliary ones above 2^30.
  RingParams ring;
  ring.log_n = log_n;
  const std::vector<u32> main = find_ntt_primes(log_n, 30, 48);
  const std::vector<u32> aux = find_ntt_primes(log_n, 31, 12, main);
  ring.primes = main;
  ring.primes.insert(ring.primes.end(), aux.begin(), aux.end());
  auto be = cuda::make_backend(ring);
  Backend& G = *be;
  std::printf("bconv_probe: %s, N = 2^%u, %d reps\n", G.name().c_str(), log_n, reps);
  const double n = static_cast<double>(G.n());
  std::mt19937 rng(7);
  const auto random_poly = [&](const Basis& b) { return probe::random_poly(G, b, rng); };
  const auto words = [&](const RnsPoly& p) {
    std::vector<u32> w(p.words());
    G.download(p.cref(), w.data());
    return w;
  };
  cuda::EventTimer timer(G);
  const auto median_us = [&](const auto& op) {
    for (int w = 0; w < 5; ++w)
      op();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      timer.start();
      op();
      t.push_back(timer.stop_us());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };

  struct Case {
    const char* what;
    Basis src, dst;
    bool exact, const_mult;
  };
  const Basis aux_b = Basis::range(48, 12);
  const std::vector<Case> cases = {
      {"modup 12->48 (microbench up)", aux_b, Basis::range(0, 48), false, true},
      {"moddown 48->12 (microbench down)", Basis::range(0, 48), aux_b, false, true},
      {"modup L=35 digit 12->35", Basis::range(0, 12), Basis::range(12, 23).concat(aux_b), false,
       true},
      {"modup L=47 digit 12->47", Basis::range(0, 12), Basis::range(12, 35).concat(aux_b), false,
       true},
      {"moddown exact 12->35 (matmul)", aux_b, Basis::range(0, 35), true, false},
      {"rescale merged exact 14->34 (matmul)", Basis::range(34, 2).concat(aux_b),
       Basis::range(0, 34), true, false},
      {"bconv bench 35->12", Basis::range(0, 35), aux_b, false, true},
      {"bconv bench 47->12", Basis::range(0, 47), aux_b, false, true},
  };
  const std::vector<Variant> variants = {{"tile", 0, 256, 0},
                                         {"blocked T=128", 1, 128, 0},
                                         {"blocked T=256", 1, 256, 0},
                                         {"tensor", 1, 256, 1}};
  std::printf("%-38s %-14s %9s %8s %s\n", "case", "kernel", "median_us", "GB/s", "same_words");
  for (const Case& c : cases) {
    RnsPoly x = random_poly(c.src), y = G.make_poly(c.dst);
    const auto plan = G.make_bconv(c.src, c.dst, c.exact);
    const double bytes = 4.0 * n * (c.src.size + c.dst.size);
    std::vector<u32> ref;
    for (const Variant& v : variants) {
      cuda::Tuning t;
      t.bconv.blocked = v.blocked;
      t.bconv.threads = v.threads;
      t.bconv.tensor = v.tensor;
      cuda::set_tuning(G, t);
      const auto op = [&] {
        if (c.const_mult)
          G.bconv(*plan, x.cref(), y.ref());
        else
          G.bconv_matmul(*plan, x.cref(), y.ref());
      };
      G.fill_zero(y.ref());
      op();
      const std::vector<u32> w = words(y);
      if (ref.empty()) ref = w;
      const double us = median_us(op);
      std::printf("%-38s %-14s %9.2f %8.0f %s\n", c.what, v.name, us, bytes / (us * 1e3),
                  w == ref ? "yes" : "NO");
    }
    cuda::set_tuning(G, cuda::Tuning{});
  }
  G.synchronize();
  return 0;
}
