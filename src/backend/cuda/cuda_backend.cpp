// The CUDA implementation of theo::Backend: argument checks (shared with the CPU backend, so both
// reject the same calls), table upload, and kernel dispatch. All data stays on the device.

#include "backend/cuda/cuda_backend.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cuda/bconv_tensor_table.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device.h"
#include "backend/cuda/graph.h"
#include "backend/fork_state.h"
#include "theo/backend/factory.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/ntt_tables.h"
#include "theo/ring/shape_checks.h"

namespace theo {
namespace cuda {
namespace {

// How often the blocked BConv kernel must fold its accumulators (BConvDevice::fold_steps), from
// the actual table: |t_j| <= floor(s_j / 2) and the centered matrix entries bound every 4-term
// step and every row's whole sum. Rows that stay below 2^63 need no fold at all (Theodosian
// §III-C2's table refinement, checked per plan instead of by choosing primes); otherwise a fold
// leaves |acc| < 2^61 + 2^32 and k more steps must keep it below 2^63.
u32 bconv_fold_steps(const std::vector<Modulus>& src_mod, const std::vector<i32>& mat, u32 nd) {
  const u32 ns = static_cast<u32>(src_mod.size());
  constexpr u64 kLimit = (u64{1} << 63) - 1;
  u64 max_row = 0, max_step = 0;
  for (u32 i = 0; i < nd; ++i) {
    u64 row = 0;  // saturates at 2^63: each term is below 2^60, so no u64 overflow
    for (u32 j0 = 0; j0 < ns; j0 += 4) {
      u64 step = 0;
      for (u32 j = j0; j < std::min(ns, j0 + 4); ++j) {
        const i64 m = mat[static_cast<std::size_t>(i) * ns + j];
        step += u64{src_mod[j].q / 2} * static_cast<u64>(m < 0 ? -m : m);
      }
      max_step = std::max(max_step, step);
      row = std::min(row + step, kLimit + 1);
    }
    max_row = std::max(max_row, row);
  }
  if (max_row <= kLimit) return 0;
  const u64 after_fold = (u64{1} << 61) + (u64{1} << 32);
  return static_cast<u32>(std::max<u64>(1, (kLimit - after_fold) / max_step));
}

class CudaBConvPlan final : public BConvPlan {
 public:
  CudaBConvPlan(BConvTable table, const Backend& be, const std::shared_ptr<Device>& dev,
                bool refined)
      : BConvPlan(std::move(table)) {
    const BConvTable& t = this->table();
    const u32 ns = t.src.size, nd = t.dst.size;
    std::vector<Modulus> sm(ns), dm(nd);
    std::vector<u32> hat(ns);
    std::vector<i32> mat(static_cast<std::size_t>(ns) * nd);
    for (u32 j = 0; j < ns; ++j) {
      sm[j] = be.modulus(t.src.ids[j]);
      hat[j] = to_mont(t.src_hat_inv[j], sm[j]);
    }
    for (u32 i = 0; i < nd; ++i) {
      dm[i] = be.modulus(t.dst.ids[i]);
      for (u32 j = 0; j < ns; ++j) {
        const std::size_t e = static_cast<std::size_t>(i) * ns + j;
        mat[e] = center(to_mont(t.matrix[e], dm[i]), dm[i].q);
      }
    }
    src_mod_ = DeviceArray<Modulus>(dev, ns);
    dst_mod_ = DeviceArray<Modulus>(dev, nd);
    hat_ = DeviceArray<u32>(dev, ns);
    mat_ = DeviceArray<i32>(dev, mat.size());
    src_mod_.upload(sm.data());
    dst_mod_.upload(dm.data());
    hat_.upload(hat.data());
    mat_.upload(mat.data());
    dev_args_ = BConvDevice{
        src_mod_.get(), dst_mod_.get(), hat_.get(), mat_.get(), nullptr, nullptr, ns, nd, false};
    // Unrefined: fold after every 4-term step, as before the table analysis.
    dev_args_.fold_steps = refined ? bconv_fold_steps(sm, mat, nd) : 1;
    std::vector<i32> qd;
    if (t.exact) {
      if (t.src_inv.size() != ns || t.q_mod_dst.size() != nd)
        throw ParameterError("make_bconv: exact table without src_inv / q_mod_dst");
      qd.resize(nd);
      for (u32 i = 0; i < nd; ++i)
        qd[i] = center(to_mont(t.q_mod_dst[i], dm[i]), dm[i].q);
      src_inv_ = DeviceArray<double>(dev, ns);
      q_mod_dst_ = DeviceArray<i32>(dev, nd);
      src_inv_.upload(t.src_inv.data());
      q_mod_dst_.upload(qd.data());
      dev_args_.src_inv = src_inv_.get();
      dev_args_.q_mod_dst = q_mod_dst_.get();
      dev_args_.exact = true;
    }
    // The tensor-core kernel's byte-split table is the refined table for small source bases: it
    // bounds every sum below 2^46 with no reduction between terms.
    if (refined && ns <= kBConvTensorMaxSrc) {
      const BConvTensorTable tc = make_bconv_tensor_table(sm, dm, mat, qd);
      if (tc.r0 > 0) {
        tc_frags_ = DeviceArray<u32>(dev, tc.frags.size());
        tc_rows_ = DeviceArray<i32>(dev, tc.rows.size());
        tc_frags_.upload(tc.frags.data());
        tc_rows_.upload(tc.rows.data());
        dev_args_.tc_frags = tc_frags_.get();
        dev_args_.tc_rows = tc_rows_.get();
        dev_args_.tc_r0 = tc.r0;
      }
    }
  }
  const BConvDevice& device_args() const { return dev_args_; }

