#pragma once
// Key material. All keys live in the NTT domain. Switching keys are hybrid keys over P * Q_max,
// one (b_k, a_k) pair per digit chunk k, usable at every level by taking the level's limbs.

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "theo/math/uniform_seed.h"
#include "theo/ring/poly.h"

namespace theo {

// Ternary secret s with exactly `hamming_weight` nonzero coefficients.
class SecretKey {
 public:
  SecretKey() = default;
  SecretKey(u64 context_id, std::vector<i32> coeffs, u32 hamming_weight, RnsPoly ntt)
      : context_id_(context_id),
        coeffs_(std::move(coeffs)),
        hamming_weight_(hamming_weight),
        ntt_(std::move(ntt)) {}
  SecretKey(SecretKey&& o) noexcept { swap(o); }
  SecretKey& operator=(SecretKey&& o) noexcept {
    SecretKey tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;

  bool empty() const { return context_id_ == 0 || ntt_.empty(); }
  u64 context_id() const { return context_id_; }
  // Coefficients in {-1, 0, 1} on the host (bootstrapping needs them).
  const std::vector<i32>& coefficients() const { return coeffs_; }
  u32 hamming_weight() const { return hamming_weight_; }
  // s in the NTT domain over Q_max u P (the Context's key_basis()).
  const RnsPoly& ntt() const { return ntt_; }

  void swap(SecretKey& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(coeffs_, o.coeffs_);
    std::swap(hamming_weight_, o.hamming_weight_);
    std::swap(ntt_, o.ntt_);
  }

 private:
  u64 context_id_ = 0;
  std::vector<i32> coeffs_;
  u32 hamming_weight_ = 0;
  RnsPoly ntt_;
};

// (b, a) = (-a s + e, a) over Q_max u P. A generated key remembers the seed of a (stream 0), so
// that it serializes as (b, seed).
class PublicKey {
 public:
  PublicKey() = default;
  PublicKey(u64 context_id, RnsPoly b, RnsPoly a, std::optional<UniformSeed> a_seed = std::nullopt)
      : context_id_(context_id), b_(std::move(b)), a_(std::move(a)), a_seed_(a_seed) {}
  PublicKey(PublicKey&& o) noexcept { swap(o); }
  PublicKey& operator=(PublicKey&& o) noexcept {
    PublicKey tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  PublicKey(const PublicKey&) = delete;
  PublicKey& operator=(const PublicKey&) = delete;

  bool empty() const { return context_id_ == 0 || b_.empty(); }
  u64 context_id() const { return context_id_; }
  const RnsPoly& b() const { return b_; }
  const RnsPoly& a() const { return a_; }
  // The seed a was expanded from (Backend::sample_uniform stream 0), when known.
  const std::optional<UniformSeed>& a_seed() const { return a_seed_; }

  void swap(PublicKey& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(b_, o.b_);
    std::swap(a_, o.a_);
    std::swap(a_seed_, o.a_seed_);
  }

 private:
  u64 context_id_ = 0;
  RnsPoly b_;
  RnsPoly a_;
  std::optional<UniformSeed> a_seed_;
};

// Key switching s' -> s: for every chunk k, b_k = -a_k s + e_k + [prime in chunk k] (P mod prime)
// s' over Q_max u P (on P primes the gadget term is 0). A generated key remembers the one seed its
// a_k were expanded from (stream k for chunk k), so that it serializes as (b_0 .. b_{dnum-1},
// seed).
//
// A compact key (make_compact) keeps only the b_k and that seed: half the memory. Key switching
// then expands the a_k limbs it reads for each KeyMult (Backend::sample_uniform gives the same
// words for any subset of a limb's primes) and frees them after it, which costs the expansion of
// those limbs per use (ChaCha20: about a tenth of a second per key switch at N = 2^16 with 59
// limbs and 4 digits on one CPU core). Meant for memory-bound hosts (the CPU demo of N = 2^16
// bootstrapping); a GPU keeps its keys expanded.
class SwitchingKey {
 public:
  SwitchingKey() = default;
  SwitchingKey(u64 context_id, std::vector<RnsPoly> b, std::vector<RnsPoly> a,
               std::optional<UniformSeed> a_seed = std::nullopt)
      : context_id_(context_id), b_(std::move(b)), a_(std::move(a)), a_seed_(a_seed) {}
  SwitchingKey(SwitchingKey&& o) noexcept { swap(o); }
  SwitchingKey& operator=(SwitchingKey&& o) noexcept {
    SwitchingKey tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  SwitchingKey(const SwitchingKey&) = delete;
  SwitchingKey& operator=(const SwitchingKey&) = delete;

  bool empty() const { return context_id_ == 0 || b_.empty(); }
  u64 context_id() const { return context_id_; }
  u32 dnum() const { return static_cast<u32>(b_.size()); }
  const RnsPoly& b(u32 chunk) const { return b_.at(chunk); }
  // a_k; a compact key has none (ContextError): key switching expands it from a_seed().
  const RnsPoly& a(u32 chunk) const;
  // The seed of every a_k (Backend::sample_uniform stream k), when known.
  const std::optional<UniformSeed>& a_seed() const { return a_seed_; }
  // True when the a_k are kept as their seed only (make_compact).
  bool compact() const { return !b_.empty() && a_.empty(); }
  // Frees the a_k, keeping their seed. ParameterError when the key has no seed of the
  // Backend::sample_uniform scheme (a key loaded from an expanded file, say); nothing changes then.
  void make_compact();
  // 32-bit words held in memory: every b_k and, unless compact, every a_k.
  std::size_t stored_words() const;

  void swap(SwitchingKey& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(b_, o.b_);
    std::swap(a_, o.a_);
    std::swap(a_seed_, o.a_seed_);
  }

 private:
  u64 context_id_ = 0;
  std::vector<RnsPoly> b_;
  std::vector<RnsPoly> a_;
  std::optional<UniformSeed> a_seed_;
};

// s^2 -> s.
class RelinKey {
 public:
  RelinKey() = default;
  explicit RelinKey(SwitchingKey key) : key_(std::move(key)) {}
  bool empty() const { return key_.empty(); }
  u64 context_id() const { return key_.context_id(); }
  const SwitchingKey& key() const { return key_; }
  void make_compact() { key_.make_compact(); }

