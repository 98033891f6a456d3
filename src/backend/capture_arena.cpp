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

u32* CaptureArena::take(std::multimap<std::size_t, u32*>& list, std::size_t words) {
  // Best fit, at most twice the request: polys of neighbouring levels share blocks, while a
  // small temporary does not pin a large one.
  const auto it = list.lower_bound(words);
  if (it == list.end() || it->first > 2 * words) return nullptr;
  u32* p = it->second;
  list.erase(it);
  return p;
}

u32* CaptureArena::allocate(std::size_t words) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return upstream_->allocate(words);
  const bool forked = fork_ != nullptr && fork_->open();
  u32* p = take(free_, words);
  if (p == nullptr && forked)
    p = take(lane_free_[fork_->lane() == ForkState::Lane::kBranch ? 1 : 0], words);
  if (p == nullptr) {
    p = upstream_->allocate(words);
    try {
      owned_.push_back({p, words});
      captured_.emplace(p, words);
    } catch (...) {
      if (!owned_.empty() && owned_.back().ptr == p) owned_.pop_back();
      upstream_->deallocate(p, words);
      throw;
    }
  }
  if (forked) {
    try {
      fork_->note_alloc(p);
    } catch (...) {
      free_.emplace(captured_.at(p), p);  // not handed out: reusable as before
      throw;
    }
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
  if (!open_) return;
  try {
    switch (fork_ != nullptr ? fork_->on_free(ptr) : ForkState::FreeRule::kNormal) {
      case ForkState::FreeRule::kNormal:
        free_.emplace(it->second, ptr);
        break;
      case ForkState::FreeRule::kLane:
        lane_free_[fork_->lane() == ForkState::Lane::kBranch ? 1 : 0].emplace(it->second, ptr);
        break;
      case ForkState::FreeRule::kHold:
        held_.emplace(it->second, ptr);
        break;
    }
  } catch (...) {
    // No host memory for the bookkeeping: the block is simply not reused (owned_ returns it).
  }
}

void CaptureArena::join() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return;
  try {
    for (auto* list : {&lane_free_[0], &lane_free_[1], &held_})
      free_.merge(*list);
  } catch (...) {
  }
  lane_free_[0].clear();
  lane_free_[1].clear();
  held_.clear();
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
  lane_free_[0].clear();
  lane_free_[1].clear();
  held_.clear();
}

}  // namespace theo
