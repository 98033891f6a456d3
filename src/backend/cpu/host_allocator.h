#pragma once
// Host heap memory for the CPU backend, cache-line aligned so limbs start on a line.

#include <atomic>
#include <cstddef>

#include "theo/ring/poly.h"

namespace theo {
class CaptureArena;
}

namespace theo::cpu {

class HostAllocator final : public Allocator {
 public:
  static constexpr std::size_t kAlignment = 64;
  u32* allocate(std::size_t words) override;
  void deallocate(u32* ptr, std::size_t words) noexcept override;
  bool host_accessible() const override { return true; }

  // While set, deallocate() hands blocks to this capture's arena instead of freeing them: they
  // were made before the capture, and its recorded calls still read them.
  void set_capture(CaptureArena* arena) noexcept { capture_.store(arena); }

  // Bytes allocated and not yet freed, and the most there have been.
  std::size_t live_bytes() const { return live_.load(std::memory_order_relaxed); }
  std::size_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }

 private:
  std::atomic<CaptureArena*> capture_{nullptr};
  std::atomic<std::size_t> live_{0}, peak_{0};
};

}  // namespace theo::cpu
