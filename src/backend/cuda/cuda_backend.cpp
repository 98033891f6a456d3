// CudaBackend's construction and memory: the device, its allocator and tables, host <-> device
// transfers, memory reports, and the functions that find a GPU or reach a backend's stream.

#include <cuda_profiler_api.h>

#include <cstdint>
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend_impl.h"

namespace theo {
namespace cuda {

CudaBackend::CudaBackend(const RingParams& ring, const Tuning& tuning)
    : Backend(ring),
      dev_(std::make_shared<Device>()),
      fork_(dev_->fork_state()),
      tuning_(tuning),
      tables_(ring_, moduli_, dev_) {
  alloc_ = std::make_shared<DeviceAllocator>(dev_);
  staging_ = std::make_shared<PinnedHostAllocator>();
  clamp_tuning();
  THEO_CUDA_CHECK(cudaEventCreateWithFlags(&fork_event_, cudaEventDisableTiming));
  THEO_CUDA_CHECK(cudaEventCreateWithFlags(&join_event_, cudaEventDisableTiming));
}

CudaBackend::~CudaBackend() {
  abort_capture();
  // Tables are freed stream-ordered; make sure no kernel still reads them.
  cudaStreamSynchronize(dev_->branch_stream());
  cudaStreamSynchronize(dev_->stream());
  cudaEventDestroy(join_event_);
  cudaEventDestroy(fork_event_);
}

std::shared_ptr<Allocator> CudaBackend::allocator() {
  if (capture_) return capture_->arena();
  return alloc_;
}

void CudaBackend::do_upload(const u32* host, PolyRef dst) {
  if (dst.words() == 0) return;
  THEO_CUDA_CHECK(
      cudaMemcpyAsync(dst.data, host, dst.words() * sizeof(u32), cudaMemcpyHostToDevice, stream()));
  dev_->synchronize();
}

void CudaBackend::do_download(ConstPolyRef src, u32* host) {
  if (src.words() == 0) return;
  THEO_CUDA_CHECK(
      cudaMemcpyAsync(host, src.data, src.words() * sizeof(u32), cudaMemcpyDeviceToHost, stream()));
  dev_->synchronize();
}

void CudaBackend::do_copy(ConstPolyRef src, PolyRef dst) {
  if (src.words() == 0 || src.data == dst.data) return;
  THEO_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.words() * sizeof(u32),
                                  cudaMemcpyDeviceToDevice, stream()));
}

void CudaBackend::do_fill_zero(PolyRef dst) {
  if (dst.words() == 0) return;
  THEO_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.words() * sizeof(u32), stream()));
}

void CudaBackend::do_synchronize() {
  if (fork_.open()) THEO_CUDA_CHECK(cudaStreamSynchronize(dev_->branch_stream()));
  dev_->synchronize();
}

MemoryReport CudaBackend::memory_report() const {
  MemoryReport r;
  std::uint64_t v = 0;
  THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrUsedMemCurrent, &v));
  r.live_bytes = v;
  THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrUsedMemHigh, &v));
  r.peak_bytes = v;
  THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrReservedMemCurrent, &v));
  r.reserved_bytes = v;
  THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrReservedMemHigh, &v));
  r.reserved_peak_bytes = v;
  std::size_t free_bytes = 0, total_bytes = 0;
  THEO_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  r.device_used = total_bytes - free_bytes;
  r.device_total = total_bytes;
  return r;
}

void CudaBackend::profiler_range(bool on) {
  THEO_CUDA_CHECK(cudaStreamSynchronize(stream()));
  THEO_CUDA_CHECK(on ? cudaProfilerStart() : cudaProfilerStop());
}

CudaBackend& as_cuda(Backend& be) {
  auto* p = dynamic_cast<CudaBackend*>(&be);
  if (p == nullptr) throw ParameterError("not a CUDA backend: " + be.name());
  return *p;
}

cudaStream_t stream_of(Backend& be) {
  return as_cuda(be).main_stream();
}

bool device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

}  // namespace cuda

}  // namespace theo
