#pragma once
// The fork / end_fork / join protocol of Backend (theo/ring/backend.h, "second stream"), checked
// the same way by every backend so that a misuse found on the CPU is the one the GPU would hit.
//
// A Context may be shared by several threads, so a fork belongs to the thread that opened it: only
// that thread's ops go to the branch lane and only its host-side calls are refused meanwhile;
// other threads keep issuing on the main lane, and a second thread's fork() waits until the first
// one joins (there is one branch stream).

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

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
    owner_.store(std::thread::id());
    lane_ = Lane::kMain;
    busy_.unlock();
  }

  // Whether the calling thread has a fork open.
  bool open() const { return mine(); }
  // Where the calling thread's ops go now.
  Lane lane() const { return mine() ? lane_ : Lane::kMain; }
  // Host-side work (upload, download, capture begin / end) waits for neither stream's branch
  // bookkeeping; it belongs before fork() or after join().
  void refuse(std::string_view op) const {
    if (mine())
      throw BackendError(std::string(op) +
                         " is not allowed between fork() and join() (do it before the fork or "
                         "after the join)");
  }

 private:
  bool mine() const { return owner_.load() == std::this_thread::get_id(); }

  std::mutex busy_;
  // Set only by the thread holding busy_; another thread's id never equals it, so lane_ is read
  // only by its writer.
  std::atomic<std::thread::id> owner_{};
  Lane lane_ = Lane::kMain;
};

}  // namespace theo
