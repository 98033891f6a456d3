#pragma once
// Key-switching dataflows (Nozaki et al., "Dataflow-Oriented Classification and Performance
// Analysis of GPU-Accelerated Homomorphic Encryption", papers/dataflow-classification-gpu-ckks.md)
// and the footprint model that chooses one from the device's L2 cache.
//
// Two axes: the digits of a key switch are processed one after another (DigitSerial) or together
// in each launch (DigitParallel); the output limbs of ModUp -> KeyMult (Q_l u P) are produced in
// one pass (OutputBulk) or `chunks` contiguous pieces at a time (OutputChunked). Every dataflow
// computes the same words; they differ in how much data one step keeps live (the footprint), how
// many launches they issue and how much parallelism each launch has.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "theo/common.h"

namespace theo {

enum class Dataflow {
  kAuto,  // chosen per level: the tuning table, else the footprint model
  kDSOB,  // digit-serial, output-bulk: one digit's ModUp and KeyMult after another
  kDPOB,  // digit-parallel, output-bulk: every digit's ModUp, then one KeyMult pass (with the
          // L2-aware ModUp digit groups of multi-polynomial caching)
  kDSOC,  // digit-serial, output-chunked: per output chunk, one digit after another
  kDPOC,  // digit-parallel, output-chunked: per output chunk, every digit in each launch
};

// "auto", "DSOB", "DPOB", "DSOC", "DPOC".
std::string_view dataflow_name(Dataflow d);
// The inverse of dataflow_name, case-insensitive; nullopt for anything else.
std::optional<Dataflow> parse_dataflow(std::string_view name);

inline constexpr u32 kMinChunks = 2;
inline constexpr u32 kMaxChunks = 10;

inline bool is_chunked(Dataflow d) {
  return d == Dataflow::kDSOC || d == Dataflow::kDPOC;
}
inline bool is_digit_serial(Dataflow d) {
  return d == Dataflow::kDSOB || d == Dataflow::kDSOC;
}

// One fixed dataflow: chunks = 1 for the output-bulk ones, kMinChunks..kMaxChunks for the
// output-chunked ones.
struct DataflowChoice {
  Dataflow dataflow = Dataflow::kDPOB;
  u32 chunks = 1;
  bool operator==(const DataflowChoice&) const = default;
};
// "DPOB", "DPOC/4".
std::string choice_name(const DataflowChoice& c);
// A fixed dataflow with a chunk count in its range.
bool valid_choice(const DataflowChoice& c);
// Every fixed choice a tuner times: DSOB, DPOB, then DSOC and DPOC with 2..10 chunks (20).
std::vector<DataflowChoice> dataflow_candidates();
// The dataflow of the library without a selection (DPOB with multi-polynomial caching), which
// Auto keeps unless a measurement shows another clearly faster.
inline constexpr DataflowChoice kDefaultChoice{Dataflow::kDPOB, 1};

// The shape of one key switch: the level's limbs L and digits beta, alpha auxiliary limbs, N.
struct KeySwitchShape {
  u32 limbs = 0;
  u32 digits = 0;
  u32 alpha = 0;
  u32 n = 0;
  bool operator==(const KeySwitchShape&) const = default;
};

// The limbs of output chunk i of `chunks` over the E = L + alpha extended limbs: contiguous,
// sizes differing by at most one, the larger ones first. [first, first + count).
struct ChunkRange {
  u32 first = 0;
  u32 count = 0;
};
std::vector<ChunkRange> output_chunks(u32 extended_limbs, u32 chunks);

// The footprint model (bytes, 4 N per limb; E = L + alpha, c = chunks, ch = ceil(E / c)): what a
// step of the dataflow writes and reads again before it is done with it, so what must stay in L2
// for the step to run without DRAM traffic beyond streaming its inputs and the keys.
//   DPOB  L + beta E      the INTT'd input (read by every digit's BConv) and every digit over
//                          Q_l u P (BConv out, NTT in / out, KeyMult in)
//   DPOC  L + beta ch     the INTT'd input (read by every chunk) and every digit's chunk
//   DSOB  alpha + 3 E     one digit's coefficients, its extension and the two KeyMult
//                          accumulators, which every digit reads and writes again
//   DSOC  L + 3 ch        the INTT'd input (read by every chunk), one digit's chunk and the
//                          chunk's two accumulators
// The KeyMult outputs of the digit-parallel dataflows are written once and not counted, nor are
// the keys, which every dataflow streams from DRAM once.
std::size_t dataflow_footprint(const KeySwitchShape& s, const DataflowChoice& c);

// The paper's observation (§IV-B): the best dataflow moves to the one with the next smaller
// footprint once the L2 no longer holds the footprint with room to spare. The model takes the
// first of DPOB, DPOC (2..10 chunks), DSOB, DSOC (2..10 chunks) whose footprint times
// kFootprintHeadroom fits `cache_bytes` (the fewest chunks that fit: fewer, larger launches), else
// the smallest footprint of all (DSOC with 10 chunks). cache_bytes = 0 (no cache to plan for, e.g.
// the CPU): DPOB.
// The paper's GPUs put the turn at about twice the footprint (headroom 2). This library's DPOB
// overlaps its DRAM round trip with complementary pipelining and L2-aware digit groups: on the
// H100 it stays within 1.7% of the best dataflow in every cell of the grid, up to footprints of
// 5x the L2, where the headroom-2 rule chose chunked dataflows up to 2x slower
// (bench/results/h100-dataflows-2026-11-25.json). Hence 1/8: DPOB until the footprint exceeds
// eight times the cache. A tuning table, where one exists, overrides the model per level.
inline constexpr double kFootprintHeadroom = 0.125;
DataflowChoice model_choice(const KeySwitchShape& s, std::size_t cache_bytes);
// The chunks the model gives a fixed chunked dataflow: the fewest in 2..10 that fit, else 10.
u32 model_chunks(const KeySwitchShape& s, Dataflow chunked, std::size_t cache_bytes);

}  // namespace theo
