#pragma once
// ForkScope: an open StreamControl::fork (theo/ring/stream_control.h), joined when the scope ends
// however it ends, so that an exception on either lane does not leave the backend forked.
//
//   {
//     ForkScope fork(be);  // fork()
//     ...                  // branch (second stream)
//     be.end_fork();
//     ...                  // main lane, concurrent with the branch
//     fork.join();         // or at scope exit
//   }

#include "theo/ring/stream_control.h"

namespace theo {

class ForkScope {
 public:
  explicit ForkScope(StreamControl& be) : be_(be) { be_.fork(); }
  ForkScope(const ForkScope&) = delete;
  ForkScope& operator=(const ForkScope&) = delete;
  ~ForkScope() {
    if (joined_) return;
    try {
      be_.join();
    } catch (...) {  // already unwinding from a lane's error; that one is reported
    }
  }
  void join() {
    joined_ = true;
    be_.join();
  }

 private:
  StreamControl& be_;
  bool joined_ = false;
};

}  // namespace theo
