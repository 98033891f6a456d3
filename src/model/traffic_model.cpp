#include "traffic_model.h"

#include <bitset>

namespace theo::traffic_model {

namespace {

constexpr double kWordBytes = 4;

double words(u32 limbs, u32 n) {
  return static_cast<double>(limbs) * n;
}

}  // namespace

TrafficCost upload(PolyRef dst) {
  return {1, dst.limbs(), dst.n, 0, kWordBytes * words(dst.limbs(), dst.n), 0, 0};
}

TrafficCost download(ConstPolyRef src) {
  return {0, 0, src.n, kWordBytes * words(src.limbs(), src.n), 0, 0, 0};
}

TrafficCost copy(ConstPolyRef src, PolyRef dst) {
  return {1,
          dst.limbs(),
          dst.n,
          kWordBytes * words(src.limbs(), src.n),
          kWordBytes * words(dst.limbs(), dst.n),
          0,
          0};
}

TrafficCost write_only(PolyRef dst) {
  return {1, dst.limbs(), dst.n, 0, kWordBytes * words(dst.limbs(), dst.n), 0, 0};
}

TrafficCost ntt(std::span<const PolyRef> polys, bool with_consts, u32 log_n, bool with_input_copy) {
  TrafficCost c;
  std::bitset<256> primes;
  for (const PolyRef& p : polys) {
    c.polys += 1;
    c.limbs += p.limbs();
    c.n = p.n;
    for (u32 i = 0; i < p.limbs(); ++i)
      primes.set(p.basis[i]);
  }
  const double w = words(c.limbs, c.n);
  c.bytes_read = kWordBytes * w;
  c.bytes_written = kWordBytes * w;
  // N - 1 twiddles per prime (one per butterfly group), ~N words.
  c.table_bytes = kWordBytes * words(static_cast<u32>(primes.count()), c.n);
  c.macs = w / 2 * log_n + (with_consts ? w : 0);
  if (with_input_copy) c.bytes_written += kWordBytes * w;
  return c;
}

TrafficCost ntt_sub_mul_scalar(std::span<const PolyRef> polys, bool with_consts, u32 log_n,
                               std::span<const ConstPolyRef> a) {
  TrafficCost c = ntt(polys, with_consts, log_n);
  for (const ConstPolyRef& x : a) {
    const double w = words(x.limbs(), x.n);
    c.bytes_read += kWordBytes * w;
    c.macs += w;
  }
  return c;
}

TrafficCost bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out, bool with_const_mult) {
  const BConvTable& t = plan.table();
  const double s = t.src.size, d = t.dst.size, n = out.n;
  TrafficCost c;
  c.polys = 1;
  c.limbs = out.limbs();
  c.n = out.n;
  c.bytes_read = kWordBytes * words(in.limbs(), in.n);
  c.bytes_written = kWordBytes * words(out.limbs(), out.n);
  double table_words = s * d;
  c.macs = s * d * n;
  if (with_const_mult) {
    table_words += s;  // (Q/s_j)^-1
    c.macs += s * n;
  }
  if (t.exact) {
    table_words += 2 * s + d;  // 1/s_j as doubles, Q mod d_i
    c.macs += d * n;           // v * [Q]_{d_i}
  }
  c.table_bytes = kWordBytes * table_words;
  return c;
}

TrafficCost sum(const TrafficCost& a, const TrafficCost& b) {
  TrafficCost c;
  c.polys = a.polys + b.polys;
  c.limbs = a.limbs + b.limbs;
  c.n = a.n != 0 ? a.n : b.n;
  c.bytes_read = a.bytes_read + b.bytes_read;
  c.bytes_written = a.bytes_written + b.bytes_written;
  c.table_bytes = a.table_bytes + b.table_bytes;
  c.macs = a.macs + b.macs;
  return c;
}

TrafficCost elementwise(PolyRef out, u32 inputs, u32 macs_per_word) {
  const double w = words(out.limbs(), out.n);
  return {1, out.limbs(), out.n, kWordBytes * w * inputs, kWordBytes * w, 0, w * macs_per_word};
}

TrafficCost elementwise_batch(std::span<const PolyRef> out) {
  TrafficCost c;
  for (const PolyRef& o : out) {
    const TrafficCost one = elementwise(o, 2, 0);
    c.polys += 1;
    c.limbs += one.limbs;
    c.n = one.n;
    c.bytes_read += one.bytes_read;
    c.bytes_written += one.bytes_written;
  }
  return c;
}

TrafficCost mul_scalar_sum(std::span<const ConstPolyRef> a, PolyRef out) {
  const u32 k = static_cast<u32>(a.size());
  return elementwise(out, k, k);
}

TrafficCost tensor(PolyRef d0) {
  TrafficCost c = elementwise(d0, 4, 4);
  c.polys = 3;
  c.limbs = 3 * d0.limbs();
  c.bytes_written *= 3;
  return c;
}

TrafficCost key_mult(std::span<const ConstPolyRef> digits, PolyRef out0) {
  const u32 d = static_cast<u32>(digits.size());
  const double w = words(out0.limbs(), out0.n);
  return {2, 2 * out0.limbs(), out0.n, kWordBytes * w * 3 * d, kWordBytes * w * 2, 0, w * 2 * d};
}

TrafficCost automorphism_sum(std::span<const ConstPolyRef> ins, PolyRef out, bool accumulate) {
  const u32 k = static_cast<u32>(ins.size()) + (accumulate ? 1 : 0);
  return elementwise(out, k, 0);
}

}  // namespace theo::traffic_model
