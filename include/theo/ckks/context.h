#pragma once
// The CKKS Context: one parameter set, one ring backend and every table the scheme needs, built
// once and immutable afterwards (so a Context may be shared by several threads).
//
// Prime table (RingParams.primes, PrimeId = index), inverted-terminal order:
//   [tau_{T-1} .. tau_0, q_0 .. q_{M-1}, p_0 .. p_{alpha-1}]
// Level l with level_config[l] = {m, t} is the contiguous id window [T - t, T + m).

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "theo/math/bigint.h"
#include "theo/math/params.h"
#include "theo/plan/execution_policy.h"
#include "theo/plan/key_switch_plan.h"
#include "theo/plan/tuning_table.h"
#include "theo/ring/backend.h"

namespace theo {

class Graph;  // theo/ckks/graph.h

// What a Context is asked for. Context::create turns the execution fields (backend, threads,
// graphs, optimizations) and the THEO_* environment into its immutable ExecutionPolicy.
struct ContextOptions {
  BackendChoice backend = BackendChoice::kAuto;  // kAuto: THEO_BACKEND, else CUDA if available
  bool allow_insecure = false;  // load parameter sets below 128-bit security (tests only)
  unsigned threads = 0;         // CPU backend threads (0: hardware concurrency)
  // Two scales are "equal" when |a/b - 1| <= scale_tolerance (else ScaleError).
  double scale_tolerance = 0x1p-30;
  // Context::capture records a CUDA Graph. false (or Optimizations::graphs false, or THEO_GRAPHS=0
  // when the Context is made): the Graph calls the function again at each replay, op by op (the
  // ablation baseline).
  bool graphs = true;
  // Hooks for tools that observe or replace the backend (the model layer: record_traffic and
  // make_cost_only_backend, theo/model/). make_backend, when set, makes the backend instead of
  // `backend` / `threads`; wrap_backend, when set, wraps the one made (e.g. a recorder of every
  // op's modelled cost). Both run once, in Context::create.
  std::function<std::unique_ptr<Backend>(const RingParams&)> make_backend;
  std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> wrap_backend;
  // The memory-hierarchy optimizations, each switchable for the ablation (bit-exact either way).
  Optimizations optimizations;
  // The key-switching dataflow of each level: Dataflow::kAuto (default: the tuning table of this
  // device and parameter set where it has the level, else the footprint model) or a fixed one,
  // and where tuning tables live (theo/plan/dataflow_selection.h, docs/dataflows.md).
  KeySwitchOptions key_switching;
};

// One key-switching digit at one level: the level's limbs [start, start + count), which are the
// level's share of prime chunk `chunk` (chunk k = ids [k*alpha, (k+1)*alpha) of Q_max).
struct DigitPlan {
  u32 chunk = 0;
  u32 start = 0;
  u32 count = 0;
  // BConv const-mult (D/d_j)^-1 mod d_j, fused into the INTT of the digit.
  std::vector<u32> intt_post_consts;
  // digit -> the level's limbs before the digit (null when none), and digit -> limbs after it
  // followed by P. Together they cover (Q_l u P) minus the digit, as two contiguous slices.
  std::shared_ptr<const BConvPlan> to_before;
  std::shared_ptr<const BConvPlan> to_after;
};

// One digit's conversion onto one output chunk of Q_l u P: the chunk's limbs outside the digit's
// own, [first, first + count) of Q_l u P, converted from the digit by `plan` (the rows of
// to_before / to_after for those limbs, as a plan of its own).
struct ChunkPiece {
  u32 first = 0;
  u32 count = 0;
  std::shared_ptr<const BConvPlan> plan;
};

// The tables of the output-chunked dataflows (DSOC, DPOC) with `chunks` chunks at one level:
// chunk j covers the limbs ranges[j] of Q_l u P (output_chunks(limbs + alpha, chunks)), and
// pieces[j][k] converts digit k onto it (at most two pieces: before and after the digit's limbs).
struct OutputChunkPlans {
  u32 chunks = 0;
  std::vector<ChunkRange> ranges;
  std::vector<std::vector<std::vector<ChunkPiece>>> pieces;  // [chunk][digit]
};

// Rational rescale from level l to l-1: leaving primes L = S_l \ S_{l-1} are divided out,
// entering primes E = S_{l-1} \ S_l are multiplied in (y = (x * Pi_E - r) / Pi_L).
struct RescalePlan {
  // Leaving limbs as ranges [offset, offset + count) of level l's limbs (one or two pieces).
  std::vector<std::array<u32, 2>> leaving;
  Basis leaving_basis;  // the leaving limbs gathered in that order
  // Staying limbs: [stay_src, +stay_count) of level l == [stay_dst, +stay_count) of level l-1.
  u32 stay_src = 0;
  u32 stay_dst = 0;
  u32 stay_count = 0;
  std::shared_ptr<const BConvPlan> bconv;  // leaving_basis -> S_{l-1}
  // [Pi_E]_l * (Pi_L/l_j)^-1 mod l_j, per leaving limb (fused into the INTT).
  std::vector<u32> intt_post_consts;
  // Per limb of S_{l-1}, fused into the NTT of r: Pi_E^-1 on staying limbs, -Pi_L^-1 on entering
  // ones (where the output is -r * Pi_L^-1 directly).
  std::vector<u32> ntt_pre_consts;
  // Pi_E * Pi_L^-1 per staying limb: y = (x - r') * this.
  std::vector<u32> stay_consts;
};

struct LevelData {
  u32 level = 0;
  u32 main_count = 0;
  u32 terminal_count = 0;
  u32 first_id = 0;  // T - terminal_count
  u32 limbs = 0;
  Basis q_basis;                  // S_l
  Basis pq_basis;                 // S_l followed by P
  long double scale = 0;          // default scale Delta_l
  long double rescale_ratio = 0;  // r_l = Q_l / Q_{l-1} (level >= 1)
  double log2_q = 0;
  std::vector<DigitPlan> digits;
  // ModDown P -> S_l: (P/p_j)^-1 mod p_j fused into the INTT, then P^-1 mod q_i.
  std::shared_ptr<const BConvPlan> mod_down;
  std::vector<u32> mod_down_intt_consts;
  std::vector<u32> p_inv;
  RescalePlan rescale;                          // to level - 1 (empty at level 0)
  std::shared_ptr<const CrtReconstructor> crt;  // over S_l, for decoding
  // ModDown merged with the rescale to level - 1 (Evaluator::multiply_relin_rescale): the same
  // rational rescale over Q_l u P with P joining the leaving primes (leaving ranges index the
  // Q_l u P limbs), so one INTT -> BConv -> NTT divides by P * Pi_L. Empty at level 0.
  RescalePlan mod_down_rescale;
  std::vector<u32> p_mod_q;  // [i] = P mod q_i over S_l: folds a Q_l part into Q_l u P as P * x
  // Every digit's intt_post_consts side by side (the digits tile S_l in order): one INTT of the
  // whole input serves all digits of a ModUp.
  std::vector<u32> mod_up_intt_consts;
  // Output-chunked key switching, built for the chunk counts the level's dataflow uses (and for
  // every count with KeySwitchOptions::prepare_all).
  std::vector<OutputChunkPlans> output_chunk_plans;
  // The tables for `chunks` chunks, or null where they were not built.
  const OutputChunkPlans* chunk_plans(u32 chunks) const;
};

// What became of the key-switch tuning table when a Context was made.
struct TuningReport {
  std::filesystem::path file;  // where the table of this device and set lives (empty: no directory)
  TuningLoadStatus status = TuningLoadStatus::kMissing;
  std::string message;  // the warning given (corrupted, stale, unreadable), else empty
};

class Context : public std::enable_shared_from_this<Context> {
 public:
  // Validates the set (ParameterError), refuses 64-bit sets, checks 128-bit security
  // (SecurityError unless options.allow_insecure) and builds the backend and all tables, in one
  // go: nothing changes the Context afterwards. The environment is read once, into policy().
  // Dataflow::kAuto's key-switch dataflows come from `table` when one is given (a table of
  // another device or parameter set is warned about and not used), else from the table on disk
  // (KeySwitchOptions::tuning), else from the footprint model; tuning_report() says which.
  // Measuring a table is the tuning layer's (theo/tuning/key_switch_tuning.h).
  static std::shared_ptr<const Context> create(const ParameterSet& params,
                                               const ContextOptions& options = {},
                                               const TuningTable* table = nullptr);

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  u64 id() const { return id_; }  // unique per process; stamped on every object made from it
  const ParameterSet& params() const { return params_; }
  // What the Context was asked for.
  const ContextOptions& options() const { return options_; }
  // The execution settings in effect (the options with the environment applied at creation).
  const ExecutionPolicy& policy() const { return policy_; }
  // Plans every key switch of this Context (theo/plan/key_switch_plan.h). The library's code asks
  // KeySwitcher::run (theo/ckks/key_switcher.h), which asks the planner; this accessor is for
  // tests of the planner's decisions.
  const KeySwitchPlanner& key_switch_planner() const { return *planner_; }
  // The key-switch dataflow of a lone switch at `level` and where it came from (reports).
  const LevelDataflow& key_switch_dataflow(u32 level) const;
  // The backend executes ops; the Context itself never changes after creation.
  Backend& backend() const { return *backend_; }
  const RingParams& ring() const { return ring_; }

