#pragma once
// Exact big-integer CRT reconstruction (GMP), for decoding and for tests.

#include <gmp.h>

#include <span>
#include <string>
#include <vector>

#include "theo/common.h"

namespace theo {

// Reconstructs x mod Q = prod q_i from residues (x mod q_i).
class CrtReconstructor {
 public:
  explicit CrtReconstructor(std::span<const u64> primes);
  ~CrtReconstructor();
  CrtReconstructor(const CrtReconstructor&) = delete;
  CrtReconstructor& operator=(const CrtReconstructor&) = delete;

  std::size_t size() const { return primes_.size(); }
  // out = x in [0, Q) (out must be mpz_init'ed).
  void reconstruct(std::span<const u64> residues, mpz_t out) const;
  // out = x in (-Q/2, Q/2].
  void reconstruct_centered(std::span<const u64> residues, mpz_t out) const;
  // Centered value times 2^-scale_log2 ... as long double: x / divisor, exact up to rounding.
  long double centered_to_long_double(std::span<const u64> residues, long double divisor) const;
  const mpz_t& modulus() const { return q_; }
  std::string modulus_string() const;

 private:
  std::vector<u64> primes_;
  mpz_t q_;
  mpz_t half_q_;
  std::vector<mpz_t*> q_hat_;       // Q / q_i
  std::vector<u64> q_hat_inv_;      // (Q / q_i)^-1 mod q_i
};

}  // namespace theo
