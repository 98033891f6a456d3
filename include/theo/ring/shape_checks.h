#pragma once
// The argument checks of Backend's public ops (src/ring/backend_ops.cpp), so that every backend
// rejects the same calls with the same messages. All are O(limbs) at most: they run once per call,
// never per word.

#include <span>
#include <string>
#include <string_view>

#include "theo/ring/backend.h"

namespace theo::checks {

// n equals the ring degree, every prime id exists, data is non-null when there are words.
void poly(std::string_view op, std::string_view arg, const Backend& be, ConstPolyRef p);
// `b` has the shape (n and Basis) of `a`.
void same_shape(std::string_view op, std::string_view arg_a, ConstPolyRef a, std::string_view arg_b,
                ConstPolyRef b);
// One canonical constant per limb of `p`.
void limb_consts(std::string_view op, std::string_view arg, const Backend& be, ConstPolyRef p,
                 std::span<const u32> consts);
// The word ranges of `a` and `b` do not overlap.
void no_alias(std::string_view op, std::string_view arg_a, ConstPolyRef a, std::string_view arg_b,
              ConstPolyRef b);
// "name[i]", for naming one element of a span argument.
std::string indexed(std::string_view name, std::size_t i);

// Arguments of Backend::tensor: all seven polys shaped alike, the three outputs distinct.
void tensor_args(std::string_view op, const Backend& be, ConstPolyRef a0, ConstPolyRef a1,
                 ConstPolyRef b0, ConstPolyRef b1, ConstPolyRef d0, ConstPolyRef d1,
                 ConstPolyRef d2);

// Arguments of Backend::key_mult: every digit and key poly shaped like out0 and out1, the counts
// equal, and neither output aliasing an input or the other output.
void key_mult_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> digits,
                   std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                   ConstPolyRef out0, ConstPolyRef out1);
// Jobs of Backend::bconv_matmul_batch are independent: no job's out overlaps another job's in or
// out (each job's own shapes are checked by the backend's bconv_matmul checks).
void bconv_jobs_independent(std::string_view op, std::span<const BConvJob> jobs);
// The optional add0 of Backend::key_mult_automorphed: empty, or shaped like out0 and aliasing
// neither output.
void key_mult_add0(std::string_view op, const Backend& be, ConstPolyRef add0, ConstPolyRef out0,
                   ConstPolyRef out1);
// The scaled terms of Backend::key_mult_add_scaled: a0 and a1 shaped like out0 and aliasing
// neither output, one constant per limb.
void key_mult_add_scaled(std::string_view op, const Backend& be, ConstPolyRef a0, ConstPolyRef a1,
                         std::span<const u32> s, ConstPolyRef out0, ConstPolyRef out1);
// Arguments of Backend::key_mult_rotations: the counts (one kb and ka per digit per rotation,
// one output pair per rotation), every Galois element odd, each rotation's operands as
// key_mult_automorphed's (add0 included), and no output aliasing another rotation's.
void key_mult_rotations_args(std::string_view op, const Backend& be,
                             std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                             std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                             std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                             ConstPolyRef add0);
// Arguments of Backend::key_mult_sums: the counts (kb and ka alike, one d per sum per term, one
// output pair per sum, every sum with a term), each sum's terms shaped as key_mult's, and no
// output aliasing another output or any kb / ka (every sum reads all of them).
void key_mult_sums_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> d,
                        std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                        std::span<const PolyRef> out0, std::span<const PolyRef> out1);
// Arguments of Backend::mul_scalar_sum: at least one term, every term shaped like out and not
// aliasing it, and one row of canonical per-limb constants per term.
void mul_scalar_sum_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> a,
                         std::span<const u32> s, ConstPolyRef out);
// Arguments of Backend::ntt / intt (contract in backend.h): valid, pairwise disjoint polys; consts
// none, one per limb of polys[0] (the polys then share its Basis) or one per limb of every poly
// (consts_per_poly); src and input_copy empty or shaped like the polys, src[k] in place or
// overlapping no poly, the input copies overlapping nothing.
void transform_args(std::string_view op, std::string_view consts_name, const Backend& be,
                    std::span<const PolyRef> polys, std::span<const u32> consts,
                    std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy);
// The epilogue of Backend::ntt_sub_mul_scalar: one a[k] per poly, all over a[0]'s Basis, which
// is the Basis of limbs [first, first + a[0].limbs()) of every poly; one canonical s per limb of
// a[0]; no a[k] overlapping a poly.
void sub_mul_epilogue_args(std::string_view op, const Backend& be, std::span<const PolyRef> polys,
                           std::span<const ConstPolyRef> a, u32 first, std::span<const u32> s);
// Whether the constants of a transform hold one row per poly (one per limb of every poly, in
// turn) rather than one per limb of polys[0] for all of them.
bool consts_per_poly(std::span<const PolyRef> polys, std::span<const u32> consts);
// `k` is odd (a Galois element).
void galois(std::string_view op, std::string_view arg, u32 k);
// Arguments of Backend::add_batch / sub_batch: equal counts, each triple shaped alike, and no
// out[k] overlapping an operand of another triple.
void batch_args(std::string_view op, const Backend& be, std::span<const ConstPolyRef> a,
                std::span<const ConstPolyRef> b, std::span<const PolyRef> out);
// Arguments of one conversion in -> out by `plan` (Backend::bconv, bconv_matmul): in over
// plan.src, out over plan.dst, disjoint.
void bconv_args(std::string_view op, const Backend& be, const BConvPlan& plan, ConstPolyRef in,
                ConstPolyRef out);
// `plan` as the plan class of the backend called `backend` ("CPU", "CUDA"): ParameterError when
// another backend's make_bconv made it.
template <typename Plan>
const Plan& own_plan(std::string_view op, std::string_view backend, const BConvPlan& plan) {
  const auto* p = dynamic_cast<const Plan*>(&plan);
  if (p == nullptr)
    throw ParameterError(std::string(op) + ": plan was not made by the " + std::string(backend) +
                         " backend's make_bconv");
  return *p;
}
// Span lengths agree.
void same_count(std::string_view op, std::string_view arg_a, std::size_t a, std::string_view arg_b,
                std::size_t b);

}  // namespace theo::checks
