// Primality, NTT-friendly prime search and the canonical NTT root.

#include "theo/math/primes.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "theo/errors.h"
#include "theo/math/modarith.h"

namespace theo {

namespace {

__extension__ typedef unsigned __int128 u128;

u64 mul_mod64(u64 a, u64 b, u64 n) {
  return static_cast<u64>((static_cast<u128>(a) * b) % n);
}

u64 pow_mod64(u64 b, u64 e, u64 n) {
  u64 r = 1 % n;
  b %= n;
  while (e) {
    if (e & 1) r = mul_mod64(r, b, n);
    b = mul_mod64(b, b, n);
    e >>= 1;
  }
  return r;
}

// One Miller-Rabin round: true when n is a strong probable prime to base a (n odd, n > a).
bool strong_probable_prime(u64 n, u64 a) {
  u64 d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  u64 x = pow_mod64(a, d, n);
  if (x == 1 || x == n - 1) return true;
  for (int i = 1; i < s; ++i) {
    x = mul_mod64(x, x, n);
    if (x == n - 1) return true;
    if (x == 1) return false;
  }
  return false;
}

void check_log_n(u32 log_n) {
  if (log_n < 10 || log_n > 17)
    throw ParameterError("log_n = " + std::to_string(log_n) + " outside 10..17");
}

}  // namespace

bool is_prime(u64 n) {
  if (n < 2) return false;
  static constexpr u64 small[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (u64 p : small) {
    if (n == p) return true;
    if (n % p == 0) return false;
  }
  if (n < 41 * 41) return true;
  // Deterministic base sets: {2, 7, 61} for n < 4,759,123,141; the first twelve primes for every
  // n < 3.3e24 (so for all 64-bit n).
  if (n < 4759123141ull) {
    for (u64 a : {u64{2}, u64{7}, u64{61}})
      if (!strong_probable_prime(n, a)) return false;
    return true;
  }
  for (u64 a : small)
    if (!strong_probable_prime(n, a)) return false;
  return true;
}

std::vector<u32> ntt_primes_in_range(u32 log_n, u64 lo, u64 hi) {
  check_log_n(log_n);
  if (hi > (u64{1} << 32))
    throw ParameterError("ntt_primes_in_range: hi = " + std::to_string(hi) + " above 2^32");
  const u64 step = u64{2} << log_n;  // 2N
  std::vector<u32> out;
  if (lo >= hi) return out;
  // First candidate k*2N + 1 >= lo.
  u64 c = lo <= 1 ? 1 : ((lo - 1 + step - 1) / step) * step + 1;
  for (; c < hi; c += step)
    if (is_prime(c)) out.push_back(static_cast<u32>(c));
  return out;
}

std::vector<u32> ntt_primes_near(u32 log_n, u64 center, u32 count, u64 lo, u64 hi,
                                 const std::vector<u32>& exclude) {
  check_log_n(log_n);
  if (hi > (u64{1} << 32))
    throw ParameterError("ntt_primes_near: hi = " + std::to_string(hi) + " above 2^32");
  const u64 step = u64{2} << log_n;
  const std::unordered_set<u32> skip(exclude.begin(), exclude.end());
  std::vector<u32> out;
  lo = std::max<u64>(lo, 2);
  if (lo >= hi || count == 0) return out;
  // Candidates are k*2N + 1. `down` walks from the largest candidate <= min(center, hi - 1)
  // downwards, `up` from the smallest candidate > center (and >= lo) upwards; the closer is next.
  const u64 top = std::min(center, hi - 1);
  u64 down = (top / step) * step + 1;
  if (down > top) down = down >= step + 1 ? down - step : 0;
  bool down_ok = down >= lo && down != 0;
  const u64 from = std::max(center + 1, lo);
  u64 up = ((from + step - 2) / step) * step + 1;  // smallest k*step + 1 >= from
  bool up_ok = up < hi;
  while (out.size() < count && (down_ok || up_ok)) {
    const bool take_down = down_ok && (!up_ok || center - down <= up - center);
    u64 c;
    if (take_down) {
      c = down;
      down_ok = down >= lo + step;
      if (down_ok) down -= step;
    } else {
      c = up;
      up += step;
      up_ok = up < hi;
    }
    if (is_prime(c) && !skip.count(static_cast<u32>(c))) out.push_back(static_cast<u32>(c));
  }
  return out;
}

std::vector<u32> find_ntt_primes(u32 log_n, u32 log_target, u32 count,
                                 const std::vector<u32>& exclude) {
  check_log_n(log_n);
  if (log_target < 20 || log_target > 31)
    throw ParameterError("log_target = " + std::to_string(log_target) + " outside 20..31");
  const u64 step = u64{2} << log_n;
  std::vector<u32> out =
      ntt_primes_near(log_n, u64{1} << log_target, count, step + 1, u64{1} << 31, exclude);
  if (out.size() < count)
    throw ParameterError("find_ntt_primes: only " + std::to_string(out.size()) +
                         " primes q = 1 mod 2^" + std::to_string(log_n + 1) +
                         " below 2^31 (asked " + std::to_string(count) + " near 2^" +
                         std::to_string(log_target) + ")");
  return out;
}

u32 primitive_root(u32 q) {
  if (!is_prime(q))
    throw ParameterError("primitive_root: q = " + std::to_string(q) + " is not prime");
  if (q == 2) return 1;
  // Distinct prime factors of q - 1.
  std::vector<u32> factors;
  u32 m = q - 1;
  for (u32 p = 2; static_cast<u64>(p) * p <= m; ++p) {
    if (m % p == 0) {
      factors.push_back(p);
      while (m % p == 0)
        m /= p;
    }
  }
  if (m > 1) factors.push_back(m);
  for (u32 g = 2;; ++g) {
    bool generator = true;
    for (u32 p : factors) {
      if (pow_mod(g, (q - 1) / p, q) == 1) {
        generator = false;
        break;
      }
    }
    if (generator) return g;
  }
}

u32 ntt_root(u32 q, u32 n) {
  if (n == 0 || (n & (n - 1)) != 0)
    throw ParameterError("ntt_root: n = " + std::to_string(n) + " is not a power of two");
  const u64 two_n = u64{2} * n;
  if ((q - 1) % two_n != 0)
    throw ParameterError("ntt_root: q = " + std::to_string(q) +
                         " is not 1 mod 2N = " + std::to_string(two_n));
  const u32 g = primitive_root(q);
  return pow_mod(g, (q - 1) / two_n, q);
}

}  // namespace theo
