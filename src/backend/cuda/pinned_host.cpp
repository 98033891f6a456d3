// Page-locked staging memory (backend/cuda/pinned_host.h).

#include "backend/cuda/pinned_host.h"

#include <cuda_runtime.h>

#include <new>
#include <string>

#include "theo/errors.h"

namespace theo::cuda {

namespace {
constexpr std::align_val_t kFallbackAlignment{64};
}

PinnedHostAllocator::~PinnedHostAllocator() {
  for (auto& [words, blocks] : free_)
    for (u32* p : blocks)
      cudaFreeHost(p);
}

u32* PinnedHostAllocator::allocate(std::size_t words) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(words);
    if (it != free_.end() && !it->second.empty()) {
      u32* p = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= words * sizeof(u32);
      return p;
    }
  }
  void* p = nullptr;
  if (cudaHostAlloc(&p, words * sizeof(u32), cudaHostAllocPortable) == cudaSuccess) {
    return static_cast<u32*>(p);
  }
  (void)cudaGetLastError();  // the refusal is handled here: ordinary memory instead
  p = ::operator new(words * sizeof(u32), kFallbackAlignment, std::nothrow);
  if (p == nullptr) {
    throw OutOfMemoryError("host staging memory: " + std::to_string(words * sizeof(u32)) +
                           " bytes could not be allocated");
  }
  std::lock_guard<std::mutex> lock(mu_);
  unpinned_.insert(static_cast<u32*>(p));
  return static_cast<u32*>(p);
}

void PinnedHostAllocator::deallocate(u32* ptr, std::size_t words) noexcept {
  if (ptr == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (unpinned_.erase(ptr) != 0) {
      ::operator delete(ptr, kFallbackAlignment);
      return;
    }
    const std::size_t bytes = words * sizeof(u32);
    if (cached_bytes_ + bytes <= kCacheBytes) {
      free_[words].push_back(ptr);
      cached_bytes_ += bytes;
      return;
    }
  }
  cudaFreeHost(ptr);
}

}  // namespace theo::cuda