  u32 n() const { return ring_.n(); }
  u32 log_n() const { return ring_.log_n; }
  u32 max_slots() const { return n() / 2; }
  u32 max_level() const { return static_cast<u32>(levels_.size()) - 1; }
  u32 terminal_count() const { return terminal_count_; }  // T
  u32 main_count() const { return main_count_; }          // M
  u32 alpha() const { return alpha_; }
  u32 dnum() const { return dnum_; }  // key-switching digits of a Q_max key
  u32 q_max_limbs() const { return terminal_count_ + main_count_; }
  Basis q_max_basis() const { return Basis::range(0, q_max_limbs()); }
  Basis p_basis() const { return Basis::range(q_max_limbs(), alpha_); }
  Basis key_basis() const { return Basis::range(0, q_max_limbs() + alpha_); }  // Q_max u P
  u32 prime(PrimeId id) const { return ring_.primes[id]; }

  // Throws LevelError naming the level when it does not exist.
  const LevelData& level(u32 l) const;
  long double default_scale(u32 l) const { return level(l).scale; }
  u32 default_encryption_level() const { return params_.default_encryption_level; }
  double scale_tolerance() const { return options_.scale_tolerance; }

  // Captures the backend ops of `fn` once into a Graph that replays them (theo/ckks/graph.h,
  // docs/graphs.md). fn does not run now; its work runs at each Graph::replay().
  Graph capture(std::function<void()> fn) const;

