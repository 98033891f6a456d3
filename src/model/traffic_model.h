#pragma once
// The modelled cost of each Backend op (theo/model/traffic.h; docs/traffic-model.md): words read
// and written once, 4 bytes each, tables once per call, core modular multiply-adds. Pure shape
// arithmetic: nothing is read from the operands.

#include <span>

#include "theo/model/traffic.h"

namespace theo::traffic_model {

// Host <-> backend transfers (counted as the words written / read on the backend's side).
TrafficCost upload(PolyRef dst);
TrafficCost download(ConstPolyRef src);
TrafficCost copy(ConstPolyRef src, PolyRef dst);
// fill_zero, sample_uniform: the output written, nothing read.
TrafficCost write_only(PolyRef dst);

// (I)NTT, in place or out of place alike (every input word read once, every output word written
// once): twiddles of every distinct prime once; N/2 log2 N butterflies per limb, plus N per limb
// when the per-limb constants are fused in; an input copy writes its words once more.
TrafficCost ntt(std::span<const PolyRef> polys, bool with_consts, u32 log_n,
                bool with_input_copy = false);
// ntt_sub_mul_scalar: the forward NTT, plus the window operands a read and one product per window
// word.
TrafficCost ntt_sub_mul_scalar(std::span<const PolyRef> polys, bool with_consts, u32 log_n,
                               std::span<const ConstPolyRef> a);

// BConv: |S| N in, |D| N out, |S| |D| N multiply-adds (+ |S| N for the const mult of the full
// bconv, + |D| N for the exact correction); the |D| x |S| matrix and per-prime constants once.
TrafficCost bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out, bool with_const_mult);
// Two costs of one call (a batch): polys, limbs, bytes and products added; n of either.
TrafficCost sum(const TrafficCost& a, const TrafficCost& b);

// Element-wise ops over one output: `inputs` full-size operands read, the output written,
// `macs_per_word` products per output word.
TrafficCost elementwise(PolyRef out, u32 inputs, u32 macs_per_word);
// add_batch / sub_batch: one add per triple.
TrafficCost elementwise_batch(std::span<const PolyRef> out);
// mul_scalar_sum: K inputs, K products per output word.
TrafficCost mul_scalar_sum(std::span<const ConstPolyRef> a, PolyRef out);
// tensor: 4 inputs, 3 outputs, 4 products per word.
TrafficCost tensor(PolyRef d0);
// key_mult: d digits and 2 d key polys read, 2 outputs, 2 d products per output-pair word.
TrafficCost key_mult(std::span<const ConstPolyRef> digits, PolyRef out0);
// automorphism_sum: K inputs (+ out when accumulating), no products.
TrafficCost automorphism_sum(std::span<const ConstPolyRef> ins, PolyRef out, bool accumulate);

}  // namespace theo::traffic_model