 private:
  DeviceArray<Modulus> src_mod_, dst_mod_;
  DeviceArray<u32> hat_;
  DeviceArray<i32> mat_;
  DeviceArray<double> src_inv_;
  DeviceArray<i32> q_mod_dst_;
  DeviceArray<u32> tc_frags_;
  DeviceArray<i32> tc_rows_;
  BConvDevice dev_args_;
};

bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const RingParams& ring, const Tuning& tuning)
      : Backend(ring),
        dev_(std::make_shared<Device>()),
        fork_(dev_->fork_state()),
        tuning_(tuning) {
    alloc_ = std::make_shared<DeviceAllocator>(dev_);
    const u32 np = static_cast<u32>(ring_.primes.size());
    const std::size_t nn = n();
    std::vector<i32> fwd(np * nn), inv(np * nn);
    std::vector<uint2> fwd_s(np * nn), inv_s(np * nn);
    std::vector<u32> fwd_wp(np * nn), inv_wp(np * nn);
    // Row factors of the register row kernels' on-the-fly twiddles (kernels.h, ntt.cu), for
    // N = 2^(4e) only: psi^(brev_2e(r) 2^(e - j)) for row r and stage j of the second pass.
    const bool row_factors = ring_.log_n % 4 == 0;
    const u32 e = ring_.log_n / 4, rows = 1u << (2 * e);
    constexpr u32 kRowFactors = RingTables::kRowFactors;
    std::vector<i32> fwd_rowf(row_factors ? std::size_t{np} * rows * kRowFactors : 0),
        inv_rowf(fwd_rowf.size());
    n_inv_mont_.resize(np);
    for (u32 p = 0; p < np; ++p) {
      const NttTable t = make_ntt_table(ring_.primes[p], ring_.log_n);
      const Modulus& m = moduli_[p];
      for (std::size_t i = 0; i < nn; ++i) {
        // The row kernels rebuild w from w' assuming w != 0 (ntt.cu, shoup_pair).
        if (t.fwd[i].w == 0 || t.inv[i].w == 0)
          throw BackendError("CUDA backend: NTT table of prime " + std::to_string(ring_.primes[p]) +
                             " has a zero twiddle");
        fwd[p * nn + i] = center(to_mont(t.fwd[i].w, m), m.q);
        inv[p * nn + i] = center(to_mont(t.inv[i].w, m), m.q);
        fwd_s[p * nn + i] = uint2{t.fwd[i].w, t.fwd[i].w_shoup};
        inv_s[p * nn + i] = uint2{t.inv[i].w, t.inv[i].w_shoup};
        fwd_wp[p * nn + i] = t.fwd[i].w_shoup;
        inv_wp[p * nn + i] = t.inv[i].w_shoup;
      }
      n_inv_mont_[p] = to_mont(t.n_inv.w, m);
      for (u32 r = 0; row_factors && r < rows; ++r) {
        for (u32 j = 0; j < e; ++j) {
          // fwd[brev(x)] = psi^x and inv[brev(x)] = psi^-x.
          const u32 at = bit_reverse(bit_reverse(r, 2 * e) << (e - j), ring_.log_n);
          const std::size_t k = (std::size_t{p} * rows + r) * kRowFactors + j;
          fwd_rowf[k] = center(to_mont(t.fwd[at].w, m), m.q);
          inv_rowf[k] = center(to_mont(t.inv[at].w, m), m.q);
        }
      }
    }
    mods_ = DeviceArray<Modulus>(dev_, np);
    fwd_ = DeviceArray<i32>(dev_, fwd.size());
    inv_ = DeviceArray<i32>(dev_, inv.size());
    mods_.upload(moduli_.data());
    fwd_.upload(fwd.data());
    inv_.upload(inv.data());
    fwd_s_ = DeviceArray<uint2>(dev_, fwd_s.size());
    inv_s_ = DeviceArray<uint2>(dev_, inv_s.size());
    fwd_s_.upload(fwd_s.data());
    inv_s_.upload(inv_s.data());
    fwd_wp_ = DeviceArray<u32>(dev_, fwd_wp.size());
    inv_wp_ = DeviceArray<u32>(dev_, inv_wp.size());
    fwd_wp_.upload(fwd_wp.data());
    inv_wp_.upload(inv_wp.data());
    fwd_rowf_ = DeviceArray<i32>(dev_, fwd_rowf.size());
    inv_rowf_ = DeviceArray<i32>(dev_, inv_rowf.size());
    fwd_rowf_.upload(fwd_rowf.data());
    inv_rowf_.upload(inv_rowf.data());
    tables_ =
        RingTables{mods_.get(),  fwd_.get(),    inv_.get(),    ring_.log_n,     fwd_s_.get(),
                   inv_s_.get(), fwd_wp_.get(), inv_wp_.get(), fwd_rowf_.get(), inv_rowf_.get()};
    clamp_tuning();
    THEO_CUDA_CHECK(cudaEventCreateWithFlags(&fork_event_, cudaEventDisableTiming));
    THEO_CUDA_CHECK(cudaEventCreateWithFlags(&join_event_, cudaEventDisableTiming));
  }

  ~CudaBackend() override {
    abort_capture();
    // Tables are freed stream-ordered; make sure no kernel still reads them.
    cudaStreamSynchronize(dev_->branch_stream());
    cudaStreamSynchronize(dev_->stream());
    cudaEventDestroy(join_event_);
    cudaEventDestroy(fork_event_);
  }

  BackendKind kind() const override { return BackendKind::kCuda; }
  std::string name() const override { return "cuda (" + dev_->props().name + ")"; }
  // The stream ops are issued on: the branch stream between fork() and end_fork(), else the
  // device's stream (main_stream(), which timers and graph launches use).
  cudaStream_t stream() const { return dev_->lane_stream(); }
  cudaStream_t main_stream() const { return dev_->stream(); }
  void set_tuning(const Tuning& t) {
    tuning_ = t;
    clamp_tuning();
  }

