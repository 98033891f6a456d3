#pragma once
// RAII owners of GMP numbers (mpz_t integers, mpf_t floats) for the host number theory; they
// convert to GMP's pointer types, so they pass straight to mpz_* and mpf_* functions.

#include <gmp.h>

#include <type_traits>

namespace theo::detail {

// Owns one GMP number of type T (mpz_t or mpf_t), cleared by Clear; the derived class inits it.
template <typename T, void (*Clear)(std::remove_extent_t<T>*)>
class GmpNumber {
 public:
  using Value = std::remove_extent_t<T>;

  ~GmpNumber() { Clear(v_); }
  GmpNumber(const GmpNumber&) = delete;
  GmpNumber& operator=(const GmpNumber&) = delete;
  operator Value*() { return v_; }
  operator const Value*() const { return v_; }
  const Value* get() const { return v_; }

 protected:
  GmpNumber() = default;
  T v_;
};

class Mpz : public GmpNumber<mpz_t, mpz_clear> {
 public:
  Mpz() { mpz_init(v_); }
};

class Mpf : public GmpNumber<mpf_t, mpf_clear> {
 public:
  explicit Mpf(mp_bitcnt_t prec) { mpf_init2(v_, prec); }
};

}  // namespace theo::detail
