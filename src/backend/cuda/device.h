#pragma once
// The device state one CUDA backend owns: the device, its properties (read at run time), one
// stream, and a stream-ordered memory pool. Shared (shared_ptr) by the backend and its allocator,
// so polynomials may outlive the backend object that made them.

#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/fork_state.h"
#include "theo/ring/poly.h"

namespace theo {
class CaptureArena;  // backend/capture_arena.h
}

namespace theo::cuda {

struct DeviceProps {
  int device = 0;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t smem_per_block = 0;        // default (non opt-in) limit
  std::size_t smem_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t l2_bytes = 0;
  std::size_t global_mem = 0;
};

class Device {
 public:
  // Binds the current device; creates the stream and the pool.
  Device();
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceProps& props() const { return props_; }
  cudaStream_t stream() const { return stream_; }
  // The second stream of Backend::fork, and the fork protocol's state: allocations follow the
  // calling thread's lane (fork_state.h).
  cudaStream_t branch_stream() const { return branch_stream_; }
  ForkState& fork_state() { return fork_; }
  const ForkState& fork_state() const { return fork_; }
  // The stream the calling thread's ops go to now: the branch between fork() and end_fork().
  cudaStream_t lane_stream() const {
    return fork_.lane() == ForkState::Lane::kBranch ? branch_stream_ : stream_;
  }
  // After the join edge (main stream waits for the branch): frees the blocks held since fork().
  void release_held() noexcept;
  cudaMemPool_t pool() const { return pool_; }  // memory reports (Backend::memory_report)

  // Stream-ordered: the memory is usable by work issued on lane_stream() after this call.
  void* allocate_bytes(std::size_t bytes);
  void free_bytes(void* p) noexcept;
  // Throws BackendError while capturing (a capturing stream cannot be waited for).
  void synchronize();

  // While a stream capture (graph.h) is open on stream(): allocate_bytes takes the memory from the
  // pool on a side stream and waits for it, so that it is ready for the captured work and no
  // allocation node enters the graph; free_bytes hands the block to the capture's arena instead
  // of freeing it, since captured work may still read it.
  void set_capture(CaptureArena* arena) noexcept { capture_.store(arena); }
  bool capturing() const { return capture_.load() != nullptr; }

 private:
  DeviceProps props_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_stream_ = nullptr;    // allocations while capturing
  cudaStream_t branch_stream_ = nullptr;  // Backend::fork's second stream
  cudaMemPool_t pool_ = nullptr;
  ForkState fork_;
  std::mutex held_mu_;
  std::vector<void*> held_;  // freed inside a fork, returned at its join (release_held)
  std::atomic<CaptureArena*> capture_{nullptr};
};

// Allocator over Device's pool. No cudaMalloc/cudaFree after warm-up: the pool keeps freed memory
// (release threshold = unlimited). While capturing, the backend hands out a CaptureArena over this
// allocator instead.
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {}
  u32* allocate(std::size_t words) override;
  void deallocate(u32* ptr, std::size_t words) noexcept override;
  bool host_accessible() const override { return false; }
  const std::shared_ptr<Device>& device() const { return dev_; }

 private:
  std::shared_ptr<Device> dev_;
};

// A typed device array from the pool (tables, small argument arrays). Freed stream-ordered.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(std::shared_ptr<Device> dev, std::size_t count)
      : dev_(std::move(dev)), count_(count) {
    if (count_ > 0) ptr_ = static_cast<T*>(dev_->allocate_bytes(count_ * sizeof(T)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { swap(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    DeviceArray t(std::move(o));
    swap(t);
    return *this;
  }
  ~DeviceArray() {
    if (ptr_) dev_->free_bytes(ptr_);
  }
  void swap(DeviceArray& o) noexcept {
    std::swap(dev_, o.dev_);
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  // Blocking upload of count_ elements (used once, for tables).
  void upload(const T* host);

 private:
  std::shared_ptr<Device> dev_;
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

void upload_bytes(Device& dev, void* dst, const void* src, std::size_t bytes);

template <typename T>
void DeviceArray<T>::upload(const T* host) {
  if (count_ > 0) upload_bytes(*dev_, ptr_, host, count_ * sizeof(T));
}

// A device copy of `host` (blocking: tables made once).
template <typename T>
DeviceArray<T> uploaded(const std::shared_ptr<Device>& dev, const std::vector<T>& host) {
  DeviceArray<T> a(dev, host.size());
  a.upload(host.data());
  return a;
}

}  // namespace theo::cuda
