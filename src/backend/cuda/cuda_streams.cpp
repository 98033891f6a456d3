// CudaBackend's StreamControl: the second stream of fork / join, and capture of the stream into
// a CUDA Graph (graph.h). Neither touches the ring ops: an op only asks stream() for the lane of
// the calling thread.

#include "backend/capture_arena.h"
#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

// The branch stream joins the main one by two events; inside a stream capture these become the
// graph's fork and join edges (the branch stream is captured from the first wait on).
void CudaBackend::fork() {
  fork_.fork();
  try {
    THEO_CUDA_CHECK(cudaEventRecord(fork_event_, dev_->stream()));
    THEO_CUDA_CHECK(cudaStreamWaitEvent(dev_->branch_stream(), fork_event_, 0));
  } catch (...) {
    fork_.join();
    throw;
  }
}

void CudaBackend::end_fork() {
  fork_.end_fork();
}

bool CudaBackend::forked() const {
  return fork_.open();
}

void CudaBackend::join() {
  if (!fork_.open()) fork_.join();  // throws: no fork of this thread is open
  // The edges first: once ForkState lets go, another thread may fork on the same events.
  THEO_CUDA_CHECK(cudaEventRecord(join_event_, dev_->branch_stream()));
  THEO_CUDA_CHECK(cudaStreamWaitEvent(dev_->stream(), join_event_, 0));
  // Blocks freed inside the fork that a lane may still have used: free them after the edge.
  dev_->release_held();
  if (capture_) capture_->arena()->join();
  fork_.join();
}

void CudaBackend::do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) {
  capture_ = std::make_unique<StreamCapture>(dev_, alloc_, std::move(workspace));
}

// Every replay is a launch on the device's one stream (GraphWork::replay), so the graphs of a
// sequence never run at the same time, whichever threads replay them.
std::shared_ptr<CaptureWorkspace> CudaBackend::make_capture_workspace() {
  return std::make_shared<CaptureWorkspace>(alloc_);
}

std::unique_ptr<CapturedWork> CudaBackend::do_end_capture() {
  const std::unique_ptr<StreamCapture> c = std::move(capture_);
  return c->finish();
}

void CudaBackend::abort_capture() noexcept {
  capture_.reset();
}

bool CudaBackend::capturing() const {
  return capture_ != nullptr;
}

}  // namespace theo::cuda
