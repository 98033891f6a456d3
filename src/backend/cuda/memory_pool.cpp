#include <cstdint>
#include <cstdio>
#include <limits>

#include "backend/capture_arena.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device.h"
#include "theo/errors.h"

namespace theo::cuda {

Device::Device() {
  THEO_CUDA_CHECK(cudaGetDevice(&props_.device));
  cudaDeviceProp p{};
  THEO_CUDA_CHECK(cudaGetDeviceProperties(&p, props_.device));
  props_.name = p.name;
  props_.sm_count = p.multiProcessorCount;
  props_.cc_major = p.major;
  props_.cc_minor = p.minor;
  props_.smem_per_block = p.sharedMemPerBlock;
  props_.smem_per_block_optin = p.sharedMemPerBlockOptin;
  props_.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  props_.global_mem = p.totalGlobalMem;

  THEO_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  THEO_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
  THEO_CUDA_CHECK(cudaStreamCreateWithFlags(&branch_stream_, cudaStreamNonBlocking));

  cudaMemPoolProps pp{};
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypeNone;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = props_.device;
  THEO_CUDA_CHECK(cudaMemPoolCreate(&pool_, &pp));
  // Keep freed memory in the pool: returning it to the driver at every synchronization would put
  // cudaMalloc-like costs back into the hot path.
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  THEO_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

Device::~Device() {
  // Destructors must not throw; report and continue.
  if (cudaStreamSynchronize(stream_) != cudaSuccess)
    std::fprintf(stderr, "theo cuda: stream error at shutdown: %s\n",
                 cudaGetErrorString(cudaGetLastError()));
  cudaStreamSynchronize(branch_stream_);
  for (void* p : held_)
    cudaFreeAsync(p, stream_);
  cudaStreamSynchronize(stream_);
  cudaMemPoolDestroy(pool_);
  cudaStreamDestroy(branch_stream_);
  cudaStreamDestroy(side_stream_);
  cudaStreamDestroy(stream_);
}

void* Device::allocate_bytes(std::size_t bytes) {
  // Larger than the card: some drivers report this as an invalid value rather than as OOM.
  if (bytes > props_.global_mem) throw_out_of_memory(bytes, "cuda allocate");
  void* p = nullptr;
  // While capturing, an allocation on stream_ would become a graph node that every replay
  // repeats; the side stream gives memory that exists before the graph does.
  const bool side = capturing();
  const cudaError_t err =
      cudaMallocFromPoolAsync(&p, bytes, pool_, side ? side_stream_ : lane_stream());
  if (err == cudaErrorMemoryAllocation) throw_out_of_memory(bytes, "cuda allocate");
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
  if (side) {
    const cudaError_t sync = cudaStreamSynchronize(side_stream_);
    if (sync != cudaSuccess) {
      cudaFreeAsync(p, side_stream_);
      throw_cuda_error(sync, "cudaStreamSynchronize(side stream)", __FILE__, __LINE__);
    }
  } else {
    try {
      fork_.note_alloc(p);
    } catch (...) {
      cudaFreeAsync(p, lane_stream());
      throw;
    }
  }
  return p;
}

void Device::free_bytes(void* p) noexcept {
  if (CaptureArena* arena = capture_.load()) {
    arena->adopt(static_cast<u32*>(p), 0);
    return;
  }
  cudaStream_t s = stream_;
  switch (fork_.on_free(p)) {
    case ForkState::FreeRule::kNormal:
      break;
    case ForkState::FreeRule::kLane:
      s = lane_stream();
      break;
    case ForkState::FreeRule::kHold:
      try {
        const std::lock_guard<std::mutex> lock(held_mu_);
        held_.push_back(p);
        return;
      } catch (...) {
        // No host memory for the bookkeeping: wait for both streams, then free at once.
        cudaStreamSynchronize(branch_stream_);
        cudaStreamSynchronize(stream_);
      }
      break;
  }
  const cudaError_t err = cudaFreeAsync(p, s);
  if (err != cudaSuccess)
    std::fprintf(stderr, "theo cuda: cudaFreeAsync failed: %s\n", cudaGetErrorString(err));
}

void Device::release_held() noexcept {
  const std::lock_guard<std::mutex> lock(held_mu_);
  for (void* p : held_) {
    const cudaError_t err = cudaFreeAsync(p, stream_);
    if (err != cudaSuccess)
      std::fprintf(stderr, "theo cuda: cudaFreeAsync failed: %s\n", cudaGetErrorString(err));
  }
  held_.clear();
}

void Device::synchronize() {
  if (capturing())
    throw BackendError(
        "synchronize is not allowed while capturing (a capturing stream runs nothing to wait "
        "for)");
  THEO_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void upload_bytes(Device& dev, void* dst, const void* src, std::size_t bytes) {
  if (dev.capturing())
    throw BackendError("upload is not allowed while capturing (it reads the host at capture time)");
  THEO_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, dev.stream()));
  dev.synchronize();
}

u32* DeviceAllocator::allocate(std::size_t words) {
  return static_cast<u32*>(dev_->allocate_bytes(words * sizeof(u32)));
}

void DeviceAllocator::deallocate(u32* ptr, std::size_t) noexcept {
  dev_->free_bytes(ptr);
}

}  // namespace theo::cuda
