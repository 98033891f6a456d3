#pragma once
// Memory of one capture (Backend::begin_capture .. end_capture), shared by the CPU and CUDA
// backends. Captured work names its operands by address, so the memory rules differ from eager
// execution:
//  * A block made and freed during the capture goes to a free list that later allocations of the
//    same capture reuse. Safe: a replay runs the ops in capture order, so each reuse happens after
//    the last op that touched the block before, exactly as recorded.
//  * Blocks made during the capture and still held when it ends (the outputs) are rewritten by
//    every replay, so freeing them later keeps them: they go back to `upstream` only when the arena
//    dies, which is after the captured work and every buffer made from it (shared_ptr).
//  * A block from before the capture that is freed during it (an input dropped inside) is still
//    read by the captured work: the backend hands it to adopt(), which keeps it until the arena
//    dies. Adopted blocks are never reused, since their first use in a replay is a read.
// Allocations after the capture ended (through a handle copied from an output's buffer) are plain
// upstream blocks: freeing them frees them.
//  * Inside a fork (Backend::fork, with set_fork): a lane may take blocks freed before the fork
//    and blocks it made and freed itself; a block the other lane may still use (made before the
//    fork, or by the other lane) waits until join(). The lanes are concurrent graph branches, so
//    capture order alone no longer orders a reuse after the last use.

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backend/fork_state.h"
#include "theo/ring/poly.h"

namespace theo {

class CaptureArena final : public Allocator {
 public:
  explicit CaptureArena(std::shared_ptr<Allocator> upstream);
  ~CaptureArena() override;
  CaptureArena(const CaptureArena&) = delete;
  CaptureArena& operator=(const CaptureArena&) = delete;

  u32* allocate(std::size_t words) override;
  void deallocate(u32* ptr, std::size_t words) noexcept override;
  bool host_accessible() const override { return upstream_->host_accessible(); }

  // A block of `upstream` allocated before the capture and freed during it: kept until the arena
  // dies, then returned through upstream->deallocate(ptr, words).
  void adopt(u32* ptr, std::size_t words) noexcept;
  // The capture ended (or was aborted): blocks of the capture are no longer reused.
  void close() noexcept;
  // The backend's fork state, whose lanes split reuse while a fork is open (null: one lane).
  void set_fork(ForkState* fork) noexcept { fork_ = fork; }
  // The fork's join edge is captured: every block freed inside the fork is reusable by anyone.
  void join() noexcept;

 private:
  struct Block {
    u32* ptr;
    std::size_t words;
  };
  std::shared_ptr<Allocator> upstream_;
  std::mutex mu_;
  bool open_ = true;
  std::vector<Block> owned_;  // made during the capture (free or not), plus adopted blocks
  std::unordered_map<const u32*, std::size_t> captured_;  // the capture's own blocks -> words
  std::multimap<std::size_t, u32*> free_;                 // words -> free block of the capture
  ForkState* fork_ = nullptr;
  std::multimap<std::size_t, u32*> lane_free_[2];  // freed by the lane that made them (in a fork)
  std::multimap<std::size_t, u32*> held_;          // freed in a fork, reusable after join()

  // Best fit from `list`, at most twice the request; null if none.
  static u32* take(std::multimap<std::size_t, u32*>& list, std::size_t words);
};

}  // namespace theo
