// CudaBackend::sample_uniform: the seed expansion of Backend::sample_uniform on the device
// (sampler.cu), so key and ciphertext `a` polynomials never cross the host bus.

#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

void CudaBackend::do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                                    PolyRef out) {
  launch_sample_uniform(seed, stream_id, out.data, n(), out.basis, tables_.mods(), stream());
}

}  // namespace theo::cuda
