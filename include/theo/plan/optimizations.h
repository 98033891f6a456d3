#pragma once
// Switches for the memory-hierarchy optimizations of Theodosian (ISPASS 2026, §III-C, §IV, §V-C),
// one per mechanism, so that an ablation can add them one at a time (`theo_bench --ablation`).
//
// Every switch changes only how the work is scheduled on the device (which kernels, how many
// polynomials per launch, on which stream, launched one by one or from a graph), never what is
// computed: each op issues the same modular arithmetic in the same order per word, so results are
// bit-exact under every combination of switches, on every backend. The tests compare all-off and
// all-on word for word (tests/ckks/test_ckks_key_switch_batch.cpp).
//
// Reached through ContextOptions::optimizations; all on by default. What a Context runs with is
// its ExecutionPolicy::optimizations() (theo/plan/execution_policy.h): these, with the environment
// applied when the Context is made.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace theo {

struct Optimizations {
  // Sequence-level kernel fusion beyond single ops (§V-C): transforms fused into the key-switching
  // stages that feed them.
  bool fusion = true;
  // BConv without intermediate reductions where the table keeps every row's sum inside the 64-bit
  // accumulator (§III-C2).
  bool bconv_refined = true;
  // Context::capture records a CUDA Graph (§IV-C); off, a Graph calls its function again at each
  // replay, op by op. ANDed with ContextOptions::graphs and THEO_GRAPHS (ExecutionPolicy).
  bool graphs = true;
  // L2-aware multi-polynomial caching (§IV-A): the INTT-BConv-NTT sequences of a key-switching
  // stage run as batched launches (ModUp over all digits, ModDown over both polynomials), and
  // independent key switches (hoisted rotations, BSGS giant steps, batched HMults) run in batches
  // whose combined working set fits the L2 cache (KeySwitchPlanner::batch_size). Off: Cheddar's
  // O(alpha)-limb order, one digit's sequence and one polynomial's ModDown after another, one key
  // switch at a time.
  bool multi_poly_caching = true;
  // Complementary pipelining (§IV-B): KeyMult's (2, alpha) P part first, then ModDown's INTT /
  // BConv / NTT of it on a second stream while the DRAM-bound (2, L) Q part of KeyMult runs on
  // the first (Backend::fork / join; captured into graphs as dependency edges).
  bool pipelining = true;
  // Output-chunked key switching (the DPOC dataflow of Nozaki et al.), part of L2-aware caching:
  // at a level whose ModUp working set exceeds the cache, a lone key switch runs its BConv -> NTT
  // -> KeyMult one output chunk at a time (the P limbs, then each digit's own limbs), so KeyMult
  // reads the digits' words while they are still in L2 and the keys stream past them. Needs
  // multi_poly_caching and fusion; ANDed with THEO_OUTPUT_CHUNKING (ExecutionPolicy). Off by
  // default and not part of all(): on an H100 it made KeySwitch at 35 / 47 limbs 16% / 12%
  // slower (more, smaller launches; docs/performance-journal.md, "output-chunked key switching").
  bool output_chunking = false;
  // Constants added in place: Evaluator::add_const_inplace adds to c0 where it is and leaves the
  // other polys alone, instead of writing a new ciphertext (one add pass, no copy of c1). The
  // polynomial and EvalMod circuits add a constant after almost every product.
  bool inplace_constants = true;
  // EvalMod's real and imaginary parts as one group even when the second stream is available
  // (EvalMod::evaluate_batch: one set of launches over both parts, the relinearization key read
  // once per product) instead of one part per stream. Needs multi_poly_caching. Same words
  // either way; off by default and not part of all(): the two streams measured faster
  // (docs/performance-journal.md).
  bool batched_evalmod = false;
  // The cache the batch planner fills; 0: the device's L2 (Backend::l2_bytes()). A backend that
  // reports no cache (the CPU) gets whole batches.
  std::size_t cache_bytes = 0;

  // Circuit-level choices (issue 31). Unlike the switches above they change the words: the same
  // function is evaluated with fewer roundings and key switches, not the same arithmetic
  // rescheduled. So none() and all() keep them at their defaults and word-for-word tests compare
  // at equal settings; an ablation sets them explicitly (theo_boot_demo --levers).
  struct Circuits {
    // Paterson-Stockmeyer with lazy relinearization and rescaling
    // (PolynomialEvaluator, docs/bootstrapping.md): each piece q_0 T_g0 + q_1 T_g1 + ... + leaf is
    // summed as tensor products plus an unrescaled leaf at one level, then relinearized and
    // rescaled once; every piece lands exactly on the level and scale its sum needs (T_g read
    // with limbs dropped, the scale difference folded into the other factor's leaf
    // coefficients), so no level_down (a rescale each) is issued. Off: the depth-optimal
    // recursion with one relinearization and rescale per product and per leaf.
    bool lazy_polynomial = true;
    // Bootstrapping with SlotToCoeff first (Bootstrapper, docs/bootstrapping.md): the input is
    // taken at level stc_levels and SlotToCoeff runs there, on the few limbs of the lowest levels,
    // before ModRaise; EvalMod's output is the result, stc_levels higher than with SlotToCoeff
    // last (the same levels per bootstrapping: Bootstrapper::input_level() says where the input
    // must be). Off: the anchor's order, input at level 0.
    bool slot_to_coeff_first = false;
    // EvalMod's real and imaginary parts end in one product (Bootstrapper, EvalMod::OpenTail): the
    // last double angle of both, k u_re^2 + i k u_im^2, is summed as tensor products, relinearized
    // once and rescaled once, where each part used to end with its own relinearization and
    // rescale. One key switch and one rescale fewer per bootstrapping, and one rounding instead
    // of two in the output: at Delta = 2^35 that rounding (e0 + e1 s with the dense key) is what
    // limits the precision, so the output gains about half a bit. Off: each part ends on its own
    // and the two are added.
    bool merged_evalmod_tail = true;
  };
  Circuits circuits;

  static Optimizations none() { return every_switch(false); }
  // Every switch at its default (output_chunking and batched_evalmod stay off).
  static Optimizations all() { return {}; }
  // The switches some mechanism of this build honors (true); an ablation reports the others as
  // "n/a", since turning them on changes nothing yet. A mechanism marks itself here when it is
  // hooked in.
  static Optimizations available() { return every_switch(true); }

 private:
  // Every switch `on`, cache_bytes at its default.
  static Optimizations every_switch(bool on) {
    return {.fusion = on,
            .bconv_refined = on,
            .graphs = on,
            .multi_poly_caching = on,
            .pipelining = on,
            .output_chunking = on,
            .inplace_constants = on,
            .batched_evalmod = on,
            .cache_bytes = 0,
            .circuits = {}};
  }
};

// The bootstrapping levers (issue 31) by name, for command lines and ablations:
// "inplace_constants", "batched_evalmod", "lazy_polynomial", "slot_to_coeff_first" and
// "merged_evalmod_tail" (the last three in Optimizations::Circuits).
std::vector<std::string> bootstrap_lever_names();
// Sets / reads lever `name`; ParameterError naming the known levers for any other name.
void set_bootstrap_lever(Optimizations& o, std::string_view name, bool on);
bool bootstrap_lever(const Optimizations& o, std::string_view name);
// `base` with the levers of `spec`: "default" (as they are in base), "baseline" (every lever off),
// "all" (every lever on), or levers joined by '+' (on, the others off), e.g.
// "lazy_polynomial+inplace_constants". ParameterError for an unknown name.
Optimizations with_bootstrap_levers(Optimizations base, std::string_view spec);

}  // namespace theo
