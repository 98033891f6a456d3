#pragma once
// Page-locked host memory for the CUDA backend's staging (Backend::host_staging_allocator): copies
// between the device and page-locked memory run at the bus's rate without the driver's bounce
// buffers. cudaHostAlloc pins pages (milliseconds for megabytes) and cudaFreeHost synchronizes the
// device, so freed blocks are kept by size and handed out again, up to a bound.

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "theo/ring/poly.h"

namespace theo::cuda {

class PinnedHostAllocator final : public Allocator {
 public:
  // Freed blocks kept for reuse, in bytes; beyond it blocks are freed.
  static constexpr std::size_t kCacheBytes = std::size_t{2} << 30;

  PinnedHostAllocator() = default;
  ~PinnedHostAllocator() override;
  PinnedHostAllocator(const PinnedHostAllocator&) = delete;
  PinnedHostAllocator& operator=(const PinnedHostAllocator&) = delete;

  // Falls back to ordinary memory when the system refuses more page-locked memory.
  u32* allocate(std::size_t words) override;
  void deallocate(u32* ptr, std::size_t words) noexcept override;
  bool host_accessible() const override { return true; }

 private:
  std::mutex mu_;
  std::map<std::size_t, std::vector<u32*>> free_;  // words -> pinned blocks
  std::size_t cached_bytes_ = 0;
  std::unordered_set<u32*> unpinned_;  // fallback blocks (operator new)
};

}  // namespace theo::cuda
