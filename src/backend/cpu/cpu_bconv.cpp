#include "backend/cpu/bconv_kernels.h"
#include "backend/cpu/cpu_backend.h"
#include "theo/ring/shape_checks.h"

namespace theo::cpu {

namespace {

class CpuBConvPlan final : public BConvPlan {
 public:
  CpuBConvPlan(BConvTable table, const Backend& be)
      : BConvPlan(std::move(table)), consts_(make_bconv_consts(this->table(), be)) {}
  const BConvConsts& consts() const { return consts_; }

 private:
  BConvConsts consts_;
};

const CpuBConvPlan& cpu_plan(std::string_view op, const BConvPlan& plan) {
  return checks::own_plan<CpuBConvPlan>(op, "CPU", plan);
}

}  // namespace

std::shared_ptr<const BConvPlan> CpuBackend::do_make_bconv(const Basis& src, const Basis& dst,
                                                           bool exact) {
  return std::make_shared<CpuBConvPlan>(make_bconv_table(ring_, src, dst, exact), *this);
}

namespace {

void run_bconv(ThreadPool& pool, const CpuBConvPlan& p, ConstPolyRef in, PolyRef out,
               bool apply_hat_inv) {
  const u32 tiles = in.n / kBConvTile;
  pool.run(tiles, [&](std::size_t t) {
    thread_local std::vector<i32> scratch;
    bconv_tile(p.consts(), in, out, apply_hat_inv, static_cast<u32>(t) * kBConvTile, kBConvTile,
               scratch);
  });
}

}  // namespace

void CpuBackend::do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  const CpuBConvPlan& p = cpu_plan("bconv", plan);
  if (deferred([this, &plan, in, out] { do_bconv(plan, in, out); })) return;
  run_bconv(pool_, p, in, out, true);
}

void CpuBackend::do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  const CpuBConvPlan& p = cpu_plan("bconv_matmul", plan);
  if (deferred([this, &plan, in, out] { do_bconv_matmul(plan, in, out); })) return;
  run_bconv(pool_, p, in, out, false);
}

}  // namespace theo::cpu
