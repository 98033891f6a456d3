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
  const auto* p = dynamic_cast<const CpuBConvPlan*>(&plan);
  if (p == nullptr)
    throw ParameterError(std::string(op) + ": plan was not made by the CPU backend's make_bconv");
  return *p;
}

}  // namespace

std::shared_ptr<const BConvPlan> CpuBackend::make_bconv(const Basis& src, const Basis& dst,
                                                        bool exact) {
  refuse_while_capturing("make_bconv");
  return std::make_shared<CpuBConvPlan>(make_bconv_table(ring_, src, dst, exact), *this);
}

namespace {

const CpuBConvPlan& check_bconv(std::string_view op, const Backend& be, const BConvPlan& plan,
                                ConstPolyRef in, PolyRef out) {
  const CpuBConvPlan& p = cpu_plan(op, plan);
  checks::poly(op, "in", be, in);
  checks::poly(op, "out", be, out);
  checks::same_shape(op, "plan.src", ConstPolyRef{in.data, in.n, plan.src()}, "in", in);
  checks::same_shape(op, "plan.dst", ConstPolyRef{out.data, out.n, plan.dst()}, "out", out);
  checks::no_alias(op, "in", in, "out", out);
  return p;
}

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

void CpuBackend::bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  const CpuBConvPlan& p = check_bconv("bconv", *this, plan, in, out);
  if (deferred([this, &plan, in, out] { bconv(plan, in, out); })) return;
  run_bconv(pool_, p, in, out, true);
}

void CpuBackend::bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  const CpuBConvPlan& p = check_bconv("bconv_matmul", *this, plan, in, out);
  if (deferred([this, &plan, in, out] { bconv_matmul(plan, in, out); })) return;
  run_bconv(pool_, p, in, out, false);
}

}  // namespace theo::cpu
