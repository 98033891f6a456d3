#pragma once
// CudaBackend, the CUDA implementation of theo::Backend, shared by the files that implement it,
// one op family each (the way backend/cpu/ is split):
//   cuda_backend.cpp      construction, memory transfers, reports, finding a GPU
//   cuda_tables.cpp       the ring's device tables (moduli, NTT twiddles)
//   cuda_tuning.cpp       the kernel tunables and their clamping to the device
//   cuda_streams.cpp      second stream (fork / join) and capture into CUDA Graphs
//   cuda_ntt.cpp          ntt, intt, ntt_sub_mul_scalar
//   cuda_bconv.cpp        BConv plans and conversions
//   cuda_elementwise.cpp  element-wise ops, tensor, mul_scalar_sum, mul_monomial
//   cuda_keymult.cpp      KeyMult and its fused forms
//   cuda_automorphism.cpp automorphism, automorphism_sum
//   cuda_sampler.cpp      sample_uniform
// (event_timer.cpp times work on a backend's stream for the benchmarks.)
// The public ops checked the arguments (src/ring/backend_ops.cpp); the do_ implementations add
// only this backend's own checks (16-byte alignment, plans made by this backend) and launch
// kernels (kernels.h) on the calling thread's lane. All data stays on the device.

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_tables.h"
#include "backend/cuda/device.h"
#include "backend/cuda/graph.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pinned_host.h"
#include "backend/fork_state.h"
#include "theo/ring/backend.h"

namespace theo::cuda {

inline bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const RingParams& ring, const Tuning& tuning);
  ~CudaBackend() override;

  BackendKind kind() const override { return BackendKind::kCuda; }
  std::string name() const override { return "cuda (" + dev_->props().name + ")"; }
  // The stream ops are issued on: the branch stream between fork() and end_fork(), else the
  // device's stream (main_stream(), which timers and graph launches use).
  cudaStream_t stream() const { return dev_->lane_stream(); }
  cudaStream_t main_stream() const { return dev_->stream(); }
  void set_tuning(const Tuning& t);  // cuda_tuning.cpp

  std::shared_ptr<Allocator> allocator() override;
  std::shared_ptr<Allocator> host_staging_allocator() override { return staging_; }
  std::size_t l2_bytes() const override { return dev_->props().l2_bytes; }
  void set_bconv_refined(bool on) override { bconv_refined_ = on; }
  MemoryReport memory_report() const override;
  void profiler_range(bool on) override;

  // cuda_streams.cpp
  void fork() override;
  void end_fork() override;
  void join() override;
  bool forked() const override;
  void abort_capture() noexcept override;
  bool capturing() const override;
  std::shared_ptr<CaptureWorkspace> make_capture_workspace() override;

 protected:
  // cuda_backend.cpp
  void do_upload(const u32* host, PolyRef dst) override;
  void do_download(ConstPolyRef src, u32* host) override;
  void do_copy(ConstPolyRef src, PolyRef dst) override;
  void do_fill_zero(PolyRef dst) override;
  void do_synchronize() override;

  // cuda_streams.cpp
  void do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) override;
  std::unique_ptr<CapturedWork> do_end_capture() override;

  // cuda_ntt.cpp
  void do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
              std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override;
  void do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
               std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override;
  void do_ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                             std::span<const ConstPolyRef> a, u32 first,
                             std::span<const u32> s) override;

  // cuda_bconv.cpp
  std::shared_ptr<const BConvPlan> do_make_bconv(const Basis& src, const Basis& dst,
                                                 bool exact) override;
  void do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override;
  void do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override;
  void do_bconv_matmul_batch(std::span<const BConvJob> jobs) override;

  // cuda_elementwise.cpp
  void do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override;
  void do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override;
  void do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_neg(ConstPolyRef a, PolyRef out) override;
  void do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) override;
  void do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override;
  void do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override;
  void do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                         PolyRef out) override;
  void do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                         PolyRef out) override;
  void do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                 PolyRef d1, PolyRef d2) override;
  void do_tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                        PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s) override;
  void do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                         PolyRef out) override;
  void do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) override;

  // cuda_keymult.cpp
  void do_key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                   std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) override;
  void do_key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                              std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                              PolyRef out0, PolyRef out1, ConstPolyRef a0, ConstPolyRef a1,
                              std::span<const u32> s) override;
  void do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                               std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                               PolyRef out0, PolyRef out1, ConstPolyRef add0) override;
  void do_key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                        std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                        std::span<const PolyRef> out1) override;
  void do_key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                             std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                             std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                             ConstPolyRef add0) override;

  // cuda_automorphism.cpp
  void do_automorphism(ConstPolyRef in, u32 k, PolyRef out) override;
  void do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks, PolyRef out,
                           bool accumulate) override;

  // cuda_sampler.cpp
  void do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                         PolyRef out) override;

 private:
  // Clamps tuning_ to the device (shared-memory size, thread counts, compute capability) and
  // applies its process-wide part (cuda_tuning.cpp).
  void clamp_tuning();

  // Per-limb constants c_i in Montgomery form, optionally times N^-1 (cuda_elementwise.cpp).
  LimbConsts mont_consts(const Basis& basis, std::span<const u32> s, bool with_n_inv) const;
  // One element-wise launch over `basis` (cuda_elementwise.cpp).
  void ew(EwOp op, const EwArgs& args, const Basis& basis, const LimbConsts* c);
  // add / sub and their batches (cuda_elementwise.cpp).
  void add_sub_batch(bool subtract, std::span<const ConstPolyRef> a,
                     std::span<const ConstPolyRef> b, std::span<const PolyRef> out);
  // The kernel's per-limb constant: s_i 2^64 mod q_i (2^64 mod q_i without a scale).
  void run_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                  PolyRef d1, PolyRef d2, std::span<const u32> s);

  // ntt_sub_mul_scalar's tail (empty a: none).
  struct Epilogue {
    std::span<const ConstPolyRef> a;
    u32 first = 0;
    std::span<const u32> s;
  };
  // Every transform (cuda_ntt.cpp); `op` names the public op in the alignment errors.
  void transform(std::string_view op, std::span<const PolyRef> polys, std::span<const u32> consts,
                 std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy,
                 bool inverse, const Epilogue& epi);

  // One conversion by a plan of this backend (cuda_bconv.cpp).
  void run_bconv(std::string_view op, const BConvPlan& plan, ConstPolyRef in, PolyRef out,
                 bool const_mult);

  // KeyMult launches over any number of digits (cuda_keymult.cpp).
  void run_key_mult(std::span<const ConstPolyRef> digits, u32 galois,
                    std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                    PolyRef out0, PolyRef out1, const u32* add0 = nullptr,
                    const ScaledAdds* scaled = nullptr);

  std::shared_ptr<Device> dev_;
  std::shared_ptr<DeviceAllocator> alloc_;
  std::shared_ptr<PinnedHostAllocator> staging_;
  std::unique_ptr<StreamCapture> capture_;
  ForkState& fork_;            // dev_'s: the allocator follows the lanes too
  bool bconv_refined_ = true;  // Optimizations::bconv_refined (make_bconv)
  cudaEvent_t fork_event_ = nullptr, join_event_ = nullptr;
  Tuning tuning_;
  DeviceTables tables_;
};

// `be` as a CUDA backend; ParameterError when it is another backend.
CudaBackend& as_cuda(Backend& be);

}  // namespace theo::cuda
