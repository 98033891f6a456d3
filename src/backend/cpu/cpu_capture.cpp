// Capture on the CPU backend: the same semantics as a CUDA Graph (nothing runs while capturing,
// every replay runs the ops in capture order on the operands' current contents), so programs that
// capture can be tested without a GPU. Each data op, its arguments checked by the public op, leaves
// a call that repeats it while capturing (CpuBackend::deferred); a replay makes those calls.

#include <optional>
#include <string>

#include "backend/cpu/cpu_backend.h"

namespace theo::cpu {

namespace {

class CpuCapturedWork final : public CapturedWork {
 public:
  CpuCapturedWork(const CpuBackend& be, std::vector<std::function<void()>> calls,
                  std::shared_ptr<CaptureArena> arena)
      : be_(be), calls_(std::move(calls)), arena_(std::move(arena)) {}

  void replay() override {
    if (be_.capturing())
      throw BackendError(
          "replay of captured work is not allowed while capturing (capture the whole sequence "
          "instead)");
    // The calls run on this thread: another thread's replay of the same sequence would write the
    // same scratch at the same time.
    std::optional<CaptureWorkspace::Replay> one_at_a_time;
    if (arena_->shared()) one_at_a_time.emplace(*arena_->shared());
    for (const auto& call : calls_)
      call();
  }
  std::size_t kernel_count() const override { return calls_.size(); }
  std::size_t node_count() const override { return calls_.size(); }

 private:
  const CpuBackend& be_;
  std::vector<std::function<void()>> calls_;
  std::shared_ptr<CaptureArena> arena_;  // the temporaries and outputs the calls write
};

}  // namespace

std::shared_ptr<Allocator> CpuBackend::allocator() {
  if (capture_) return capture_->arena;
  return alloc_;
}

std::shared_ptr<CaptureWorkspace> CpuBackend::make_capture_workspace() {
  return std::make_shared<CaptureWorkspace>(alloc_);
}

void CpuBackend::do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) {
  auto c = std::make_unique<Capture>();
  c->arena = std::make_shared<CaptureArena>(alloc_, std::move(workspace));
  alloc_->set_capture(c->arena.get());
  capture_ = std::move(c);
}

std::unique_ptr<CapturedWork> CpuBackend::do_end_capture() {
  std::unique_ptr<Capture> c = std::move(capture_);
  alloc_->set_capture(nullptr);
  c->arena->close();
  return std::make_unique<CpuCapturedWork>(*this, std::move(c->calls), std::move(c->arena));
}

void CpuBackend::abort_capture() noexcept {
  if (!capture_) return;
  alloc_->set_capture(nullptr);
  capture_->arena->close();
  capture_.reset();
}

}  // namespace theo::cpu