  // What a key-switch tuning table of this Context must match: the device, the parameter set's
  // fingerprint and every level's key-switch shape (theo/plan/tuning_table.h).
  TuningKey tuning_key() const;
  // The table's file and what became of it at creation.
  const TuningReport& tuning_report() const { return tuning_report_; }

 private:
  Context(const ParameterSet& params, const ContextOptions& options, const TuningTable* table);
  void build_levels();
  // The tuning table the planner uses (the given one, else the one on disk), with the report.
  std::optional<TuningTable> choose_tuning_table(const TuningTable* given);
  // The tables of the output-chunked dataflows the planner chose (every chunk count at the levels
  // KeySwitchOptions::prepare_all names).
  void build_output_chunk_plans();

  u64 id_ = 0;
  ParameterSet params_;
  ContextOptions options_;
  const ExecutionPolicy policy_;
  RingParams ring_;
  std::unique_ptr<Backend> backend_;
  u32 terminal_count_ = 0;
  u32 main_count_ = 0;
  u32 alpha_ = 0;
  u32 dnum_ = 0;
  std::vector<LevelData> levels_;
  std::unique_ptr<const KeySwitchPlanner> planner_;
  TuningReport tuning_report_;
};

using ContextPtr = std::shared_ptr<const Context>;

}  // namespace theo
