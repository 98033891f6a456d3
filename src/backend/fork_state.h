#pragma once
// The fork / end_fork / join protocol of Backend (theo/ring/backend.h, "second stream"), checked
// the same way by every backend so that a misuse found on the CPU is the one the GPU would hit.

#include <string>
#include <string_view>

#include "theo/errors.h"

namespace theo {

class ForkState {
 public:
  enum class Lane { kMain, kBranch };

  void fork() {
    if (open_) throw BackendError("fork: a fork is already open (join() it first)");
    open_ = true;
    lane_ = Lane::kBranch;
  }
  void end_fork() {
    if (!open_ || lane_ != Lane::kBranch)
      throw BackendError("end_fork: no branch is being issued (call fork() first)");
    lane_ = Lane::kMain;
  }
  void join() {
    if (!open_) throw BackendError("join: no fork is open");
    open_ = false;
    lane_ = Lane::kMain;
  }

  bool open() const { return open_; }
  // Where the ops issued now go.
  Lane lane() const { return lane_; }
  // Host-side work (upload, download, capture begin / end) waits for neither stream's branch
  // bookkeeping; it belongs before fork() or after join().
  void refuse(std::string_view op) const {
    if (open_)
      throw BackendError(std::string(op) +
                         " is not allowed between fork() and join() (do it before the fork or "
                         "after the join)");
  }

 private:
  bool open_ = false;
  Lane lane_ = Lane::kMain;
};

}  // namespace theo
