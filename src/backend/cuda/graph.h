#pragma once
// Stream capture into CUDA Graphs for the CUDA backend (Backend::begin_capture / end_capture).
// Every op of the backend is a kernel launch, memcpy or memset on the device's stream with its
// arguments passed by value, so capturing the stream records the whole sequence; a replay is one
// cudaGraphLaunch instead of one launch per kernel.

#include <cuda_runtime.h>

#include <memory>

#include "backend/capture_arena.h"
#include "backend/cuda/device.h"
#include "theo/ring/backend.h"

namespace theo::cuda {

// An open capture of dev's stream (relaxed mode, so that the arena may allocate meanwhile).
// Destroying it before finish() aborts the capture.
class StreamCapture {
 public:
  // Waits for the stream's earlier work (so that nothing of it is mistaken for captured work and
  // the pool's earlier frees are complete), opens an arena over `upstream` (sharing scratch with
  // `workspace`'s other captures when not null) and begins the capture.
  StreamCapture(std::shared_ptr<Device> dev, std::shared_ptr<Allocator> upstream,
                std::shared_ptr<CaptureWorkspace> workspace);
  ~StreamCapture();
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;

  // The allocator of polys made during the capture.
  const std::shared_ptr<CaptureArena>& arena() const { return arena_; }
  // Ends the capture and instantiates the graph (uploaded to the device, ready to launch).
  std::unique_ptr<CapturedWork> finish();

 private:
  void close() noexcept;

  std::shared_ptr<Device> dev_;
  std::shared_ptr<CaptureArena> arena_;
  bool open_ = false;
};

}  // namespace theo::cuda
