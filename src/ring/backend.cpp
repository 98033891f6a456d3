#include "theo/ring/backend.h"

#include <memory>
#include <new>
#include <string>
#include <vector>

namespace theo {

namespace {

// Ordinary host memory, cache-line aligned (the default staging memory).
class PlainHostAllocator final : public Allocator {
 public:
  static constexpr std::size_t kAlignment = 64;
  u32* allocate(std::size_t words) override {
    void* p = ::operator new (words * sizeof(u32), std::align_val_t{kAlignment}, std::nothrow);
    if (p == nullptr) {
      throw OutOfMemoryError("host staging memory: " + std::to_string(words * sizeof(u32)) +
                             " bytes could not be allocated");
    }
    return static_cast<u32*>(p);
  }
  void deallocate(u32* ptr, std::size_t) noexcept override {
    ::operator delete (ptr, std::align_val_t{kAlignment});
  }
  bool host_accessible() const override { return true; }
};

}  // namespace

std::shared_ptr<Allocator> Backend::host_staging_allocator() {
  static const auto plain = std::make_shared<PlainHostAllocator>();
  return plain;
}

Backend::Backend(RingParams ring) : ring_(std::move(ring)) {
  if (ring_.log_n < 10 || ring_.log_n > 17)
    throw ParameterError("RingParams.log_n = " + std::to_string(ring_.log_n) + " outside [10, 17]");
  if (ring_.primes.size() > 256)
    throw ParameterError("RingParams.primes: " + std::to_string(ring_.primes.size()) +
                         " primes, PrimeId addresses at most 256");
  const u64 two_n = u64{2} << ring_.log_n;
  moduli_.reserve(ring_.primes.size());
  for (std::size_t i = 0; i < ring_.primes.size(); ++i) {
    const u32 q = ring_.primes[i];
    // Every backend's NTT and Montgomery arithmetic rely on these; catch a bad table early.
    if (q >= (u32{1} << 31) || q % two_n != 1)
      throw ParameterError("RingParams.primes[" + std::to_string(i) + "] = " + std::to_string(q) +
                           " is not < 2^31 and = 1 mod 2N (N = 2^" + std::to_string(ring_.log_n) +
                           ")");
    moduli_.push_back(make_modulus(q));
  }
}

// The default implementations: the words of the ops they compose, on arguments the public op
// checked (so the parts are called unchecked).

void Backend::do_bconv_matmul_batch(std::span<const BConvJob> jobs) {
  for (const BConvJob& j : jobs)
    do_bconv_matmul(*j.plan, j.in, j.out);
}

void Backend::do_key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                                    std::span<const ConstPolyRef> kb,
                                    std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                                    std::span<const PolyRef> out1, ConstPolyRef add0) {
  const std::size_t d = digits.size();
  for (std::size_t r = 0; r < gs.size(); ++r)
    do_key_mult_automorphed(digits, gs[r], kb.subspan(r * d, d), ka.subspan(r * d, d), out0[r],
                            out1[r], add0);
}

void Backend::do_tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                               PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s) {
  RnsPoly sa0 = make_poly(a0.basis), sa1 = make_poly(a1.basis);
  do_mul_scalar(a0, s, sa0.ref());
  do_mul_scalar(a1, s, sa1.ref());
  do_tensor(sa0.cref(), sa1.cref(), b0, b1, d0, d1, d2);
}

void Backend::do_key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                                     std::span<const ConstPolyRef> kb,
                                     std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                                     ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s) {
  do_key_mult(digits, kb, ka, out0, out1);
  do_mul_scalar_add(a0, s, out0, out0);
  do_mul_scalar_add(a1, s, out1, out1);
}

void Backend::do_key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                               std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                               std::span<const PolyRef> out1) {
  const std::size_t k_terms = kb.size();
  for (std::size_t g = 0; g < out0.size(); ++g) {
    std::vector<ConstPolyRef> dg, bg, ag;
    for (std::size_t k = 0; k < k_terms; ++k) {
      if (d[g * k_terms + k].words() == 0) continue;
      dg.push_back(d[g * k_terms + k]);
      bg.push_back(kb[k]);
      ag.push_back(ka[k]);
    }
    do_key_mult(dg, bg, ag, out0[g], out1[g]);
  }
}

}  // namespace theo
