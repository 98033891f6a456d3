// CudaBackend's basis conversion: plans (the BConvTable in the kernels' Montgomery / centered form,
// with the fold schedule and the tensor-core table that the table's bounds allow) and the
// conversions that launch them (bconv.cu, bconv_tensor.cu).

#include <algorithm>
#include <string>
#include <vector>

#include "backend/cuda/bconv_tensor_table.h"
#include "backend/cuda/cuda_backend_impl.h"
#include "theo/ring/shape_checks.h"

namespace theo::cuda {

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
    src_mod_ = uploaded(dev, sm);
    dst_mod_ = uploaded(dev, dm);
    hat_ = uploaded(dev, hat);
    mat_ = uploaded(dev, mat);
    dev_args_ = BConvDevice{
        src_mod_.get(), dst_mod_.get(), hat_.get(), mat_.get(), nullptr, nullptr, ns, nd, false};
    // Unrefined: fold after every 4-term step, whatever the table bounds.
    dev_args_.fold_steps = refined ? bconv_fold_steps(sm, mat, nd) : 1;
    std::vector<i32> qd;
    if (t.exact) {
      if (t.src_inv.size() != ns || t.q_mod_dst.size() != nd)
        throw ParameterError("make_bconv: exact table without src_inv / q_mod_dst");
      qd.resize(nd);
      for (u32 i = 0; i < nd; ++i)
        qd[i] = center(to_mont(t.q_mod_dst[i], dm[i]), dm[i].q);
      src_inv_ = uploaded(dev, t.src_inv);
      q_mod_dst_ = uploaded(dev, qd);
      dev_args_.src_inv = src_inv_.get();
      dev_args_.q_mod_dst = q_mod_dst_.get();
      dev_args_.exact = true;
    }
    // The tensor-core kernel's byte-split table is the refined table for small source bases: it
    // bounds every sum below 2^46 with no reduction between terms.
    if (refined && ns <= kBConvTensorMaxSrc) {
      const BConvTensorTable tc = make_bconv_tensor_table(sm, dm, mat, qd);
      if (tc.r0 > 0) {
        tc_frags_ = uploaded(dev, tc.frags);
        tc_rows_ = uploaded(dev, tc.rows);
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

// The plan as this backend's (the public op checked the shapes).
const CudaBConvPlan& cuda_plan(std::string_view op, const BConvPlan& plan) {
  return checks::own_plan<CudaBConvPlan>(op, "CUDA", plan);
}

}  // namespace

std::shared_ptr<const BConvPlan> CudaBackend::do_make_bconv(const Basis& src, const Basis& dst,
                                                            bool exact) {
  return std::make_shared<CudaBConvPlan>(make_bconv_table(ring_, src, dst, exact), *this, dev_,
                                         bconv_refined_);
}

void CudaBackend::do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  run_bconv("bconv", plan, in, out, true);
}

void CudaBackend::do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  run_bconv("bconv_matmul", plan, in, out, false);
}

void CudaBackend::do_bconv_matmul_batch(std::span<const BConvJob> jobs) {
  std::vector<BConvDevice> bs;
  std::vector<const u32*> ins;
  std::vector<u32*> outs;
  for (const BConvJob& j : jobs) {
    bs.push_back(cuda_plan("bconv_matmul_batch", *j.plan).device_args());
    ins.push_back(j.in.data);
    outs.push_back(j.out.data);
  }
  if (bs.empty()) return;
  launch_bconv_matmul_batch(bs, ins, outs, tuning_.bconv, n(), stream());
}

void CudaBackend::run_bconv(std::string_view op, const BConvPlan& plan, ConstPolyRef in,
                            PolyRef out, bool const_mult) {
  const CudaBConvPlan& p = cuda_plan(op, plan);
  launch_bconv(p.device_args(), tuning_.bconv, in.data, out.data, n(), const_mult, stream());
}

}  // namespace theo::cuda
