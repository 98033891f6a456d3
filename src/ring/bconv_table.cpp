#include <string>

#include "theo/ring/backend.h"

namespace theo {

namespace {

u32 prime_of(const RingParams& ring, const Basis& b, u32 i, const char* which) {
  if (b.ids[i] >= ring.primes.size())
    throw ParameterError(std::string("make_bconv_table: ") + which + " prime id " +
                         std::to_string(b.ids[i]) + " not in the ring's " +
                         std::to_string(ring.primes.size()) + " primes");
  return ring.primes[b.ids[i]];
}

// prod_{k != skip} s_k mod m, one word at a time: Q/s_j never has to exist as a big integer.
u32 hat_mod(const std::vector<u32>& s, u32 skip, u32 m) {
  u32 r = 1 % m;
  for (u32 k = 0; k < s.size(); ++k)
    if (k != skip) r = mul_mod_ref(r, s[k] % m, m);
  return r;
}

}  // namespace

BConvTable make_bconv_table(const RingParams& ring, const Basis& src, const Basis& dst,
                            bool exact) {
  if (src.empty() || dst.empty())
    throw ParameterError("make_bconv_table: empty basis (src " + to_string(src) + ", dst " +
                         to_string(dst) + ")");
  std::vector<u32> s(src.size), d(dst.size);
  for (u32 j = 0; j < src.size; ++j)
    s[j] = prime_of(ring, src, j, "src");
  for (u32 i = 0; i < dst.size; ++i)
    d[i] = prime_of(ring, dst, i, "dst");
  for (u32 j = 0; j < src.size; ++j)
    for (u32 k = 0; k < j; ++k)
      if (s[j] == s[k])
        throw ParameterError("make_bconv_table: src basis " + to_string(src) + " repeats prime " +
                             std::to_string(s[j]));

  BConvTable t;
  t.src = src;
  t.dst = dst;
  t.src_hat_inv.resize(src.size);
  for (u32 j = 0; j < src.size; ++j)
    t.src_hat_inv[j] = inv_mod(hat_mod(s, j, s[j]), s[j]);
  t.matrix.resize(static_cast<std::size_t>(dst.size) * src.size);
  for (u32 i = 0; i < dst.size; ++i)
    for (u32 j = 0; j < src.size; ++j)
      t.matrix[i * src.size + j] = hat_mod(s, j, d[i]);
  t.exact = exact;
  if (exact) {
    for (u32 j = 0; j < src.size; ++j)
      t.src_inv.push_back(1.0 / static_cast<double>(s[j]));
    for (u32 i = 0; i < dst.size; ++i)
      t.q_mod_dst.push_back(hat_mod(s, src.size, d[i]));  // skip nothing: all of Q
  }
  return t;
}

}  // namespace theo
