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
//  * With a CaptureWorkspace (a sequence of captures whose replays are serialized, the contract
//    in theo/ring/stream_control.h): the blocks still free when the capture ends (its scratch: no
//    replay of it reads them before writing them) go to the workspace, and a later capture of the
//    sequence takes them when its own free lists have none. Reusing them is safe for the same
//    reason as within one capture: every replay of the earlier graph has ended before the later
//    graph starts. The workspace owns every block of the sequence's arenas (outputs and adopted
//    blocks included, never handed on) until it and all of them are gone, so a graph of the
//    sequence may read another's output even after that graph is destroyed.

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backend/fork_state.h"
#include "theo/ring/poly.h"

namespace theo {

// The memory a sequence of captures shares: every block of its arenas, and the free ones among
// them (scratch of ended captures). Thread-safe.
class CaptureWorkspace {
 public:
  explicit CaptureWorkspace(std::shared_ptr<Allocator> upstream);
  // Returns every block to upstream (after the last graph of the sequence: the arenas hold it).
  ~CaptureWorkspace();
  CaptureWorkspace(const CaptureWorkspace&) = delete;
  CaptureWorkspace& operator=(const CaptureWorkspace&) = delete;

  const std::shared_ptr<Allocator>& upstream() const { return upstream_; }
  // Keeps an upstream block until the workspace dies. Throws only for host bookkeeping memory.
  void own(u32* ptr, std::size_t words);
  // A free block of at least `words` words (best fit, at most twice): {null, 0} if none.
  std::pair<u32*, std::size_t> take(std::size_t words);
  // A block of the workspace that no replay reads before writing (scratch of an ended capture).
  void give(u32* ptr, std::size_t words) noexcept;
  // Bytes of all the blocks it owns, and of the free ones.
  std::size_t bytes() const;
  std::size_t free_bytes() const;

  // Held by a replay that runs on the calling thread (the CPU backend): BackendError if another
  // replay of the sequence is running, since both would write the same scratch.
  class Replay {
   public:
    explicit Replay(CaptureWorkspace& ws);
    ~Replay() { ws_.replaying_.store(false); }
    Replay(const Replay&) = delete;
    Replay& operator=(const Replay&) = delete;

   private:
    CaptureWorkspace& ws_;
  };

 private:
  std::shared_ptr<Allocator> upstream_;
  mutable std::mutex mu_;
  std::vector<std::pair<u32*, std::size_t>> owned_;
  std::multimap<std::size_t, u32*> free_;  // words -> free block
  std::size_t owned_words_ = 0, free_words_ = 0;
  std::atomic<bool> replaying_{false};
};

class CaptureArena final : public Allocator {
 public:
  // `shared` (may be null): the workspace of the capture's sequence, made over `upstream`
  // (BackendError otherwise).
  explicit CaptureArena(std::shared_ptr<Allocator> upstream,
                        std::shared_ptr<CaptureWorkspace> shared = nullptr);
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
  // The sequence's workspace (null: the capture shares nothing).
  const std::shared_ptr<CaptureWorkspace>& shared() const { return shared_; }

 private:
  struct Block {
    u32* ptr;
    std::size_t words;
  };
  std::shared_ptr<Allocator> upstream_;
  std::shared_ptr<CaptureWorkspace> shared_;
  std::mutex mu_;
  bool open_ = true;
  // Made during the capture (free or not), plus adopted blocks; empty with a workspace, which
  // owns them instead.
  std::vector<Block> owned_;
  std::unordered_map<const u32*, std::size_t> captured_;  // the capture's own blocks -> words
  std::multimap<std::size_t, u32*> free_;                 // words -> free block of the capture
  ForkState* fork_ = nullptr;
  std::multimap<std::size_t, u32*> lane_free_[2];  // freed by the lane that made them (in a fork)
  std::multimap<std::size_t, u32*> held_;          // freed in a fork, reusable after join()

  // Keeps a block until the arena (or, with one, the workspace) dies.
  void keep(u32* ptr, std::size_t words);
};

}  // namespace theo
