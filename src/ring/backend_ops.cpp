// Backend's public ops: each checks its arguments once (shape_checks.h), so that every backend
// rejects the same calls with the same messages, then calls the backend's do_ implementation.

#include <string>

#include "theo/ring/backend.h"
#include "theo/ring/shape_checks.h"

namespace theo {

// ---- memory -------------------------------------------------------------------------------------

void Backend::upload(const u32* host, PolyRef dst) {
  refuse_while_capturing("upload");
  refuse_while_forked("upload");
  checks::poly("upload", "dst", *this, dst);
  do_upload(host, dst);
}

void Backend::download(ConstPolyRef src, u32* host) {
  refuse_while_capturing("download");
  refuse_while_forked("download");
  checks::poly("download", "src", *this, src);
  do_download(src, host);
}

void Backend::copy(ConstPolyRef src, PolyRef dst) {
  checks::poly("copy", "src", *this, src);
  checks::same_shape("copy", "src", src, "dst", dst);
  do_copy(src, dst);
}

void Backend::fill_zero(PolyRef dst) {
  checks::poly("fill_zero", "dst", *this, dst);
  do_fill_zero(dst);
}

void Backend::synchronize() {
  refuse_while_capturing("synchronize");
  do_synchronize();
}

// ---- NTT ----------------------------------------------------------------------------------------

void Backend::ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                  std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  checks::transform_args("ntt", "pre_consts", *this, polys, pre_consts, src, input_copy);
  do_ntt(polys, pre_consts, src, input_copy);
}

void Backend::intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
                   std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
  checks::transform_args("intt", "post_consts", *this, polys, post_consts, src, input_copy);
  do_intt(polys, post_consts, src, input_copy);
}

void Backend::ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                                 std::span<const ConstPolyRef> a, u32 first,
                                 std::span<const u32> s) {
  constexpr std::string_view op = "ntt_sub_mul_scalar";
  checks::transform_args(op, "pre_consts", *this, polys, pre_consts, {}, {});
  checks::sub_mul_epilogue_args(op, *this, polys, a, first, s);
  do_ntt_sub_mul_scalar(polys, pre_consts, a, first, s);
}

// ---- basis conversion ---------------------------------------------------------------------------

std::shared_ptr<const BConvPlan> Backend::make_bconv(const Basis& src, const Basis& dst,
                                                     bool exact) {
  refuse_while_capturing("make_bconv");
  return do_make_bconv(src, dst, exact);
}

void Backend::bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  checks::bconv_args("bconv", *this, plan, in, out);
  do_bconv(plan, in, out);
}

void Backend::bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) {
  checks::bconv_args("bconv_matmul", *this, plan, in, out);
  do_bconv_matmul(plan, in, out);
}

void Backend::bconv_matmul_batch(std::span<const BConvJob> jobs) {
  constexpr std::string_view op = "bconv_matmul_batch";
  for (const BConvJob& j : jobs)
    if (j.plan == nullptr) throw ParameterError(std::string(op) + ": a job has no plan");
  for (const BConvJob& j : jobs)
    checks::bconv_args(op, *this, *j.plan, j.in, j.out);
  checks::bconv_jobs_independent(op, jobs);
  do_bconv_matmul_batch(jobs);
}

// ---- element-wise -------------------------------------------------------------------------------

namespace {

// Arguments of the one-poly element-wise ops: `a` valid, every other operand shaped like it.
void same_shape_args(std::string_view op, const Backend& be, ConstPolyRef a,
                     std::initializer_list<std::pair<const char*, ConstPolyRef>> others) {
  checks::poly(op, "a", be, a);
  for (const auto& [name, p] : others)
    checks::same_shape(op, "a", a, name, p);
}

}  // namespace

void Backend::add(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  same_shape_args("add", *this, a, {{"b", b}, {"out", out}});
  do_add(a, b, out);
}

void Backend::sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  same_shape_args("sub", *this, a, {{"b", b}, {"out", out}});
  do_sub(a, b, out);
}

void Backend::add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                        std::span<const PolyRef> out) {
  checks::batch_args("add_batch", *this, a, b, out);
  do_add_batch(a, b, out);
}

void Backend::sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                        std::span<const PolyRef> out) {
  checks::batch_args("sub_batch", *this, a, b, out);
  do_sub_batch(a, b, out);
}

void Backend::neg(ConstPolyRef a, PolyRef out) {
  same_shape_args("neg", *this, a, {{"out", out}});
  do_neg(a, out);
}

void Backend::mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) {
  same_shape_args("mul", *this, a, {{"b", b}, {"out", out}});
  do_mul(a, b, out);
}

void Backend::mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) {
  same_shape_args("mul_add", *this, a, {{"b", b}, {"c", c}, {"out", out}});
  do_mul_add(a, b, c, out);
}

