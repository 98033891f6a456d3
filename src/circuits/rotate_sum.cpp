#include "theo/circuits/rotate_sum.h"

#include <algorithm>
#include <bit>
#include <string>

#include "theo/ckks/evaluator_batch.h"
#include "theo/errors.h"

namespace theo {

namespace {

void check_count(u32 count, u32 radix, const char* who) {
  if (count == 0 || !std::has_single_bit(count)) {
    throw ParameterError(std::string(who) + ": count " + std::to_string(count) +
                         " is not a power of two");
  }
  if (radix != 2 && radix != 4 && radix != 8) {
    throw ParameterError(std::string(who) + ": radix " + std::to_string(radix) +
                         " is not 2, 4 or 8");
  }
}

// The steps of a rotate-and-sum: (step stride, step radix) with the product of radices = count.
std::vector<std::pair<i64, u32>> steps_of(int stride, u32 count, u32 radix) {
  std::vector<std::pair<i64, u32>> out;
  i64 s = stride;
  u32 left = count;
  while (left > 1) {
    const u32 r = std::min(radix, left);
    out.emplace_back(s, r);
    s *= r;
    left /= r;
  }
  return out;
}

}  // namespace

int normalize_rotation(i64 r, u32 slots) {
  const i64 n = slots;
  i64 m = r % n;
  if (m < 0) m += n;
  return static_cast<int>(m);
}

std::vector<int> rotate_sum_rotations(int stride, u32 count, u32 slots, u32 radix) {
  check_count(count, radix, "rotate_sum_rotations");
  std::vector<int> out;
  for (const auto& [s, r] : steps_of(stride, count, radix)) {
    for (u32 t = 1; t < r; ++t) {
      const int rot = normalize_rotation(s * t, slots);
      if (rot != 0) out.push_back(rot);
    }
  }
  return out;
}

Ciphertext rotate_sum(const Evaluator& ev, const Ciphertext& ct, int stride, u32 count,
                      const GaloisKeys& keys, u32 radix) {
  check_count(count, radix, "rotate_sum");
  Ciphertext acc = ev.clone(ct);
  for (const auto& [s, r] : steps_of(stride, count, radix)) {
    std::vector<int> rots;
    for (u32 t = 1; t < r; ++t)
      rots.push_back(normalize_rotation(s * t, ct.slots()));
    if (rots.size() == 1) {
      ev.add_inplace(acc, ev.rotate(acc, rots[0], keys));
    } else {
      // Double hoisting: one ModUp for all rotations, their sum (with P * acc for the rotation by
      // 0) accumulated over Q_l u P, one ModDown: radix 4 costs 1 ModUp + 3 KeyMults + 1 ModDown
      // where two radix-2 steps cost 2 of each.
      rots.insert(rots.begin(), 0);
      std::vector<ExtendedCiphertext> parts = ev.rotate_hoisted_extended(acc, rots, keys);
      for (std::size_t i = 1; i < parts.size(); ++i)
        ev.add_inplace(parts[0], parts[i]);
      acc = ev.mod_down(std::move(parts[0]));
    }
  }
  return acc;
}

MergedReduction::MergedReduction(const Encoder& encoder, u32 level, u32 slots,
                                 std::vector<int> pre_strides,
                                 std::span<const std::vector<std::complex<double>>> masks,
                                 std::vector<int> shifts, std::vector<int> post_strides,
                                 u32 post_radix)
    : level_(level),
      slots_(slots),
      pre_(std::move(pre_strides)),
      shifts_(std::move(shifts)),
      post_(std::move(post_strides)),
      post_radix_(post_radix) {
  check_count(1, post_radix, "MergedReduction");
  if (post_radix > 2 && post_.size() > 1) {
    std::vector<int> sorted = post_;
    std::sort(sorted.begin(), sorted.end());
    bool geometric = sorted[0] > 0;
    for (std::size_t i = 1; i < sorted.size(); ++i)
      geometric = geometric && sorted[i] == 2 * sorted[i - 1];
    if (geometric) {
      post_base_ = sorted[0];
      post_count_ = 1u << sorted.size();
    }
  }
  if (level == 0) throw LevelError("MergedReduction: the masks need a level above 0");
  if (masks.empty() || shifts_.size() != masks.size()) {
    throw ParameterError("MergedReduction: " + std::to_string(masks.size()) + " masks and " +
                         std::to_string(shifts_.size()) + " shifts (one each per input)");
  }
  std::vector<std::vector<std::complex<double>>> distinct;
  for (const auto& m : masks) {
    if (m.size() != slots) {
      throw ParameterError("MergedReduction: a mask has " + std::to_string(m.size()) +
                           " values for " + std::to_string(slots) + " slots");
    }
    u32 idx = 0;
    while (idx < distinct.size() && distinct[idx] != m)
      ++idx;
    if (idx == distinct.size()) distinct.push_back(m);
    mask_of_.push_back(idx);
  }
  for (const auto& m : distinct)
    masks_.push_back(encoder.encode(m, level));
}

std::vector<int> MergedReduction::rotations() const {
  std::vector<int> out;
  for (const int s : pre_)
    out.push_back(normalize_rotation(s, slots_));
  for (const int s : shifts_)
    if (normalize_rotation(s, slots_) != 0) out.push_back(normalize_rotation(s, slots_));
  if (post_base_ != 0) {
    for (const int r : rotate_sum_rotations(post_base_, post_count_, slots_, post_radix_))
      out.push_back(r);
  } else {
    for (const int s : post_)
      out.push_back(normalize_rotation(s, slots_));
  }
  return out;
}

u32 MergedReduction::key_switches() const {
  u32 k = static_cast<u32>(pre_.size() * mask_of_.size());
  k += post_base_ != 0
           ? static_cast<u32>(
                 rotate_sum_rotations(post_base_, post_count_, slots_, post_radix_).size())
           : static_cast<u32>(post_.size());
  for (const int s : shifts_)
    if (normalize_rotation(s, slots_) != 0) ++k;
  return k;
}

Ciphertext MergedReduction::apply(const Evaluator& ev, std::span<const Ciphertext* const> cts,
                                  const GaloisKeys& keys) const {
  if (cts.size() != mask_of_.size()) {
    throw ParameterError("MergedReduction::apply: " + std::to_string(cts.size()) +
                         " ciphertexts for " + std::to_string(mask_of_.size()) + " masks");
  }
  for (const Ciphertext* c : cts) {
    if (c->level() != level_ || c->slots() != slots_) {
      throw LevelError("MergedReduction::apply: a ciphertext is at level " +
                       std::to_string(c->level()) + " with " + std::to_string(c->slots()) +
                       " slots; the reduction was built for level " + std::to_string(level_) +
                       " and " + std::to_string(slots_) + " slots");
    }
  }
  // Per-input steps, all inputs as one group (their key switches batch together).
  std::vector<Ciphertext> acc;
  acc.reserve(cts.size());
  for (const Ciphertext* c : cts)
    acc.push_back(ev.clone(*c));
  std::vector<const Ciphertext*> ptrs(acc.size());
  for (const int s : pre_) {
    for (std::size_t i = 0; i < acc.size(); ++i)
      ptrs[i] = &acc[i];
    const std::vector<int> rots(acc.size(), normalize_rotation(s, slots_));
    std::vector<Ciphertext> r = rotate_batch(ev, ptrs, rots, keys);
    for (std::size_t i = 0; i < acc.size(); ++i)
      ev.add_inplace(acc[i], r[i]);
  }
  // Masks (rescaled together), then the shifts as one batch.
  std::vector<Ciphertext> masked;
  masked.reserve(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i)
    masked.push_back(ev.multiply_plain(acc[i], masks_[mask_of_[i]]));
  for (std::size_t i = 0; i < masked.size(); ++i)
    ptrs[i] = &masked[i];
  std::vector<Ciphertext> scaled = rescale_batch(ev, ptrs);
  std::vector<const Ciphertext*> to_shift;
  std::vector<int> shift_rots;
  Ciphertext sum;
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    const int r = normalize_rotation(shifts_[i], slots_);
    if (r == 0) {
      if (sum.empty())
        sum = std::move(scaled[i]);
      else
        ev.add_inplace(sum, scaled[i]);
    } else {
      to_shift.push_back(&scaled[i]);
      shift_rots.push_back(r);
    }
  }
  if (!to_shift.empty()) {
    std::vector<Ciphertext> shifted = rotate_batch(ev, to_shift, shift_rots, keys);
    for (Ciphertext& s : shifted) {
      if (sum.empty())
        sum = std::move(s);
      else
        ev.add_inplace(sum, s);
    }
  }
  if (post_base_ != 0) return rotate_sum(ev, sum, post_base_, post_count_, keys, post_radix_);
  for (const int s : post_)
    ev.add_inplace(sum, ev.rotate(sum, normalize_rotation(s, slots_), keys));
  return sum;
}

std::vector<const Plaintext*> MergedReduction::plaintexts() const {
  std::vector<const Plaintext*> out;
  for (const Plaintext& m : masks_)
    out.push_back(&m);
  return out;
}

std::vector<Plaintext*> MergedReduction::plaintexts() {
  std::vector<Plaintext*> out;
  for (Plaintext& m : masks_)
    out.push_back(&m);
  return out;
}

}  // namespace theo
