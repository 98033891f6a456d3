// The CUDA backend's tunables: a backend made with a Tuning, clamped to the device it runs on,
// and retuned by benchmark sweeps.

#include <algorithm>
#include <atomic>

#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

namespace {
std::atomic<bool> g_programmatic_launch{false};
}  // namespace

bool programmatic_launch() {
  return g_programmatic_launch.load(std::memory_order_relaxed);
}
void set_programmatic_launch(bool on) {
  g_programmatic_launch.store(on, std::memory_order_relaxed);
}

std::unique_ptr<Backend> make_backend(const RingParams& ring, const Tuning& tuning) {
  return std::make_unique<CudaBackend>(ring, tuning);
}

void set_tuning(Backend& be, const Tuning& tuning) {
  as_cuda(be).set_tuning(tuning);
}

void CudaBackend::set_tuning(const Tuning& t) {
  tuning_ = t;
  clamp_tuning();
}

void CudaBackend::clamp_tuning() {
  const std::size_t max_words = dev_->props().smem_per_block / sizeof(u32);
  u32 max_log = 0;
  while ((std::size_t{2} << max_log) <= max_words)
    ++max_log;
  tuning_.ntt.tile_log = std::min(tuning_.ntt.tile_log, max_log);
  tuning_.ntt.threads = std::clamp(tuning_.ntt.threads, 32u, 1024u);
  tuning_.elementwise_threads = std::clamp(tuning_.elementwise_threads, 32u, 1024u);
  if (dev_->props().cc_major < 9) tuning_.programmatic_launch = 0;
  set_programmatic_launch(tuning_.programmatic_launch != 0);
}

}  // namespace theo::cuda
