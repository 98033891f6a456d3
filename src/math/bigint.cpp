// Exact CRT reconstruction with GMP (see theo/math/bigint.h).

#include "theo/math/bigint.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "math/gmp_number.h"
#include "theo/errors.h"

namespace theo {

// mpz_*_ui take unsigned long; the library targets LP64 platforms where it holds a u64.
static_assert(sizeof(unsigned long) == sizeof(u64), "theodosian needs a 64-bit unsigned long");

namespace {

__extension__ typedef unsigned __int128 u128;

using detail::Mpz;

u64 mul_mod_u64(u64 a, u64 b, u64 q) {
  return static_cast<u64>((static_cast<u128>(a) * b) % q);
}

// Sets out to the integer-valued, non-negative long double v (exactly).
void mpz_set_integral_long_double(mpz_t out, long double v) {
  constexpr int kDigits = std::numeric_limits<long double>::digits;
  mpz_set_ui(out, 0);
  long double rest = v;
  for (int k = (kDigits + 31) / 32; k >= 0; --k) {
    const long double scale = std::ldexp(1.0L, 32 * k);
    const long double chunk = std::floor(rest / scale);  // < 2^32, exact
    mpz_mul_2exp(out, out, 32);
    mpz_add_ui(out, out, static_cast<unsigned long>(chunk));
    rest -= chunk * scale;
  }
}

// The non-negative integer m (at most long double digits + 1 bits) as a long double, exactly.
long double mpz_to_long_double_exact(const mpz_t m) {
  long double r = 0.0L;
  const std::size_t limbs = mpz_size(m);
  for (std::size_t i = limbs; i-- > 0;) {
    r = std::ldexp(r, GMP_NUMB_BITS) + static_cast<long double>(mpz_getlimbn(m, i));
  }
  return r;
}

}  // namespace

struct CrtReconstructor::Tables {
  mpz_t q;                 // Q
  mpz_t half_q;            // floor(Q / 2)
  std::vector<Mpz> q_hat;  // Q / q_i
  explicit Tables(std::size_t k) : q_hat(k) {
    mpz_init(q);
    mpz_init(half_q);
  }
  ~Tables() {
    mpz_clear(q);
    mpz_clear(half_q);
  }
  Tables(const Tables&) = delete;
  Tables& operator=(const Tables&) = delete;
};

CrtReconstructor::CrtReconstructor(std::span<const u32> primes)
    : CrtReconstructor(std::vector<u64>(primes.begin(), primes.end())) {}

CrtReconstructor::CrtReconstructor(std::span<const u64> primes)
    : primes_(primes.begin(), primes.end()) {
  if (primes_.empty()) throw ParameterError("CrtReconstructor: empty list of moduli");
  tables_ = std::make_unique<Tables>(primes_.size());
  Tables& t = *tables_;
  mpz_set_ui(t.q, 1);
  for (std::size_t i = 0; i < primes_.size(); ++i) {
    const u64 q = primes_[i];
    if (q < 2 || q >= (u64{1} << 63)) {
      throw ParameterError("CrtReconstructor: modulus #" + std::to_string(i) + " = " +
                           std::to_string(q) + " is not in [2, 2^63)");
    }
    if (mpz_gcd_ui(nullptr, t.q, q) != 1) {
      throw ParameterError("CrtReconstructor: modulus #" + std::to_string(i) + " = " +
                           std::to_string(q) + " is not coprime to the previous ones");
    }
    mpz_mul_ui(t.q, t.q, q);
  }
  mpz_fdiv_q_2exp(t.half_q, t.q, 1);
  q_hat_inv_.resize(primes_.size());
  Mpz qi, inv;
  for (std::size_t i = 0; i < primes_.size(); ++i) {
    mpz_divexact_ui(t.q_hat[i], t.q, primes_[i]);
    mpz_set_ui(qi, primes_[i]);
    if (mpz_invert(inv, t.q_hat[i], qi) == 0) {
      throw ParameterError("CrtReconstructor: Q/q_i is not invertible mod q_i");  // unreachable
    }
    q_hat_inv_[i] = mpz_get_ui(inv);
  }
}

CrtReconstructor::~CrtReconstructor() = default;
CrtReconstructor::CrtReconstructor(CrtReconstructor&&) noexcept = default;
CrtReconstructor& CrtReconstructor::operator=(CrtReconstructor&&) noexcept = default;

const mpz_t& CrtReconstructor::modulus() const {
  return tables_->q;
}

std::string CrtReconstructor::modulus_string() const {
  std::string s(mpz_sizeinbase(tables_->q, 10) + 2, '\0');
  mpz_get_str(s.data(), 10, tables_->q);
  s.resize(std::char_traits<char>::length(s.c_str()));
  return s;
}

double CrtReconstructor::log2_modulus() const {
  long exp = 0;
  const double mant = mpz_get_d_2exp(&exp, tables_->q);  // Q = mant * 2^exp, mant in [0.5, 1)
  return std::log2(mant) + static_cast<double>(exp);
}

template <typename Word>
void CrtReconstructor::reconstruct_impl(std::span<const Word> residues, mpz_t out) const {
  if (residues.size() != primes_.size()) {
    throw ParameterError("CrtReconstructor: " + std::to_string(residues.size()) +
                         " residues given for " + std::to_string(primes_.size()) + " moduli");
  }
  const Tables& t = *tables_;
  Mpz acc;  // sum_i [r_i * (Q/q_i)^-1]_{q_i} * (Q/q_i)  <  size * Q
  for (std::size_t i = 0; i < primes_.size(); ++i) {
    const u64 q = primes_[i];
    const u64 r = static_cast<u64>(residues[i]) % q;
    const u64 c = mul_mod_u64(r, q_hat_inv_[i], q);
    mpz_addmul_ui(acc, t.q_hat[i], c);
  }
  mpz_tdiv_r(out, acc, t.q);
}

template <typename Word>
void CrtReconstructor::centered_impl(std::span<const Word> residues, mpz_t out) const {
  reconstruct_impl(residues, out);
  if (mpz_cmp(out, tables_->half_q) > 0) mpz_sub(out, out, tables_->q);
}

void CrtReconstructor::reconstruct(std::span<const u64> residues, mpz_t out) const {
  reconstruct_impl(residues, out);
}
void CrtReconstructor::reconstruct(std::span<const u32> residues, mpz_t out) const {
  reconstruct_impl(residues, out);
}
void CrtReconstructor::reconstruct_centered(std::span<const u64> residues, mpz_t out) const {
  centered_impl(residues, out);
}
void CrtReconstructor::reconstruct_centered(std::span<const u32> residues, mpz_t out) const {
  centered_impl(residues, out);
}

long double CrtReconstructor::centered_to_long_double(std::span<const u64> residues,
                                                      long double divisor) const {
  Mpz x;
  centered_impl(residues, x);
  return mpz_div_to_long_double(x, divisor);
}
long double CrtReconstructor::centered_to_long_double(std::span<const u32> residues,
                                                      long double divisor) const {
  Mpz x;
  centered_impl(residues, x);
  return mpz_div_to_long_double(x, divisor);
}

long double mpz_div_to_long_double(const mpz_t x, long double divisor) {
  if (!std::isfinite(divisor) || divisor == 0.0L) {
    throw ParameterError("mpz_div_to_long_double: divisor must be finite and nonzero");
  }
  const int sign_x = mpz_sgn(x);
  if (sign_x == 0) return 0.0L;
  const bool negative = (sign_x < 0) != (divisor < 0.0L);
  constexpr long kDigits = std::numeric_limits<long double>::digits;

  // divisor = m * 2^(e - kDigits) with m an integer of kDigits bits.
  int e = 0;
  const long double frac = std::frexp(std::fabs(divisor), &e);  // in [0.5, 1)
  Mpz m;
  mpz_set_integral_long_double(m, std::ldexp(frac, static_cast<int>(kDigits)));

  // |x| / divisor = (|x| * 2^s / m) * 2^(kDigits - e - s); pick s so that the integer quotient has
  // at least kDigits + 3 bits (the rounding bit, a guard bit and the sticky remainder follow).
  Mpz a, quo, rem;
  mpz_abs(a, x);
  const long bits_a = static_cast<long>(mpz_sizeinbase(a, 2));
  const long bits_m = static_cast<long>(mpz_sizeinbase(m, 2));
  const long s = kDigits + 3 + bits_m - bits_a;
  if (s >= 0) {
    mpz_mul_2exp(a, a, static_cast<mp_bitcnt_t>(s));
    mpz_tdiv_qr(quo, rem, a, m);
  } else {
    Mpz den;
    mpz_mul_2exp(den, m, static_cast<mp_bitcnt_t>(-s));
    mpz_tdiv_qr(quo, rem, a, den);
  }
  const bool sticky = mpz_sgn(rem.get()) != 0;

  // Round quo (+ sticky fraction) to kDigits significant bits, ties to even.
  const long bits_q = static_cast<long>(mpz_sizeinbase(quo, 2));
  const long drop = bits_q - kDigits;  // >= 3
  const auto ud = static_cast<mp_bitcnt_t>(drop);
  const bool half_bit = mpz_tstbit(quo, ud - 1) != 0;
  const bool below_half = mpz_scan1(quo, 0) < ud - 1 || sticky;
  Mpz mant;
  mpz_tdiv_q_2exp(mant, quo, ud);
  if (half_bit && (below_half || mpz_odd_p(mant.get()))) mpz_add_ui(mant, mant, 1);

  const long exponent = drop + kDigits - e - s;
  const long double r = std::ldexp(mpz_to_long_double_exact(mant), static_cast<int>(exponent));
  return negative ? -r : r;
}

}  // namespace theo
