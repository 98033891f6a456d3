// CudaBackend's element-wise ops (elementwise.cu): add / sub and their batches, the scalar forms,
// tensor, mul_scalar_sum and mul_monomial. Per-limb constants go into the launch in Montgomery
// form.

#include <algorithm>
#include <initializer_list>

#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

LimbConsts CudaBackend::mont_consts(const Basis& basis, std::span<const u32> s,
                                    bool with_n_inv) const {
  LimbConsts c{};
  for (u32 i = 0; i < basis.size; ++i) {
    const Modulus& m = moduli_[basis.ids[i]];
    const u32 v = s.empty() ? 1u : s[i];
    c.v[i] = with_n_inv ? mul_mod(v, tables_.n_inv_mont(basis.ids[i]), m) : to_mont(v, m);
  }
  return c;
}

void CudaBackend::ew(EwOp op, const EwArgs& args, const Basis& basis, const LimbConsts* c) {
  launch_elementwise(op, args, n(), basis, tables_.mods(), c, tuning_.elementwise_threads,
                     stream());
}

namespace {

// The arguments of a one-output element-wise launch: inputs in order, then out.
EwArgs ew_args(std::initializer_list<const u32*> in, u32* out) {
  EwArgs args;
  int i = 0;
  for (const u32* p : in)
    args.in[i++] = p;
  args.out[0] = out;
  return args;
}

}  // namespace

// Consecutive aligned triples of one Basis share one launch of the streaming kernel; anything
// else (unaligned views) takes the generic kernel per triple.
void CudaBackend::add_sub_batch(bool subtract, std::span<const ConstPolyRef> a,
                                std::span<const ConstPolyRef> b, std::span<const PolyRef> out) {
  const auto vec = [&](std::size_t k) {
    return n() % 4 == 0 && aligned16(a[k].data) && aligned16(b[k].data) && aligned16(out[k].data);
  };
  std::size_t k0 = 0;
  while (k0 < a.size()) {
    if (!vec(k0)) {
      ew(subtract ? EwOp::kSub : EwOp::kAdd, ew_args({a[k0].data, b[k0].data}, out[k0].data),
         a[k0].basis, nullptr);
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
    launch_add_batch(subtract, t, count, n(), basis, tables_.mods(), dev_->props().l2_bytes,
                     stream());
    k0 += count;
  }
}

void CudaBackend::do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  add_sub_batch(false, {&a, 1}, {&b, 1}, {&out, 1});
}

void CudaBackend::do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  add_sub_batch(true, {&a, 1}, {&b, 1}, {&out, 1});
}

void CudaBackend::do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                               std::span<const PolyRef> out) {
  add_sub_batch(false, a, b, out);
}

void CudaBackend::do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                               std::span<const PolyRef> out) {
  add_sub_batch(true, a, b, out);
}

void CudaBackend::do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  ew(EwOp::kMul, ew_args({a.data, b.data}, out.data), a.basis, nullptr);
}

void CudaBackend::do_neg(ConstPolyRef a, PolyRef out) {
  ew(EwOp::kNeg, ew_args({a.data}, out.data), a.basis, nullptr);
}

void CudaBackend::do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) {
  ew(EwOp::kMulAdd, ew_args({a.data, b.data, c.data}, out.data), a.basis, nullptr);
}

void CudaBackend::do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  const LimbConsts c = mont_consts(a.basis, s, false);
  ew(EwOp::kMulScalar, ew_args({a.data}, out.data), a.basis, &c);
}

void CudaBackend::do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  LimbConsts c{};
  std::copy(s.begin(), s.end(), c.v);
  ew(EwOp::kAddScalar, ew_args({a.data}, out.data), a.basis, &c);
}

void CudaBackend::do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                                    PolyRef out) {
  const LimbConsts c = mont_consts(a.basis, s, false);
  ew(EwOp::kMulScalarAdd, ew_args({a.data, b.data}, out.data), a.basis, &c);
}

void CudaBackend::do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                                    PolyRef out) {
  const LimbConsts c = mont_consts(a.basis, s, false);
  ew(EwOp::kSubMulScalar, ew_args({a.data, b.data}, out.data), a.basis, &c);
}

void CudaBackend::do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                            PolyRef d0, PolyRef d1, PolyRef d2) {
  run_tensor(a0, a1, b0, b1, d0, d1, d2, {});
}

void CudaBackend::do_tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0,
                                   ConstPolyRef b1, PolyRef d0, PolyRef d1, PolyRef d2,
                                   std::span<const u32> s) {
  run_tensor(a0, a1, b0, b1, d0, d1, d2, s);
}

void CudaBackend::run_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                             PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s) {
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

void CudaBackend::do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                                    PolyRef out) {
  const u32 limbs = out.limbs();
  for (std::size_t k0 = 0; k0 < a.size(); k0 += kScalarSumTerms) {
    const u32 terms = static_cast<u32>(std::min<std::size_t>(kScalarSumTerms, a.size() - k0));
    ScalarSumArgs args{};
    for (u32 k = 0; k < terms; ++k) {
      args.a[k] = a[k0 + k].data;
      for (u32 i = 0; i < limbs; ++i)
        args.c[k][i] = to_mont(s[(k0 + k) * limbs + i], moduli_[out.basis.ids[i]]);
    }
    launch_mul_scalar_sum(args, terms, out.data, k0 > 0, n(), out.basis, tables_.mods(),
                          tuning_.elementwise_threads, stream());
  }
}

void CudaBackend::do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) {
  const i64 two_n = i64{2} << ring_.log_n;
  const u32 kk = static_cast<u32>(((k % two_n) + two_n) % two_n);
  launch_mul_monomial(tables_.ring(), a.data, kk, out.data, n(), a.basis, stream());
}

}  // namespace theo::cuda
