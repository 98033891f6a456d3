#pragma once
// Rotate-and-sum reductions, the workhorse of packed encrypted linear algebra.
//
//   rotate_sum(ct, stride, count):  out[p] = sum_{t < count} ct[p + t * stride]   (slots mod n)
//
// in log2(count) rotate-and-add steps (count a power of two), or fewer, larger steps with
// double-hoisted rotations (radix 4 or 8: each step rotates one ciphertext radix - 1 times sharing
// one ModUp, sums over Q_l u P and ModDowns once).
// A negative stride sums right rotations, which replicates a value into the `count` - 1 slots
// after it (the slots in between must be zero). Reducing along the *outer* axis of a packed
// matrix (stride = row width, count = rows) leaves the sum in every row; along the inner axis
// only the first slot of each row is the sum.
//
// MergedReduction reduces C ciphertexts that each need the same rotate-and-sum: each is reduced
// only until its result fits in a 1/C share of the slots (`pre_strides`), masked to that share
// (one plaintext product, the mask may carry a factor), rotated into its own share (`shifts`), and
// the C results are added and reduced together (`post_strides`): C * log2(C) + (C - 1) + log2(rest)
// rotations instead of C * log2(count), for one level.
//
// Rotations are left rotations by r in [0, n) of an n-slot ciphertext (a right rotation by r is the
// left rotation by n - r): the keys are those of `rotations()` below.

#include <complex>
#include <span>
#include <vector>

#include "theo/ckks/encoder.h"
#include "theo/ckks/evaluator.h"

namespace theo {

// out[p] = sum_{t < count} ct[p + t * stride] over ct.slots() slots; count a power of two,
// radix 2, 4 or 8 (hoisted groups of radix - 1 rotations).
Ciphertext rotate_sum(const Evaluator& ev, const Ciphertext& ct, int stride, u32 count,
                      const GaloisKeys& keys, u32 radix = 2);
// The left rotations rotate_sum needs on `slots` slots.
std::vector<int> rotate_sum_rotations(int stride, u32 count, u32 slots, u32 radix = 2);
// r mod slots in [0, slots).
int normalize_rotation(i64 r, u32 slots);

class MergedReduction {
 public:
  // pre_strides: rotate-and-add steps applied to every input (one rotation each);
  // masks[c]: slot values multiplied into input c after them (one plaintext product, encoded at
  //           `level` - the level of the inputs after their products - at that level's scale);
  // shifts[c]: left rotation of input c after its mask (0: none);
  // post_strides: rotate-and-add steps on the sum. Masks of equal values share one plaintext.
  // post_radix > 2: when the post strides are m, 2m, ..., 2^(k-1) m (any order), they run as
  // rotate_sum(sum, m, 2^k, post_radix) (double-hoisted steps).
  MergedReduction(const Encoder& encoder, u32 level, u32 slots, std::vector<int> pre_strides,
                  std::span<const std::vector<std::complex<double>>> masks, std::vector<int> shifts,
                  std::vector<int> post_strides, u32 post_radix = 2);

  // cts: relinearized, at level(), slots() slots, as many as there are masks. Output at level()
  // - 1.
  Ciphertext apply(const Evaluator& ev, std::span<const Ciphertext* const> cts,
                   const GaloisKeys& keys) const;
  std::vector<int> rotations() const;
  // Key switches apply() runs: pre steps x inputs + nonzero shifts + post steps.
  u32 key_switches() const;
  u32 level() const { return level_; }
  u32 slots() const { return slots_; }
  u32 inputs() const { return static_cast<u32>(mask_of_.size()); }
  // The mask plaintexts apply() reads (one per distinct mask, in a fixed order), for replaying a
  // captured apply() with another instance's masks (Graph::set_input on each pair).
  std::vector<const Plaintext*> plaintexts() const;
  std::vector<Plaintext*> plaintexts();

 private:
  u32 level_ = 0;
  u32 slots_ = 0;
  std::vector<int> pre_, shifts_, post_;
  std::vector<Plaintext> masks_;
  std::vector<u32> mask_of_;  // input -> index into masks_
  u32 post_radix_ = 2;
  int post_base_ = 0;   // m when the post strides are m, 2m, 4m, ... and post_radix_ > 2, else 0
  u32 post_count_ = 0;  // 2^k
};

}  // namespace theo