void Backend::mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  same_shape_args("mul_scalar", *this, a, {{"out", out}});
  checks::limb_consts("mul_scalar", "s", *this, a, s);
  do_mul_scalar(a, s, out);
}

void Backend::add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) {
  same_shape_args("add_scalar", *this, a, {{"out", out}});
  checks::limb_consts("add_scalar", "s", *this, a, s);
  do_add_scalar(a, s, out);
}

void Backend::mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b, PolyRef out) {
  same_shape_args("mul_scalar_add", *this, a, {{"b", b}, {"out", out}});
  checks::limb_consts("mul_scalar_add", "s", *this, a, s);
  do_mul_scalar_add(a, s, b, out);
}

void Backend::sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s, PolyRef out) {
  same_shape_args("sub_mul_scalar", *this, a, {{"b", b}, {"out", out}});
  checks::limb_consts("sub_mul_scalar", "s", *this, a, s);
  do_sub_mul_scalar(a, b, s, out);
}

void Backend::mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s, PolyRef out) {
  checks::mul_scalar_sum_args("mul_scalar_sum", *this, a, s, out);
  do_mul_scalar_sum(a, s, out);
}

void Backend::tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                     PolyRef d1, PolyRef d2) {
  checks::tensor_args("tensor", *this, a0, a1, b0, b1, d0, d1, d2);
  do_tensor(a0, a1, b0, b1, d0, d1, d2);
}

void Backend::tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                            PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s) {
  checks::tensor_args("tensor_scaled", *this, a0, a1, b0, b1, d0, d1, d2);
  checks::limb_consts("tensor_scaled", "s", *this, a0, s);
  do_tensor_scaled(a0, a1, b0, b1, d0, d1, d2, s);
}

void Backend::key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                       std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) {
  checks::key_mult_args("key_mult", *this, digits, kb, ka, out0, out1);
  do_key_mult(digits, kb, ka, out0, out1);
}

void Backend::key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                                  std::span<const ConstPolyRef> kb,
                                  std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                                  ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s) {
  constexpr std::string_view op = "key_mult_add_scaled";
  checks::key_mult_args(op, *this, digits, kb, ka, out0, out1);
  checks::key_mult_add_scaled(op, *this, a0, a1, s, out0, out1);
  do_key_mult_add_scaled(digits, kb, ka, out0, out1, a0, a1, s);
}

void Backend::key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                                   std::span<const ConstPolyRef> kb,
                                   std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                                   ConstPolyRef add0) {
  constexpr std::string_view op = "key_mult_automorphed";
  checks::key_mult_args(op, *this, digits, kb, ka, out0, out1);
  checks::key_mult_add0(op, *this, add0, out0, out1);
  checks::galois(op, "g", g);
  do_key_mult_automorphed(digits, g, kb, ka, out0, out1, add0);
}

void Backend::key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                                 std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                                 std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                                 ConstPolyRef add0) {
  checks::key_mult_rotations_args("key_mult_rotations", *this, digits, gs, kb, ka, out0, out1,
                                  add0);
  do_key_mult_rotations(digits, gs, kb, ka, out0, out1, add0);
}

void Backend::key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                            std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                            std::span<const PolyRef> out1) {
  checks::key_mult_sums_args("key_mult_sums", *this, d, kb, ka, out0, out1);
  do_key_mult_sums(d, kb, ka, out0, out1);
}

void Backend::mul_monomial(ConstPolyRef a, i64 k, PolyRef out) {
  same_shape_args("mul_monomial", *this, a, {{"out", out}});
  do_mul_monomial(a, k, out);
}

// ---- automorphism -------------------------------------------------------------------------------

void Backend::automorphism(ConstPolyRef in, u32 k, PolyRef out) {
  constexpr std::string_view op = "automorphism";
  checks::poly(op, "in", *this, in);
  checks::same_shape(op, "in", in, "out", out);
  checks::no_alias(op, "in", in, "out", out);
  checks::galois(op, "k", k);
  do_automorphism(in, k, out);
}

void Backend::automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks,
                               PolyRef out, bool accumulate) {
  constexpr std::string_view op = "automorphism_sum";
  checks::poly(op, "out", *this, out);
  checks::same_count(op, "ins", ins.size(), "ks", ks.size());
  for (std::size_t j = 0; j < ins.size(); ++j) {
    checks::same_shape(op, "out", out, checks::indexed("ins", j), ins[j]);
    checks::no_alias(op, checks::indexed("ins", j), ins[j], "out", out);
    checks::galois(op, checks::indexed("ks", j), ks[j]);
  }
  do_automorphism_sum(ins, ks, out, accumulate);
}

// ---- sampling -----------------------------------------------------------------------------------

void Backend::sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id, PolyRef out) {
  checks::poly("sample_uniform", "out", *this, out);
  do_sample_uniform(seed, stream_id, out);
}

}  // namespace theo
