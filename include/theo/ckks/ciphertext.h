#pragma once
// Plaintext and Ciphertext: polynomials in the NTT domain over the basis of their level, with the
// exact scale they carry and the id of the Context they were made with. Moving from an object
// leaves it empty (every API taking it then raises ContextError naming the argument).

#include <optional>
#include <utility>
#include <vector>

#include "theo/math/prng.h"
#include "theo/ring/poly.h"

namespace theo {

class Plaintext {
 public:
  Plaintext() = default;
  Plaintext(u64 context_id, u32 level, long double scale, u32 slots, RnsPoly poly)
      : context_id_(context_id),
        level_(level),
        scale_(scale),
        slots_(slots),
        poly_(std::move(poly)) {}
  Plaintext(Plaintext&& o) noexcept { swap(o); }
  Plaintext& operator=(Plaintext&& o) noexcept {
    Plaintext tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Plaintext(const Plaintext&) = delete;
  Plaintext& operator=(const Plaintext&) = delete;

  bool empty() const { return context_id_ == 0 || poly_.empty(); }
  u64 context_id() const { return context_id_; }
  u32 level() const { return level_; }
  long double scale() const { return scale_; }
  void set_scale(long double s) { scale_ = s; }
  u32 slots() const { return slots_; }
  const RnsPoly& poly() const { return poly_; }
  RnsPoly& poly() { return poly_; }

  void swap(Plaintext& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(level_, o.level_);
    std::swap(scale_, o.scale_);
    std::swap(slots_, o.slots_);
    std::swap(poly_, o.poly_);
  }

 private:
  u64 context_id_ = 0;
  u32 level_ = 0;
  long double scale_ = 0;
  u32 slots_ = 0;
  RnsPoly poly_;
};

// (c0, c1) or, after a multiplication without relinearization, (c0, c1, c2); decrypts to
// c0 + c1 s (+ c2 s^2). A fresh secret-key ciphertext remembers the seed of c1 so that it can be
// serialized as (c0, seed); any operation that writes a ciphertext drops the seed.
class Ciphertext {
 public:
  Ciphertext() = default;
  Ciphertext(u64 context_id, u32 level, long double scale, u32 slots, std::vector<RnsPoly> polys)
      : context_id_(context_id),
        level_(level),
        scale_(scale),
        slots_(slots),
        polys_(std::move(polys)) {}
  Ciphertext(Ciphertext&& o) noexcept { swap(o); }
  Ciphertext& operator=(Ciphertext&& o) noexcept {
    Ciphertext tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Ciphertext(const Ciphertext&) = delete;
  Ciphertext& operator=(const Ciphertext&) = delete;

  bool empty() const { return context_id_ == 0 || polys_.empty(); }
  u64 context_id() const { return context_id_; }
  u32 level() const { return level_; }
  long double scale() const { return scale_; }
  void set_scale(long double s) { scale_ = s; }
  u32 slots() const { return slots_; }
  void set_slots(u32 s) { slots_ = s; }
  u32 size() const { return static_cast<u32>(polys_.size()); }  // 2, or 3 before relinearization
  const RnsPoly& poly(u32 i) const { return polys_.at(i); }
  RnsPoly& poly(u32 i) { return polys_.at(i); }
  const std::vector<RnsPoly>& polys() const { return polys_; }
  std::vector<RnsPoly>& polys() { return polys_; }

  bool is_seeded() const { return seed_.has_value(); }
  const std::optional<Prng::Seed>& seed() const { return seed_; }
  void set_seed(const Prng::Seed& s) { seed_ = s; }
  void drop_seed() { seed_.reset(); }

  void swap(Ciphertext& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(level_, o.level_);
    std::swap(scale_, o.scale_);
    std::swap(slots_, o.slots_);
    std::swap(polys_, o.polys_);
    std::swap(seed_, o.seed_);
  }

 private:
  u64 context_id_ = 0;
  u32 level_ = 0;
  long double scale_ = 0;
  u32 slots_ = 0;
  std::vector<RnsPoly> polys_;
  std::optional<Prng::Seed> seed_;
};

}  // namespace theo