 private:
  SwitchingKey key_;
};

// phi_g(s) -> s for a set of Galois elements g (rotation by r: g = 5^r mod 2N; conjugation:
// g = 2N - 1).
class GaloisKeys {
 public:
  GaloisKeys() = default;
  explicit GaloisKeys(u64 context_id) : context_id_(context_id) {}
  GaloisKeys(GaloisKeys&& o) noexcept { swap(o); }
  GaloisKeys& operator=(GaloisKeys&& o) noexcept {
    GaloisKeys tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  GaloisKeys(const GaloisKeys&) = delete;
  GaloisKeys& operator=(const GaloisKeys&) = delete;

  bool empty() const { return context_id_ == 0; }
  u64 context_id() const { return context_id_; }
  bool contains(u32 galois_element) const { return keys_.count(galois_element) != 0; }
  const SwitchingKey* find(u32 galois_element) const {
    const auto it = keys_.find(galois_element);
    return it == keys_.end() ? nullptr : &it->second;
  }
  std::vector<u32> galois_elements() const {
    std::vector<u32> out;
    for (const auto& [g, key] : keys_)
      out.push_back(g);
    return out;
  }
  void insert(u32 galois_element, SwitchingKey key) {
    keys_.insert_or_assign(galois_element, std::move(key));
  }
  // SwitchingKey::make_compact on every key not yet compact.
  void make_compact() {
    for (auto& [g, key] : keys_)
      if (!key.compact()) key.make_compact();
  }

  void swap(GaloisKeys& o) noexcept {
    std::swap(context_id_, o.context_id_);
    std::swap(keys_, o.keys_);
  }

 private:
  u64 context_id_ = 0;
  std::map<u32, SwitchingKey> keys_;
};

}  // namespace theo
