#include "backend/cpu/host_allocator.h"

#include <unistd.h>

#include <limits>
#include <new>
#include <string>

#include "backend/capture_arena.h"

namespace theo::cpu {

namespace {

std::string available_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages < 0 || page < 0) return "unknown";
  return std::to_string(static_cast<unsigned long long>(pages) *
                        static_cast<unsigned long long>(page)) +
         " bytes";
}

}  // namespace

u32* HostAllocator::allocate(std::size_t words) {
  if (words > std::numeric_limits<std::size_t>::max() / sizeof(u32))
    throw OutOfMemoryError("cpu allocator: " + std::to_string(words) +
                           " words overflow the address space");
  const std::size_t bytes = words * sizeof(u32);
  void* p = ::operator new (bytes, std::align_val_t{kAlignment}, std::nothrow);
  if (p == nullptr)
    throw OutOfMemoryError("cpu allocator: failed to allocate " + std::to_string(bytes) +
                           " bytes (host memory available: " + available_bytes() + ")");
  const std::size_t live = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::size_t peak = peak_.load(std::memory_order_relaxed);
  while (live > peak && !peak_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  return static_cast<u32*>(p);
}

void HostAllocator::deallocate(u32* ptr, std::size_t words) noexcept {
  if (CaptureArena* arena = capture_.load()) {
    arena->adopt(ptr, words);
    return;
  }
  live_.fetch_sub(words * sizeof(u32), std::memory_order_relaxed);
  ::operator delete (ptr, std::align_val_t{kAlignment});
}

}  // namespace theo::cpu