  std::shared_ptr<Allocator> allocator() override {
    if (capture_) return capture_->arena();
    return alloc_;
  }

  void upload(const u32* host, PolyRef dst) override {
    refuse_while_capturing("upload");
    fork_.refuse("upload");
    check("upload", "dst", dst);
    if (dst.words() == 0) return;
    THEO_CUDA_CHECK(cudaMemcpyAsync(dst.data, host, dst.words() * sizeof(u32),
                                    cudaMemcpyHostToDevice, stream()));
    dev_->synchronize();
  }
  void download(ConstPolyRef src, u32* host) override {
    refuse_while_capturing("download");
    fork_.refuse("download");
    check("download", "src", src);
    if (src.words() == 0) return;
    THEO_CUDA_CHECK(cudaMemcpyAsync(host, src.data, src.words() * sizeof(u32),
                                    cudaMemcpyDeviceToHost, stream()));
    dev_->synchronize();
  }
  void copy(ConstPolyRef src, PolyRef dst) override {
    check("copy", "src", src);
    checks::same_shape("copy", "src", src, "dst", dst);
    if (src.words() == 0 || src.data == dst.data) return;
    THEO_CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, src.words() * sizeof(u32),
                                    cudaMemcpyDeviceToDevice, stream()));
  }
  void fill_zero(PolyRef dst) override {
    check("fill_zero", "dst", dst);
    if (dst.words() == 0) return;
    THEO_CUDA_CHECK(cudaMemsetAsync(dst.data, 0, dst.words() * sizeof(u32), stream()));
  }
  void synchronize() override {
    refuse_while_capturing("synchronize");
    if (fork_.open()) THEO_CUDA_CHECK(cudaStreamSynchronize(dev_->branch_stream()));
    dev_->synchronize();
  }

  // The branch stream joins the main one by two events; inside a stream capture these become
  // the graph's fork and join edges (the branch stream is captured from the first wait on).
  void fork() override {
    fork_.fork();
    try {
      THEO_CUDA_CHECK(cudaEventRecord(fork_event_, dev_->stream()));
      THEO_CUDA_CHECK(cudaStreamWaitEvent(dev_->branch_stream(), fork_event_, 0));
    } catch (...) {
      fork_.join();
      throw;
    }
  }
  void end_fork() override { fork_.end_fork(); }
  bool forked() const override { return fork_.open(); }
  void join() override {
    if (!fork_.open()) fork_.join();  // throws: no fork of this thread is open
    // The edges first: once ForkState lets go, another thread may fork on the same events.
    THEO_CUDA_CHECK(cudaEventRecord(join_event_, dev_->branch_stream()));
    THEO_CUDA_CHECK(cudaStreamWaitEvent(dev_->stream(), join_event_, 0));
    // Blocks freed inside the fork that a lane may still have used: free them after the edge.
    dev_->release_held();
    if (capture_) capture_->arena()->join();
    fork_.join();
  }
  std::size_t l2_bytes() const override { return dev_->props().l2_bytes; }
  void set_bconv_refined(bool on) override { bconv_refined_ = on; }

  // Stream capture into a CUDA Graph (graph.h).
  void begin_capture() override {
    if (capture_) throw BackendError("begin_capture: the backend is already capturing");
    fork_.refuse("begin_capture");
    capture_ = std::make_unique<StreamCapture>(dev_, alloc_);
  }
  std::unique_ptr<CapturedWork> end_capture() override {
    if (!capture_) throw BackendError("end_capture: the backend is not capturing");
    fork_.refuse("end_capture");
    const std::unique_ptr<StreamCapture> c = std::move(capture_);
    return c->finish();
  }
  void abort_capture() noexcept override { capture_.reset(); }
  bool capturing() const override { return capture_ != nullptr; }

  void ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
           std::span<const ConstPolyRef> src, std::span<const PolyRef> echo) override {
    transform("ntt", "pre_consts", polys, pre_consts, src, echo, false, {});
  }
  void intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
            std::span<const ConstPolyRef> src, std::span<const PolyRef> echo) override {
    transform("intt", "post_consts", polys, post_consts, src, echo, true, {});
  }
  void ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                          std::span<const ConstPolyRef> a, u32 first,
                          std::span<const u32> s) override {
    transform("ntt_sub_mul_scalar", "pre_consts", polys, pre_consts, {}, {}, false,
              Epilogue{a, first, s});
  }

  std::shared_ptr<const BConvPlan> make_bconv(const Basis& src, const Basis& dst,
                                              bool exact = false) override {
    refuse_while_capturing("make_bconv");
    return std::make_shared<CudaBConvPlan>(make_bconv_table(ring_, src, dst, exact), *this, dev_,
                                           bconv_refined_);
  }
  void bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override {
    run_bconv("bconv", plan, in, out, true);
  }
  void bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override {
    run_bconv("bconv_matmul", plan, in, out, false);
  }
  void bconv_matmul_batch(std::span<const BConvJob> jobs) override {
    constexpr std::string_view op = "bconv_matmul_batch";
    std::vector<BConvDevice> bs;
    std::vector<const u32*> ins;
    std::vector<u32*> outs;
    for (const BConvJob& j : jobs) {
      if (j.plan == nullptr) throw ParameterError(std::string(op) + ": a job has no plan");
      bs.push_back(checked_bconv(op, *j.plan, j.in, j.out).device_args());
      ins.push_back(j.in.data);
      outs.push_back(j.out.data);
    }
    checks::bconv_jobs_independent(op, jobs);
    if (bs.empty()) return;
    launch_bconv_matmul_batch(bs, ins, outs, tuning_.bconv, n(), stream());
  }

  void add(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    add_sub_batch("add", false, {&a, 1}, {&b, 1}, {&out, 1});
  }
  void sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    add_sub_batch("sub", true, {&a, 1}, {&b, 1}, {&out, 1});
  }
  void add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                 std::span<const PolyRef> out) override {
    add_sub_batch("add_batch", false, a, b, out);
  }
  void sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                 std::span<const PolyRef> out) override {
    add_sub_batch("sub_batch", true, a, b, out);
  }
  void mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    binary("mul", EwOp::kMul, a, b, out);
  }
  void neg(ConstPolyRef a, PolyRef out) override {
    check("neg", "a", a);
    checks::same_shape("neg", "a", a, "out", out);
    EwArgs args;
    args.in[0] = a.data;
    args.out[0] = out.data;
    ew(EwOp::kNeg, args, a.basis, nullptr);
  }
  void mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) override {
    constexpr std::string_view op = "mul_add";
    check(op, "a", a);
    checks::same_shape(op, "a", a, "b", b);
    checks::same_shape(op, "a", a, "c", c);
    checks::same_shape(op, "a", a, "out", out);
    EwArgs args;
    args.in[0] = a.data;
    args.in[1] = b.data;
    args.in[2] = c.data;
    args.out[0] = out.data;
    ew(EwOp::kMulAdd, args, a.basis, nullptr);
  }
  void mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override {
    constexpr std::string_view op = "mul_scalar";
    check(op, "a", a);
    checks::same_shape(op, "a", a, "out", out);
    checks::limb_consts(op, "s", *this, a, s);
    const LimbConsts c = mont_consts(a.basis, s, false);
    EwArgs args;
    args.in[0] = a.data;
    args.out[0] = out.data;
    ew(EwOp::kMulScalar, args, a.basis, &c);
  }
  void add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override {
    constexpr std::string_view op = "add_scalar";
    check(op, "a", a);
    checks::same_shape(op, "a", a, "out", out);
    checks::limb_consts(op, "s", *this, a, s);
    LimbConsts c{};
    std::copy(s.begin(), s.end(), c.v);
    EwArgs args;
    args.in[0] = a.data;
    args.out[0] = out.data;
    ew(EwOp::kAddScalar, args, a.basis, &c);
  }
  void mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                      PolyRef out) override {
    constexpr std::string_view op = "mul_scalar_add";
    check(op, "a", a);
    checks::same_shape(op, "a", a, "b", b);
    checks::same_shape(op, "a", a, "out", out);
    checks::limb_consts(op, "s", *this, a, s);
    const LimbConsts c = mont_consts(a.basis, s, false);
    EwArgs args;
    args.in[0] = a.data;
    args.in[1] = b.data;
    args.out[0] = out.data;
    ew(EwOp::kMulScalarAdd, args, a.basis, &c);
  }
  void sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                      PolyRef out) override {
    constexpr std::string_view op = "sub_mul_scalar";
    check(op, "a", a);
    checks::same_shape(op, "a", a, "b", b);
    checks::same_shape(op, "a", a, "out", out);
    checks::limb_consts(op, "s", *this, a, s);
    const LimbConsts c = mont_consts(a.basis, s, false);
    EwArgs args;
    args.in[0] = a.data;
    args.in[1] = b.data;
    args.out[0] = out.data;
    ew(EwOp::kSubMulScalar, args, a.basis, &c);
  }
  void tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
              PolyRef d1, PolyRef d2) override {
    checks::tensor_args("tensor", *this, a0, a1, b0, b1, d0, d1, d2);
    run_tensor(a0, a1, b0, b1, d0, d1, d2, {});
  }
  void tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                     PolyRef d1, PolyRef d2, std::span<const u32> s) override {
    checks::tensor_args("tensor_scaled", *this, a0, a1, b0, b1, d0, d1, d2);
    checks::limb_consts("tensor_scaled", "s", *this, a0, s);
    run_tensor(a0, a1, b0, b1, d0, d1, d2, s);
  }
  // The kernel's per-limb constant: s_i 2^64 mod q_i (2^64 mod q_i without a scale).
  void run_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                  PolyRef d1, PolyRef d2, std::span<const u32> s) {
    LimbConsts c{};
    for (u32 i = 0; i < a0.basis.size; ++i) {
      const Modulus& m = moduli_[a0.basis.ids[i]];
      c.v[i] = s.empty() ? m.r2_mod : to_mont(to_mont(s[i], m), m);
    }
    EwArgs args;
    args.in[0] = a0.data;
    args.in[1] = a1.data;
    args.in[2] = b0.data;
    args.in[3] = b1.data;
    args.out[0] = d0.data;
    args.out[1] = d1.data;
    args.out[2] = d2.data;
    ew(EwOp::kTensor, args, a0.basis, &c);
  }

  void mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                      PolyRef out) override {
    checks::mul_scalar_sum_args("mul_scalar_sum", *this, a, s, out);
    const u32 limbs = out.limbs();
    for (std::size_t k0 = 0; k0 < a.size(); k0 += kScalarSumTerms) {
      const u32 terms = static_cast<u32>(std::min<std::size_t>(kScalarSumTerms, a.size() - k0));
      ScalarSumArgs args{};
      for (u32 k = 0; k < terms; ++k) {
        args.a[k] = a[k0 + k].data;
        for (u32 i = 0; i < limbs; ++i)
          args.c[k][i] = to_mont(s[(k0 + k) * limbs + i], moduli_[out.basis.ids[i]]);
      }
      launch_mul_scalar_sum(args, terms, out.data, k0 > 0, n(), out.basis, mods_.get(),
                            tuning_.elementwise_threads, stream());
    }
  }

  void key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) override {
    checks::key_mult_args("key_mult", *this, digits, kb, ka, out0, out1);
    run_key_mult(digits, 0, kb, ka, out0, out1);
  }
  void key_mult_add_scaled(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                           std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                           ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s) override {
    constexpr std::string_view op = "key_mult_add_scaled";
    checks::key_mult_args(op, *this, digits, kb, ka, out0, out1);
    checks::key_mult_add_scaled(op, *this, a0, a1, s, out0, out1);
    ScaledAdds sc;
    sc.a0 = a0.data;
    sc.a1 = a1.data;
    sc.s = mont_consts(out0.basis, s, false);
    run_key_mult(digits, 0, kb, ka, out0, out1, nullptr, &sc);
  }
  void key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                            std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                            PolyRef out0, PolyRef out1, ConstPolyRef add0) override {
    checks::key_mult_args("key_mult_automorphed", *this, digits, kb, ka, out0, out1);
    checks::key_mult_add0("key_mult_automorphed", *this, add0, out0, out1);
    check_galois("key_mult_automorphed", "g", g);
    run_key_mult(digits, g, kb, ka, out0, out1, add0.words() ? add0.data : nullptr);
  }
  void key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                     std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                     std::span<const PolyRef> out1) override {
    constexpr std::string_view op = "key_mult_sums";
    checks::key_mult_sums_args(op, *this, d, kb, ka, out0, out1);
    const std::size_t terms = kb.size();
    bool fits = terms <= kMaxSumTerms && n() % 4 == 0;
    for (const ConstPolyRef& x : d)
      fits = fits && (x.words() == 0 || aligned16(x.data));
    for (std::size_t g = 0; g < out0.size(); ++g)
      fits = fits && aligned16(out0[g].data) && aligned16(out1[g].data);
    for (std::size_t k = 0; k < terms; ++k)
      fits = fits && aligned16(kb[k].data) && aligned16(ka[k].data);
    if (out0.empty()) return;
    if (!fits) {  // one key_mult per sum
      Backend::key_mult_sums(d, kb, ka, out0, out1);
      return;
    }
    for (std::size_t g0 = 0; g0 < out0.size(); g0 += kMaxSums) {
      SumsArgs a;
      a.terms = static_cast<u32>(terms);
      a.sums = static_cast<u32>(std::min<std::size_t>(kMaxSums, out0.size() - g0));
      for (std::size_t k = 0; k < terms; ++k) {
        a.b[k] = kb[k].data;
        a.a[k] = ka[k].data;
      }
      for (u32 g = 0; g < a.sums; ++g) {
        a.out0[g] = out0[g0 + g].data;
        a.out1[g] = out1[g0 + g].data;
        for (std::size_t k = 0; k < terms; ++k) {
          const ConstPolyRef& x = d[(g0 + g) * terms + k];
          a.d[g][k] = x.words() ? x.data : nullptr;
        }
      }
      launch_key_mult_sums(a, n(), out0[g0].basis, mods_.get(), stream());
    }
  }
  void key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                          std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                          std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                          ConstPolyRef add0) override {
    constexpr std::string_view op = "key_mult_rotations";
    checks::key_mult_rotations_args(op, *this, digits, gs, kb, ka, out0, out1, add0);
    const std::size_t d = digits.size();
    bool fits = d > 0 && d <= kMaxRotDigits && n() % kRotBlock == 0;
    const auto aligned = [&](const void* p) { return p == nullptr || aligned16(p); };
    for (const ConstPolyRef& x : digits)
      fits = fits && aligned(x.data);
    fits = fits && aligned(add0.words() ? add0.data : nullptr);
    for (std::size_t r = 0; r < gs.size(); ++r) {
      fits = fits && aligned(out0[r].data) && aligned(out1[r].data);
      for (std::size_t k = 0; k < d; ++k)
        fits = fits && aligned(kb[r * d + k].data) && aligned(ka[r * d + k].data);
    }
    if (gs.empty()) return;
    if (!fits) {  // the calls one by one
      for (std::size_t r = 0; r < gs.size(); ++r)
        run_key_mult(digits, gs[r], kb.subspan(r * d, d), ka.subspan(r * d, d), out0[r], out1[r],
                     add0.words() ? add0.data : nullptr);
      return;
    }
    for (std::size_t r0 = 0; r0 < gs.size(); r0 += kMaxRotations) {
      RotationArgs a;
      a.digits = static_cast<u32>(d);
      a.rotations = static_cast<u32>(std::min<std::size_t>(kMaxRotations, gs.size() - r0));
      a.add0 = add0.words() ? add0.data : nullptr;
      for (std::size_t k = 0; k < d; ++k)
        a.d[k] = digits[k].data;
      for (u32 r = 0; r < a.rotations; ++r) {
        const std::size_t rr = r0 + r;
        a.g[r] = gs[rr];
        a.g_inv[r] = galois_element_inverse(gs[rr], ring_.log_n);
        a.out0[r] = out0[rr].data;
        a.out1[r] = out1[rr].data;
        for (std::size_t k = 0; k < d; ++k) {
          a.kb[r][k] = kb[rr * d + k].data;
          a.ka[r][k] = ka[rr * d + k].data;
        }
      }
      launch_key_mult_rotations(a, n(), out0[0].basis, mods_.get(), stream());
    }
  }
  void run_key_mult(std::span<const ConstPolyRef> digits, u32 galois,
                    std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                    PolyRef out0, PolyRef out1, const u32* add0 = nullptr,
                    const ScaledAdds* scaled = nullptr) {
    if (digits.empty()) {
      fill_zero(out0);
      fill_zero(out1);
      if (add0 != nullptr) {
        const ConstPolyRef a{add0, out0.n, out0.basis};
        const u32 ks[] = {galois};
        automorphism_sum({&a, 1}, ks, out0, true);
      }
      if (scaled != nullptr) {
        for (const auto& [a, o] : {std::pair{scaled->a0, out0.data}, {scaled->a1, out1.data}}) {
          EwArgs args;
          args.in[0] = a;
          args.in[1] = o;
          args.out[0] = o;
          ew(EwOp::kMulScalarAdd, args, out0.basis, &scaled->s);
        }
      }
      return;
    }
    for (std::size_t k0 = 0; k0 < digits.size(); k0 += kMaxTerms) {
      const u32 terms = static_cast<u32>(std::min<std::size_t>(kMaxTerms, digits.size() - k0));
      ConstPtrs d{}, b{}, a{};
      for (u32 k = 0; k < terms; ++k) {
        d.p[k] = digits[k0 + k].data;
        b.p[k] = kb[k0 + k].data;
        a.p[k] = ka[k0 + k].data;
      }
      // add0 rides on the last launch (its words are added once, after every term).
      const bool last = k0 + terms == digits.size();
      launch_key_mult(d, b, a, terms, out0.data, out1.data, k0 > 0, n(), out0.basis, mods_.get(),
                      stream(), galois, last ? add0 : nullptr, last ? scaled : nullptr);
    }
  }

  void mul_monomial(ConstPolyRef a, i64 k, PolyRef out) override {
    check("mul_monomial", "a", a);
    checks::same_shape("mul_monomial", "a", a, "out", out);
    const i64 two_n = i64{2} << ring_.log_n;
    const u32 kk = static_cast<u32>(((k % two_n) + two_n) % two_n);
    launch_mul_monomial(tables_, a.data, kk, out.data, n(), a.basis, stream());
  }

  void automorphism(ConstPolyRef in, u32 k, PolyRef out) override {
    check("automorphism", "in", in);
    checks::same_shape("automorphism", "in", in, "out", out);
    checks::no_alias("automorphism", "in", in, "out", out);
    check_galois("automorphism", "k", k);
    ConstPtrs ins{};
    ins.p[0] = in.data;
    GaloisList ks{};
    ks.k[0] = k;
    launch_automorphism_sum(ins, ks, 1, out.data, false, ring_.log_n, out.basis, mods_.get(),
                            stream());
  }

  void automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks, PolyRef out,
                        bool accumulate) override {
    constexpr std::string_view op = "automorphism_sum";
    check(op, "out", out);
    checks::same_count(op, "ins", ins.size(), "ks", ks.size());
    for (std::size_t j = 0; j < ins.size(); ++j) {
      checks::same_shape(op, "out", out, checks::indexed("ins", j), ins[j]);
      checks::no_alias(op, checks::indexed("ins", j), ins[j], "out", out);
      check_galois(op, checks::indexed("ks", j), ks[j]);
    }
    if (ins.empty()) {
      if (!accumulate) fill_zero(out);
      return;
    }
    for (std::size_t j0 = 0; j0 < ins.size(); j0 += kMaxTerms) {
      const u32 terms = static_cast<u32>(std::min<std::size_t>(kMaxTerms, ins.size() - j0));
      ConstPtrs p{};
      GaloisList g{};
      for (u32 j = 0; j < terms; ++j) {
        p.p[j] = ins[j0 + j].data;
        g.k[j] = ks[j0 + j];
      }
      launch_automorphism_sum(p, g, terms, out.data, accumulate || j0 > 0, ring_.log_n, out.basis,
                              mods_.get(), stream());
    }
  }

  void sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                      PolyRef out) override {
    check("sample_uniform", "out", out);
    launch_sample_uniform(seed, stream_id, out.data, n(), out.basis, mods_.get(), stream());
  }

  MemoryReport memory_report() const override {
    MemoryReport r;
    std::uint64_t v = 0;
    THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrUsedMemCurrent, &v));
    r.live_bytes = v;
    THEO_CUDA_CHECK(cudaMemPoolGetAttribute(dev_->pool(), cudaMemPoolAttrUsedMemHigh, &v));
    r.peak_bytes = v;
    std::size_t free_bytes = 0, total_bytes = 0;
    THEO_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    r.device_used = total_bytes - free_bytes;
    r.device_total = total_bytes;
    return r;
  }

  void profiler_range(bool on) override {
    THEO_CUDA_CHECK(cudaStreamSynchronize(stream()));
    THEO_CUDA_CHECK(on ? cudaProfilerStart() : cudaProfilerStop());
  }

 private:
  void check(std::string_view op, std::string_view arg, ConstPolyRef p) const {
    checks::poly(op, arg, *this, p);
  }
  // The ops that need the host at capture time; checked before anything reaches the stream, so
  // the capture stays valid.
  void refuse_while_capturing(std::string_view op) const {
    if (capture_)
      throw BackendError(std::string(op) +
                         " is not allowed while capturing (it needs the host at capture time; do "
                         "it before or after the capture)");
  }
  static void check_galois(std::string_view op, std::string_view arg, u32 k) {
    if (k % 2 == 0)
      throw ParameterError(std::string(op) + ": " + std::string(arg) + " = " + std::to_string(k) +
                           " is even; a Galois element must be odd");
  }

  void clamp_tuning() {
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

  // Per-limb constants c_i in Montgomery form, optionally times N^-1.
  LimbConsts mont_consts(const Basis& basis, std::span<const u32> s, bool with_n_inv) const {
    LimbConsts c{};
    for (u32 i = 0; i < basis.size; ++i) {
      const Modulus& m = moduli_[basis.ids[i]];
      const u32 v = s.empty() ? 1u : s[i];
      c.v[i] = with_n_inv ? mul_mod(v, n_inv_mont_[basis.ids[i]], m) : to_mont(v, m);
    }
    return c;
  }

  void ew(EwOp op, const EwArgs& args, const Basis& basis, const LimbConsts* c) {
    launch_elementwise(op, args, n(), basis, mods_.get(), c, tuning_.elementwise_threads, stream());
  }
  void binary(std::string_view op, EwOp kind, ConstPolyRef a, ConstPolyRef b, PolyRef out) {
    check(op, "a", a);
    checks::same_shape(op, "a", a, "b", b);
    checks::same_shape(op, "a", a, "out", out);
    EwArgs args;
    args.in[0] = a.data;
    args.in[1] = b.data;
    args.out[0] = out.data;
    ew(kind, args, a.basis, nullptr);
  }

  // add / sub and their batches: consecutive aligned triples of one Basis share one launch of
  // the streaming kernel; anything else (unaligned views) takes the generic kernel per triple.
  void add_sub_batch(std::string_view op, bool subtract, std::span<const ConstPolyRef> a,
                     std::span<const ConstPolyRef> b, std::span<const PolyRef> out) {
    checks::same_count(op, "a", a.size(), "b", b.size());
    checks::same_count(op, "a", a.size(), "out", out.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      const std::string ak = checks::indexed("a", k), ok = checks::indexed("out", k);
      check(op, ak, a[k]);
      checks::same_shape(op, ak, a[k], checks::indexed("b", k), b[k]);
      checks::same_shape(op, ak, a[k], ok, out[k]);
      for (std::size_t j = 0; j < a.size(); ++j) {
        if (j == k) continue;
        checks::no_alias(op, ok, out[k], checks::indexed("a", j), a[j]);
        checks::no_alias(op, ok, out[k], checks::indexed("b", j), b[j]);
        if (j > k) checks::no_alias(op, ok, out[k], checks::indexed("out", j), out[j]);
      }
    }
    const auto vec = [&](std::size_t k) {
      return n() % 4 == 0 && aligned16(a[k].data) && aligned16(b[k].data) && aligned16(out[k].data);
    };
    std::size_t k0 = 0;
    while (k0 < a.size()) {
      if (!vec(k0)) {
        EwArgs args;
        args.in[0] = a[k0].data;
        args.in[1] = b[k0].data;
        args.out[0] = out[k0].data;
        ew(subtract ? EwOp::kSub : EwOp::kAdd, args, a[k0].basis, nullptr);
        ++k0;
        continue;
      }
      const Basis& basis = a[k0].basis;
      AddBatch t{};
      u32 count = 0;
      while (k0 + count < a.size() && count < kMaxBatch && a[k0 + count].basis == basis &&
             vec(k0 + count)) {
        t.a[count] = a[k0 + count].data;
        t.b[count] = b[k0 + count].data;
        t.out[count] = out[k0 + count].data;
        ++count;
      }
      launch_add_batch(subtract, t, count, n(), basis, mods_.get(), dev_->props().l2_bytes,
                       stream());
      k0 += count;
    }
  }

  // ntt_sub_mul_scalar's tail (empty a: none).
  struct Epilogue {
    std::span<const ConstPolyRef> a;
    u32 first = 0;
    std::span<const u32> s;
  };

  void transform(std::string_view op, std::string_view consts_name, std::span<const PolyRef> polys,
                 std::span<const u32> consts, std::span<const ConstPolyRef> src,
                 std::span<const PolyRef> echo, bool inverse, const Epilogue& epi) {
    const bool per_poly = checks::transform_args(op, consts_name, *this, polys, consts, src, echo);
    if (!epi.a.empty()) checks::sub_mul_epilogue_args(op, *this, polys, epi.a, epi.first, epi.s);
    const auto aligned = [&](std::string_view name, std::size_t k, const void* p) {
      if (!aligned16(p))
        throw ParameterError(std::string(op) + ": " + checks::indexed(name, k) +
                             " is not 16-byte aligned");
    };
    for (std::size_t k = 0; k < polys.size(); ++k) {
      aligned("polys", k, polys[k].data);
      if (!src.empty()) aligned("src", k, src[k].data);
      if (!echo.empty()) aligned("echo", k, echo[k].data);
      if (!epi.a.empty()) aligned("a", k, epi.a[k].data);
    }
    // Polys share a launch while they fit (kMaxBatch polys, kMaxNttLimbs limbs), whatever their
    // bases: every limb of the batch is one grid row with its own prime and pointers.
    const bool with_consts = inverse || !consts.empty();
    NttBatch batch;
    u32 polys_in = 0, limbs_in = 0;
    bool any_sub = false;
    const auto flush = [&] {
      launch_ntt(tables_, tuning_.ntt, batch, limbs_in, !consts.empty(), !echo.empty(), any_sub,
                 inverse, stream());
      polys_in = limbs_in = 0;
      any_sub = false;
    };
    std::size_t row = 0;  // first constant of polys[k] in the per-poly form
    for (std::size_t k = 0; k < polys.size(); ++k) {
      const PolyRef& p = polys[k];
      const u32 limbs = p.limbs();
      if (limbs == 0) continue;
      if (polys_in == kMaxBatch || limbs_in + limbs > kMaxNttLimbs) flush();
      NttPoly& d = batch.poly[polys_in];
      d = NttPoly{};
      d.dst = p.data;
      d.src = src.empty() ? p.data : src[k].data;
      d.echo = echo.empty() ? nullptr : echo[k].data;
      if (!epi.a.empty()) {
        d.sub = epi.a[k].data;
        d.sub_first = epi.first;
        d.sub_limbs = epi.a[k].limbs();
        any_sub = any_sub || d.sub_limbs > 0;
      }
      const std::size_t c0 = per_poly ? row : 0;
      for (u32 l = 0; l < limbs; ++l) {
        const PrimeId id = p.basis.ids[l];
        const Modulus& m = moduli_[id];
        NttLimb& e = batch.limb[limbs_in + l];
        e.ref = ntt_limb_ref(polys_in, l, id);
        const u32 v = consts.empty() ? 1u : consts[c0 + l];
        e.c = !with_consts ? 0u : inverse ? mul_mod(v, n_inv_mont_[id], m) : to_mont(v, m);
        const u32 w = l - d.sub_first;
        e.s = d.sub != nullptr && w < d.sub_limbs ? to_mont(epi.s[w], m) : 0u;
      }
      row += limbs;
      ++polys_in;
      limbs_in += limbs;
    }
    if (limbs_in > 0) flush();
  }

  // The plan as this backend's, after the shape checks of one conversion in -> out.
  const CudaBConvPlan& checked_bconv(std::string_view op, const BConvPlan& plan, ConstPolyRef in,
                                     PolyRef out) const {
    const auto* p = dynamic_cast<const CudaBConvPlan*>(&plan);
    if (p == nullptr)
      throw ParameterError(std::string(op) +
                           ": plan was not made by the CUDA backend's make_bconv");
    checks::poly(op, "in", *this, in);
    checks::poly(op, "out", *this, out);
    checks::same_shape(op, "plan.src", ConstPolyRef{in.data, in.n, plan.src()}, "in", in);
    checks::same_shape(op, "plan.dst", ConstPolyRef{out.data, out.n, plan.dst()}, "out", out);
    checks::no_alias(op, "in", in, "out", out);
    return *p;
  }
  void run_bconv(std::string_view op, const BConvPlan& plan, ConstPolyRef in, PolyRef out,
                 bool const_mult) {
    const CudaBConvPlan& p = checked_bconv(op, plan, in, out);
    launch_bconv(p.device_args(), tuning_.bconv, in.data, out.data, n(), const_mult, stream());
  }

  std::shared_ptr<Device> dev_;
  std::shared_ptr<DeviceAllocator> alloc_;
  std::unique_ptr<StreamCapture> capture_;
  ForkState& fork_;            // dev_'s: the allocator follows the lanes too
  bool bconv_refined_ = true;  // Optimizations::bconv_refined (make_bconv)
  cudaEvent_t fork_event_ = nullptr, join_event_ = nullptr;
  Tuning tuning_;
  DeviceArray<Modulus> mods_;
  DeviceArray<i32> fwd_, inv_;
  DeviceArray<uint2> fwd_s_, inv_s_;
  DeviceArray<u32> fwd_wp_, inv_wp_;
  DeviceArray<i32> fwd_rowf_, inv_rowf_;
  RingTables tables_;
  std::vector<u32> n_inv_mont_;
};

