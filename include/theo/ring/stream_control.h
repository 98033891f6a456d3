#pragma once
// StreamControl: how the ops a backend issues are ordered and recorded, apart from what they
// compute. Every Backend implements it (theo/ring/backend.h); the ring ops neither call it nor
// depend on it, so a backend's arithmetic can be read and tested without its streams.
//
// Contract:
//  * Ops run in issue order on one stream, except inside a fork (below).
//  * Capture: between begin_capture() and end_capture() ops are recorded instead of run (a CUDA
//    Graph on the GPU, a list of recorded calls on the CPU) and the backend's allocator hands out
//    memory of the capture (kept while the CapturedWork or any poly made from it lives). Host
//    work (upload, download, synchronize, make_bconv) throws BackendError while capturing; the
//    capture then stays open: end it with abort_capture(). One capture at a time, and no other
//    thread may use the backend meanwhile.
//  * Shared scratch: captures begun with one CaptureWorkspace (make_capture_workspace()) form a
//    sequence whose replays the caller serializes (the CUDA backend replays every graph on its one
//    stream; the CPU backend refuses two replays of a sequence at once). A block a capture makes
//    and frees (scratch) then returns to the workspace when that capture ends, and later captures
//    of the sequence take it before asking the allocator: the sequence holds the largest scratch
//    of its captures instead of their sum. Blocks still held when a capture ends (its outputs) and
//    blocks made before it are never handed on. Every block of a sequence's captures stays until
//    the workspace and all of the sequence's captured work are gone.
//  * Second stream (complementary pipelining, Theodosian §IV-B):
//      fork();      // the ops issued next (the branch) start after every op issued before fork()
//      ...          // branch: on a second stream
//      end_fork();  // the ops issued next go to the first stream, concurrently with the branch
//      ...          // independent of the branch: nothing one writes may be touched by the other
//      join();      // the ops issued next start after the branch's ops
//    join() may follow fork() directly (no concurrent part). Captured work keeps the branch as
//    parallel graph nodes with these dependency edges. Either part may make and drop
//    temporaries: a block made and dropped by the same part is reused by that part only, and any
//    other block dropped between fork() and join() is kept until join(), since the other part may
//    still use it. Upload, download and begin_capture / end_capture throw BackendError between
//    fork() and join(); synchronize() waits for both streams. A backend with one stream (the CPU)
//    runs everything in issue order, which is one of the orders the fork allows, so results are
//    the same words. BackendError on fork() while a fork is open, end_fork() outside a branch, or
//    join() without a fork. Forks do not nest: code that may run inside one checks forked().

#include <cstddef>
#include <memory>
#include <string_view>

namespace theo {

// Scratch memory shared by a sequence of captures (contract above; backend/capture_arena.h).
// Opaque outside the backends.
class CaptureWorkspace;

// The ops a backend recorded between begin_capture() and end_capture(), replayable on that
// backend. Captured work refers to its operands by address: the polys, plans and keys it read
// must outlive it; every replay reads their current contents and rewrites the polys it wrote.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  // Issues the recorded ops again, in capture order, like any op (asynchronous on the GPU).
  // Throws BackendError while the backend is capturing.
  virtual void replay() = 0;
  // Kernel launches of one replay (CUDA: kernel nodes of the graph; CPU: recorded ops).
  virtual std::size_t kernel_count() const = 0;
  // All nodes of one replay (CUDA: kernels plus memcpy / memset nodes; CPU: recorded ops).
  virtual std::size_t node_count() const = 0;
  // Kernel-to-kernel edges that let the later kernel launch before the earlier one ends
  // (CUDA: programmatic dependent launch; 0 where the backend has none).
  virtual std::size_t programmatic_edge_count() const { return 0; }
};

class StreamControl {
 public:
  virtual ~StreamControl() = default;

  // ---- capture --------------------------------------------------------------------------------
  // BackendError when already capturing (begin) or not capturing (end), or inside a fork.
  // With a workspace, the capture shares scratch with the other captures begun with it
  // (BackendError if it was made by another backend).
  void begin_capture(std::shared_ptr<CaptureWorkspace> workspace = nullptr);
  std::unique_ptr<CapturedWork> end_capture();
  // A new, empty workspace over this backend's memory; null where captures hold no memory (the
  // backend then ignores the workspace argument).
  virtual std::shared_ptr<CaptureWorkspace> make_capture_workspace() { return nullptr; }
  // Drops an open capture (nothing recorded runs); no-op when not capturing.
  virtual void abort_capture() noexcept = 0;
  virtual bool capturing() const = 0;

  // ---- second stream --------------------------------------------------------------------------
  virtual void fork() = 0;
  virtual void end_fork() = 0;
  virtual void join() = 0;
  // Whether the calling thread has a fork open (between its fork() and join()).
  virtual bool forked() const = 0;

 protected:
  // Called after begin_capture() / end_capture() checked the protocol.
  virtual void do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) = 0;
  virtual std::unique_ptr<CapturedWork> do_end_capture() = 0;
  // BackendError naming `op` when it is called while capturing (it needs the host at capture
  // time) or between this thread's fork() and join() (host work waits for neither lane).
  void refuse_while_capturing(std::string_view op) const;
  void refuse_while_forked(std::string_view op) const;
};

}  // namespace theo
