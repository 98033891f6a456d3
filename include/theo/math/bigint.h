#pragma once
// Exact big-integer CRT reconstruction (GMP), for decoding and for tests.
//
// Given pairwise coprime moduli q_0..q_{k-1} (primes, each < 2^63) and residues r_i = x mod q_i,
// CrtReconstructor recovers x mod Q, Q = prod q_i, as
//     x = sum_i [r_i * (Q/q_i)^-1]_{q_i} * (Q/q_i)   (mod Q)
// with the constants precomputed once. All member functions are const and use only local
// temporaries, so one reconstructor may be shared by several threads.

#include <gmp.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "theo/common.h"

namespace theo {

// Reconstructs x mod Q = prod q_i from residues (x mod q_i).
class CrtReconstructor {
 public:
  // Throws ParameterError when the list is empty, a modulus is < 2 or >= 2^63, or two moduli are
  // not coprime.
  explicit CrtReconstructor(std::span<const u64> primes);
  explicit CrtReconstructor(std::span<const u32> primes);
  ~CrtReconstructor();
  CrtReconstructor(CrtReconstructor&&) noexcept;
  CrtReconstructor& operator=(CrtReconstructor&&) noexcept;
  CrtReconstructor(const CrtReconstructor&) = delete;
  CrtReconstructor& operator=(const CrtReconstructor&) = delete;

  std::size_t size() const { return primes_.size(); }
  const std::vector<u64>& primes() const { return primes_; }

  // out = x in [0, Q) (out must be mpz_init'ed). residues.size() must equal size(); residues need
  // not be reduced (r_i is taken mod q_i).
  void reconstruct(std::span<const u64> residues, mpz_t out) const;
  void reconstruct(std::span<const u32> residues, mpz_t out) const;
  // out = x in (-Q/2, Q/2].
  void reconstruct_centered(std::span<const u64> residues, mpz_t out) const;
  void reconstruct_centered(std::span<const u32> residues, mpz_t out) const;
  // The centered value divided by `divisor` (e.g. the CKKS scale), computed exactly and rounded
  // once to the nearest long double (ties to even). Precision is not lost for large x
  // (x ~ 2^1500 is fine). Throws ParameterError when divisor is zero or not finite.
  long double centered_to_long_double(std::span<const u64> residues, long double divisor) const;
  long double centered_to_long_double(std::span<const u32> residues, long double divisor) const;

  const mpz_t& modulus() const;  // Q
  std::string modulus_string() const;
  double log2_modulus() const;  // log2 Q (approximate)

 private:
  struct Tables;  // Q, Q/2, Q/q_i (GMP integers; defined in bigint.cpp)
  template <typename Word>
  void reconstruct_impl(std::span<const Word> residues, mpz_t out) const;
  template <typename Word>
  void centered_impl(std::span<const Word> residues, mpz_t out) const;

  std::vector<u64> primes_;
  std::vector<u64> q_hat_inv_;  // (Q / q_i)^-1 mod q_i
  std::unique_ptr<Tables> tables_;
};

// x / divisor rounded once to the nearest long double (ties to even), for any integer x.
// Throws ParameterError when divisor is zero or not finite.
long double mpz_div_to_long_double(const mpz_t x, long double divisor);

}  // namespace theo
