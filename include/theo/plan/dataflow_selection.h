#pragma once
// Which key-switching dataflow runs at each level of a Context (theo/plan/dataflow.h): a fixed one
// for every level, or Dataflow::kAuto (the default), which takes the tuning table's choice at the
// levels the table measured and the footprint model's elsewhere. The selection is made once, when
// the Context is created, from ContextOptions::key_switching; it changes with the level (the
// limbs and digits of a key switch shrink as a workload descends), never afterwards.

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "theo/plan/dataflow.h"
#include "theo/plan/tuning_table.h"

namespace theo {

// Where a Context finds its tuning table. Measuring one is the tune layer's
// (theo/tuning/key_switch_tuning.h: theo_tune, create_tuned_context).
struct TuningOptions {
  // Dataflow::kAuto reads the table of this device and parameter set from `directory`.
  bool use_table = true;
  // Where tables live; empty: default_tuning_dir() of the environment as it is when the Context is
  // made ($XDG_CACHE_HOME/theodosian/tuning, else $HOME/.cache/theodosian/tuning).
  std::filesystem::path directory;
  // Where warnings go (a corrupted, stale, unreadable or unwritable table); empty: stderr.
  std::function<void(const std::string&)> warn;
};

struct KeySwitchOptions {
  Dataflow dataflow = Dataflow::kAuto;
  // For a fixed output-chunked dataflow: 2..10 (0: the footprint model's chunks at each level).
  // Must be 0 for the others.
  u32 chunks = 0;
  // Build the conversion tables of every dataflow and chunk count at the levels in
  // prepare_levels (empty: every level), so that a forced choice (the tuner, benchmarks) can run
  // any of them there; otherwise only the selected ones are built.
  bool prepare_all = false;
  std::vector<u32> prepare_levels;
  TuningOptions tuning;
};
// ParameterError naming the field when the options are inconsistent.
void validate(const KeySwitchOptions& o);

enum class ChoiceSource { kFixed, kTable, kModel };
// "fixed", "table", "model".
const char* choice_source_name(ChoiceSource s);

struct LevelDataflow {
  DataflowChoice choice;  // of a lone key switch
  ChoiceSource source = ChoiceSource::kModel;
  // Of a batch of several key switches, or of switches read through Galois elements (hoisting):
  // digit-parallel, output-bulk, each stage one set of launches over all of them.
  DataflowChoice batched = kDefaultChoice;
};

// One entry per level, the only place a dataflow is chosen: the fixed dataflow (chunks from the
// options, else the model's), or for kAuto the table's choice where `table` (may be null) tuned
// the level, else model_choice against cache_bytes; with output_chunking (Optimizations), the
// model's choice becomes DPOC (digits + 1 chunks, at most 10) at the levels with two digits or
// more whose single-input ModUp exceeds the cache. levels[l] is level l's key-switch shape.
std::vector<LevelDataflow> select_dataflows(const KeySwitchOptions& o,
                                            std::span<const KeySwitchShape> levels,
                                            std::size_t cache_bytes, const TuningTable* table,
                                            bool output_chunking = false);

// Sends a warning to o.warn, else to stderr ("theodosian: warning: ...").
void emit_warning(const TuningOptions& o, const std::string& message);

}  // namespace theo
