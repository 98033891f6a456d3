#pragma once
// Groups of ciphertexts that go through one circuit together (internal to the circuits layer).

#include <span>
#include <utility>
#include <vector>

#include "theo/ckks/evaluator.h"
#include "theo/ckks/evaluator_batch.h"

namespace theo::detail {

// Ciphertexts that go through the same circuit together, op for op (same levels, scales and
// constants, e.g. the real and imaginary parts in bootstrapping). Their key switches and rescales
// run as one batch (multiply_relin_rescale_batch, rescale_batch, level_down_batch): each launch
// covers every ciphertext, so small-level ops fill the GPU and the relinearization key is read
// once. A group of one issues exactly the single-ciphertext ops.
using CiphertextGroup = std::vector<Ciphertext>;

inline std::vector<const Ciphertext*> pointers_of(const CiphertextGroup& b) {
  std::vector<const Ciphertext*> p;
  for (const Ciphertext& c : b)
    p.push_back(&c);
  return p;
}

class GroupOps {
 public:
  GroupOps(const Evaluator& ev, const RelinKey& rlk) : ev_(ev), rlk_(rlk) {}

  const Evaluator& ev() const { return ev_; }

  // a[i] * b[i], relinearized and rescaled, times the integer k (exact, on one operand).
  CiphertextGroup mul_relin_rescale(const CiphertextGroup& a, const CiphertextGroup& b,
                                    i64 k = 1) const {
    if (a.size() == 1) return one(ev_.multiply_relin_rescale(a[0], b[0], rlk_, k));
    CiphertextGroup ka;
    if (k != 1) {
      for (const Ciphertext& c : a)
        ka.push_back(ev_.multiply_integer(c, k));
    }
    const CiphertextGroup& left = k != 1 ? ka : a;
    const auto pa = pointers_of(left), pb = pointers_of(b);
    return multiply_relin_rescale_batch(ev_, pa, pb, rlk_, static_cast<u32>(left.size()));
  }
  // sum_j k a[j][i] b[j][i] (+ addend[i]), relinearized and rescaled once from `level` for each i
  // (Evaluator::multiply_sum_relin_rescale; operands at `level` or above, read in place).
  CiphertextGroup mul_sum_relin_rescale(const std::vector<const CiphertextGroup*>& a,
                                        const std::vector<const CiphertextGroup*>& b, u32 level,
                                        const CiphertextGroup* addend = nullptr, i64 k = 1) const {
    CiphertextGroup out;
    for (std::size_t i = 0; i < a.front()->size(); ++i) {
      std::vector<const Ciphertext*> pa, pb;
      for (std::size_t j = 0; j < a.size(); ++j) {
        pa.push_back(&(*a[j])[i]);
        pb.push_back(&(*b[j])[i]);
      }
      out.push_back(
          ev_.multiply_sum_relin_rescale(pa, pb, level, rlk_, addend ? &(*addend)[i] : nullptr, k));
    }
    return out;
  }
  CiphertextGroup rescale(const CiphertextGroup& a) const {
    if (a.size() == 1) return one(ev_.rescale(a[0]));
    const auto pa = pointers_of(a);
    return rescale_batch(ev_, pa);
  }
  CiphertextGroup level_down(const CiphertextGroup& a, u32 level) const {
    if (a.size() == 1) return one(ev_.level_down(a[0], level));
    const auto pa = pointers_of(a);
    return level_down_batch(ev_, pa, level);
  }
  void add_const_inplace(CiphertextGroup& a, double c) const {
    for (Ciphertext& x : a)
      ev_.add_const_inplace(x, c);
  }
  void add_inplace(CiphertextGroup& a, const CiphertextGroup& b) const {
    for (std::size_t i = 0; i < a.size(); ++i)
      ev_.add_inplace(a[i], b[i]);
  }
  void sub_inplace(CiphertextGroup& a, const CiphertextGroup& b) const {
    for (std::size_t i = 0; i < a.size(); ++i)
      ev_.sub_inplace(a[i], b[i]);
  }
  CiphertextGroup multiply_const(const CiphertextGroup& a, double c,
                                 long double const_scale) const {
    CiphertextGroup out;
    for (const Ciphertext& x : a)
      out.push_back(ev_.multiply_const(x, c, const_scale));
    return out;
  }
  // sum_k coeffs[k] * terms[k][i] for each i (Evaluator::linear_combination).
  CiphertextGroup linear_combination(const std::vector<const CiphertextGroup*>& terms,
                                     std::span<const double> coeffs, u32 level,
                                     long double scale) const {
    CiphertextGroup out;
    for (std::size_t i = 0; i < terms.front()->size(); ++i) {
      std::vector<const Ciphertext*> t;
      for (const CiphertextGroup* b : terms)
        t.push_back(&(*b)[i]);
      out.push_back(ev_.linear_combination(t, coeffs, level, scale));
    }
    return out;
  }

 private:
  static CiphertextGroup one(Ciphertext c) {
    CiphertextGroup b;
    b.push_back(std::move(c));
    return b;
  }
  const Evaluator& ev_;
  const RelinKey& rlk_;
};

}  // namespace theo::detail
