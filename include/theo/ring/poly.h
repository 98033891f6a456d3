#pragma once
// RNS polynomial storage: one contiguous allocation of limbs x N 32-bit words, limb i holding the
// residues modulo the i-th prime of the polynomial's Basis. Words are canonical: in [0, q).
// Whether the words are coefficients or NTT evaluations is tracked by the layer above (ckks/).

#include <memory>
#include <vector>

#include "theo/ring/basis.h"

namespace theo {

// Memory of one backend (host heap, device pool). Outlives every Buffer it handed out.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Throws OutOfMemoryError naming the requested and the available size.
  virtual u32* allocate(std::size_t words) = 0;
  virtual void deallocate(u32* ptr, std::size_t words) noexcept = 0;
  // True when the memory is directly addressable from the host.
  virtual bool host_accessible() const = 0;
};

// Move-only owning handle of `words` 32-bit words from an Allocator.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::shared_ptr<Allocator> alloc, std::size_t words)
      : alloc_(std::move(alloc)), words_(words) {
    if (words_ > 0) ptr_ = alloc_->allocate(words_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Buffer() {
    if (ptr_) alloc_->deallocate(ptr_, words_);
  }
  void swap(Buffer& o) noexcept {
    std::swap(alloc_, o.alloc_);
    std::swap(ptr_, o.ptr_);
    std::swap(words_, o.words_);
  }

  u32* data() const { return ptr_; }
  std::size_t words() const { return words_; }
  bool empty() const { return ptr_ == nullptr; }
  const std::shared_ptr<Allocator>& allocator() const { return alloc_; }

 private:
  std::shared_ptr<Allocator> alloc_;
  u32* ptr_ = nullptr;
  std::size_t words_ = 0;
};

// Non-owning view of limbs x n words (limb i at data + i * n) over `basis`.
template <typename Word>
struct BasicPolyRef {
  Word* data = nullptr;
  u32 n = 0;
  Basis basis;

  u32 limbs() const { return basis.size; }
  std::size_t words() const { return static_cast<std::size_t>(basis.size) * n; }
  Word* limb(u32 i) const { return data + static_cast<std::size_t>(i) * n; }
  // Limbs [start, start + count), no copy.
  BasicPolyRef slice(u32 start, u32 count) const {
    return BasicPolyRef{data + static_cast<std::size_t>(start) * n, n, basis.slice(start, count)};
  }
  operator BasicPolyRef<const Word>() const { return {data, n, basis}; }
};
using PolyRef = BasicPolyRef<u32>;
using ConstPolyRef = BasicPolyRef<const u32>;

// Owning polynomial: Buffer + shape.
class RnsPoly {
 public:
  RnsPoly() = default;
  RnsPoly(std::shared_ptr<Allocator> alloc, u32 n, const Basis& basis)
      : buf_(std::move(alloc), static_cast<std::size_t>(n) * basis.size), n_(n), basis_(basis) {}

  u32 n() const { return n_; }
  const Basis& basis() const { return basis_; }
  u32 limbs() const { return basis_.size; }
  std::size_t words() const { return buf_.words(); }
  bool empty() const { return buf_.empty(); }
  u32* data() { return buf_.data(); }
  const u32* data() const { return buf_.data(); }
  const Buffer& buffer() const { return buf_; }

  PolyRef ref() { return PolyRef{buf_.data(), n_, basis_}; }
  ConstPolyRef ref() const { return ConstPolyRef{buf_.data(), n_, basis_}; }
  ConstPolyRef cref() const { return ref(); }
  PolyRef slice(u32 start, u32 count) { return ref().slice(start, count); }
  ConstPolyRef slice(u32 start, u32 count) const { return ref().slice(start, count); }

 private:
  Buffer buf_;
  u32 n_ = 0;
  Basis basis_;
};

}  // namespace theo
