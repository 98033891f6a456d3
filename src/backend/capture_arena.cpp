#include "backend/capture_arena.h"

#include "theo/errors.h"

namespace theo {

CaptureArena::CaptureArena(std::shared_ptr<Allocator> upstream) : upstream_(std::move(upstream)) {
  if (!upstream_) throw ParameterError("CaptureArena: the upstream allocator is null");
}

CaptureArena::~CaptureArena() {
  for (const Block& b : owned_)
    upstream_->deallocate(b.ptr, b.words);
}

u32* CaptureArena::allocate(std::size_t words) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return upstream_->allocate(words);
  // Best fit, at most twice the request: polys of neighbouring levels share blocks, while a
  // small temporary does not pin a large one.
  const auto it = free_.lower_bound(words);
  if (it != free_.end() && it->first <= 2 * words) {
    u32* p = it->second;
    free_.erase(it);
    return p;
  }
  u32* p = upstream_->allocate(words);
  try {
    owned_.push_back({p, words});
    captured_.emplace(p, words);
  } catch (...) {
    if (!owned_.empty() && owned_.back().ptr == p) owned_.pop_back();
    upstream_->deallocate(p, words);
    throw;
  }
  return p;
}

void CaptureArena::deallocate(u32* ptr, std::size_t words) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = captured_.find(ptr);
  if (it == captured_.end()) {
    // Made after the capture ended: no captured work refers to it.
    upstream_->deallocate(ptr, words);
    return;
  }
  // Captured work writes this block on every replay: reuse it only within the capture, keep it
  // otherwise (the destructor returns it).
  if (open_) free_.emplace(it->second, ptr);
}

void CaptureArena::adopt(u32* ptr, std::size_t words) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    owned_.push_back({ptr, words});
  } catch (...) {
    // Out of host memory for the bookkeeping: leak the block rather than free memory that
    // captured work still reads.
  }
}

void CaptureArena::close() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
  free_.clear();
}

}  // namespace theo
