#pragma once
// GMP values for the tests that check against exact big integers: owners of an mpz_t / mpq_t that
// clear it on every path out of a test, ASSERT_*'s early returns included.

#include <gmp.h>

namespace theo::test {

struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  explicit Mpz(const char* dec) { mpz_init_set_str(v, dec, 10); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

struct Mpq {
  mpq_t v;
  Mpq() { mpq_init(v); }
  ~Mpq() { mpq_clear(v); }
  Mpq(const Mpq&) = delete;
  Mpq& operator=(const Mpq&) = delete;
};

}  // namespace theo::test
