#pragma once
// The fork / end_fork / join protocol of StreamControl (theo/ring/stream_control.h), checked
// the same way by every backend so that a misuse found on the CPU is the one the GPU would hit.
//
// A Context may be shared by several threads, so a fork belongs to the thread that opened it: only
// that thread's ops go to the branch lane and only its host-side calls are refused meanwhile;
// other threads keep issuing on the main lane, and a second thread's fork() waits until the first
// one joins (there is one branch stream).
//
// Memory inside a fork: a block the owner allocates after fork() belongs to the lane issuing at
// the time. Freed while that lane still issues, it may be reused by that lane at once (every op
// that touched it is that lane's, earlier in its order). Any other block the owner frees inside
// the fork may still be in use on the other lane, so it is held until join(). Allocators ask
// on_free() which rule applies; other threads' blocks keep the normal rules.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "theo/errors.h"

namespace theo {

class ForkState {
 public:
  enum class Lane { kMain, kBranch };

  void fork() {
    if (mine()) throw BackendError("fork: a fork is already open (join() it first)");
    busy_.lock();  // released by this thread's join()
    owner_.store(std::this_thread::get_id());
    lane_ = Lane::kBranch;
  }
  void end_fork() {
    if (!mine() || lane_ != Lane::kBranch)
      throw BackendError("end_fork: no branch is being issued (call fork() first)");
    lane_ = Lane::kMain;
  }
  void join() {
    if (!mine()) throw BackendError("join: no fork is open");
    tags_.clear();
    owner_.store(std::thread::id());
    lane_ = Lane::kMain;
    busy_.unlock();
  }

  // Whether the calling thread has a fork open.
  bool open() const { return mine(); }
  // Where the calling thread's ops go now.
  Lane lane() const { return mine() ? lane_ : Lane::kMain; }
  // What a free of block p means (the memory rules above): kNormal outside the calling
  // thread's fork, kLane when the issuing lane allocated p inside the fork (reusable by that lane
  // now), kHold otherwise (keep it until join()).
  enum class FreeRule { kNormal, kLane, kHold };
  void note_alloc(const void* p) {
    if (mine()) tags_[p] = lane_;
  }
  FreeRule on_free(const void* p) {
    if (!mine()) return FreeRule::kNormal;
    const auto it = tags_.find(p);
    if (it == tags_.end()) return FreeRule::kHold;
    const bool same = it->second == lane_;
    tags_.erase(it);
    return same ? FreeRule::kLane : FreeRule::kHold;
  }

 private:
  bool mine() const { return owner_.load() == std::this_thread::get_id(); }

  std::mutex busy_;
  // Set only by the thread holding busy_; another thread's id never equals it, so lane_ is read
  // only by its writer.
  std::atomic<std::thread::id> owner_{};
  Lane lane_ = Lane::kMain;
  std::unordered_map<const void*, Lane> tags_;  // blocks allocated inside the fork, by lane
};

}  // namespace theo