CudaBackend& as_cuda(Backend& be) {
  auto* p = dynamic_cast<CudaBackend*>(&be);
  if (p == nullptr) throw ParameterError("not a CUDA backend: " + be.name());
  return *p;
}

}  // namespace

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
cudaStream_t stream_of(Backend& be) {
  return as_cuda(be).main_stream();
}
void set_tuning(Backend& be, const Tuning& tuning) {
  as_cuda(be).set_tuning(tuning);
}

EventTimer::EventTimer(Backend& be) : stream_(stream_of(be)) {
  THEO_CUDA_CHECK(cudaEventCreate(&start_));
  THEO_CUDA_CHECK(cudaEventCreate(&stop_));
  void* host = nullptr;
  THEO_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(u32), cudaHostAllocMapped));
  flags_ = static_cast<u32*>(host);
  flags_[0] = 1;
  flags_[1] = 0;
  void* dev = nullptr;
  THEO_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  dev_flags_ = static_cast<u32*>(dev);
}

EventTimer::~EventTimer() {
  // Release a stream still held (an op threw between start and stop) before freeing the flag.
  static_cast<volatile u32*>(flags_)[0] = 1;
  cudaStreamSynchronize(stream_);
  cudaFreeHost(flags_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void EventTimer::start() {
  volatile u32* f = flags_;
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  launch_hold_stream(dev_flags_, dev_flags_ + 1, stream_);
  THEO_CUDA_CHECK(cudaEventRecord(start_, stream_));
}

double EventTimer::stop_us() {
  THEO_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  volatile u32* f = flags_;
  f[0] = 1;
  THEO_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  THEO_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  timed_out_ = f[1] != 0;
  return static_cast<double>(ms) * 1e3;
}

}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(const RingParams& ring,
                                           const KernelTuningOverrides& overrides) {
  if (!cuda_available()) throw BackendError("make_cuda_backend: no usable CUDA GPU");
  // Overrides come from the ExecutionPolicy (THEO_PDL, THEO_NTT_* at Context creation) for before
  // / after runs of one binary; cuda::set_tuning still decides afterwards.
  cuda::Tuning t;
  if (!overrides.programmatic_launch) t.programmatic_launch = 0;
  if (overrides.ntt_row_otf) t.ntt.row_otf = *overrides.ntt_row_otf;
  if (overrides.ntt_rows_resident) t.ntt.rows_resident = *overrides.ntt_rows_resident;
  if (overrides.ntt_rows_persistent_tiles)
    t.ntt.rows_persistent_tiles = *overrides.ntt_rows_persistent_tiles;
  if (overrides.ntt_cols_wide) t.ntt.cols_wide = *overrides.ntt_cols_wide;
  return cuda::make_backend(ring, t);
}

bool cuda_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

}  // namespace theo
