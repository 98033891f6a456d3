#include "backend/capture_arena.h"

#include <utility>

#include "theo/errors.h"

namespace theo {

namespace {

// Best fit from a free list (words -> block), at most twice the request: polys of neighbouring
// levels share blocks, while a small temporary does not pin a large one. {null, 0} if none.
std::pair<u32*, std::size_t> take_best_fit(std::multimap<std::size_t, u32*>& list,
                                           std::size_t words) {
  const auto it = list.lower_bound(words);
  if (it == list.end() || it->first > 2 * words) return {nullptr, 0};
  const std::pair<u32*, std::size_t> block{it->second, it->first};
  list.erase(it);
  return block;
}

}  // namespace

CaptureWorkspace::CaptureWorkspace(std::shared_ptr<Allocator> upstream)
    : upstream_(std::move(upstream)) {
  if (!upstream_) throw ParameterError("CaptureWorkspace: the upstream allocator is null");
}

CaptureWorkspace::~CaptureWorkspace() {
  for (const auto& [ptr, words] : owned_)
    upstream_->deallocate(ptr, words);
}

void CaptureWorkspace::own(u32* ptr, std::size_t words) {
  std::lock_guard<std::mutex> lock(mu_);
  owned_.emplace_back(ptr, words);
  owned_words_ += words;
}

std::pair<u32*, std::size_t> CaptureWorkspace::take(std::size_t words) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto block = take_best_fit(free_, words);
  free_words_ -= block.second;
  return block;
}

void CaptureWorkspace::give(u32* ptr, std::size_t words) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    free_.emplace(words, ptr);
    free_words_ += words;
  } catch (...) {
    // No host memory for the bookkeeping: the block is simply not reused (owned_ returns it).
  }
}

std::size_t CaptureWorkspace::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owned_words_ * sizeof(u32);
}

std::size_t CaptureWorkspace::free_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_words_ * sizeof(u32);
}

CaptureWorkspace::Replay::Replay(CaptureWorkspace& ws) : ws_(ws) {
  if (ws_.replaying_.exchange(true))
    throw BackendError(
        "replay: another graph of the same capture sequence is replaying on another thread (the "
        "graphs of a sequence share scratch memory: replay them one at a time)");
}

CaptureArena::CaptureArena(std::shared_ptr<Allocator> upstream,
                           std::shared_ptr<CaptureWorkspace> shared)
    : upstream_(std::move(upstream)), shared_(std::move(shared)) {
  if (!upstream_) throw ParameterError("CaptureArena: the upstream allocator is null");
  if (shared_ && shared_->upstream() != upstream_)
    throw BackendError(
        "begin_capture: the capture workspace belongs to another backend (make it with this "
        "backend's make_capture_workspace())");
}

CaptureArena::~CaptureArena() {
  for (const Block& b : owned_)
    upstream_->deallocate(b.ptr, b.words);
}

void CaptureArena::keep(u32* ptr, std::size_t words) {
  if (shared_)
    shared_->own(ptr, words);
  else
    owned_.push_back({ptr, words});
}

u32* CaptureArena::allocate(std::size_t words) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return upstream_->allocate(words);
  const bool forked = fork_ != nullptr && fork_->open();
  u32* p = take_best_fit(free_, words).first;
  if (p == nullptr && forked)
    p = take_best_fit(lane_free_[fork_->lane() == ForkState::Lane::kBranch ? 1 : 0], words).first;
  if (p == nullptr && shared_) {
    // Scratch of an earlier capture of the sequence: every op that touched it runs before this
    // capture's work, so either lane of a fork may take it, like a block freed before the fork.
    const auto [q, size] = shared_->take(words);
    if (q != nullptr) {
      try {
        captured_.emplace(q, size);
      } catch (...) {
        shared_->give(q, size);
        throw;
      }
      p = q;
    }
  }
  if (p == nullptr) {
    p = upstream_->allocate(words);
    try {
      captured_.emplace(p, words);
    } catch (...) {
      upstream_->deallocate(p, words);
      throw;
    }
    try {
      keep(p, words);
    } catch (...) {
      captured_.erase(p);
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
    keep(ptr, words);
  } catch (...) {
    // Out of host memory for the bookkeeping: leak the block rather than free memory that
    // captured work still reads.
  }
}

void CaptureArena::close() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
  if (shared_) {
    // Free now: scratch, which later captures of the sequence may take. An aborted capture's
    // blocks qualify too (lanes and held ones included): its work never runs.
    for (auto* list : {&free_, &lane_free_[0], &lane_free_[1], &held_}) {
      for (const auto& [words, ptr] : *list) {
        captured_.erase(ptr);
        shared_->give(ptr, words);
      }
    }
  }
  free_.clear();
  lane_free_[0].clear();
  lane_free_[1].clear();
  held_.clear();
}

}  // namespace theo
