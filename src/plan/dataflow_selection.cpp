// Per-level dataflow selection (theo/plan/dataflow_selection.h).

#include "theo/plan/dataflow_selection.h"

#include <iostream>

#include "common/enum_names.h"
#include "theo/errors.h"

namespace theo {

void validate(const KeySwitchOptions& o) {
  const std::string name(dataflow_name(o.dataflow));
  if (o.dataflow == Dataflow::kAuto || !is_chunked(o.dataflow)) {
    if (o.chunks != 0)
      throw ParameterError("KeySwitchOptions.chunks = " + std::to_string(o.chunks) +
                           " is only for DSOC and DPOC (dataflow is " + name + "); use 0");
    return;
  }
  if (o.chunks != 0 && (o.chunks < kMinChunks || o.chunks > kMaxChunks))
    throw ParameterError("KeySwitchOptions.chunks = " + std::to_string(o.chunks) + " outside " +
                         std::to_string(kMinChunks) + ".." + std::to_string(kMaxChunks) + " for " +
                         name + " (0: the footprint model's)");
}

namespace {

constexpr EnumName<ChoiceSource> kChoiceSourceNames[] = {
    {ChoiceSource::kFixed, "fixed"},
    {ChoiceSource::kTable, "table"},
    {ChoiceSource::kModel, "model"},
};

}  // namespace

const char* choice_source_name(ChoiceSource s) {
  return enum_name(kChoiceSourceNames, s, "?");
}

std::vector<LevelDataflow> select_dataflows(const KeySwitchOptions& o,
                                            std::span<const KeySwitchShape> levels,
                                            std::size_t cache_bytes, const TuningTable* table,
                                            bool output_chunking) {
  validate(o);
  std::vector<LevelDataflow> out;
  out.reserve(levels.size());
  for (u32 l = 0; l < levels.size(); ++l) {
    const KeySwitchShape& s = levels[l];
    LevelDataflow d;
    if (o.dataflow != Dataflow::kAuto) {
      d.source = ChoiceSource::kFixed;
      d.choice.dataflow = o.dataflow;
      d.choice.chunks = !is_chunked(o.dataflow) ? 1
                        : o.chunks != 0         ? o.chunks
                                                : model_chunks(s, o.dataflow, cache_bytes);
    } else if (const auto c = table != nullptr ? table->choice(l) : std::nullopt) {
      d.source = ChoiceSource::kTable;
      d.choice = *c;
    } else {
      d.source = ChoiceSource::kModel;
      d.choice = model_choice(s, cache_bytes);
      // The ModUp working set (DPOB's footprint) exceeds the cache: one output chunk per digit
      // and one for P.
      if (output_chunking && s.digits > 1 && cache_bytes != 0 &&
          dataflow_footprint(s, kDefaultChoice) > cache_bytes)
        d.choice = {Dataflow::kDPOC, std::min<u32>(s.digits + 1, kMaxChunks)};
    }
    out.push_back(d);
  }
  return out;
}

void emit_warning(const TuningOptions& o, const std::string& message) {
  if (o.warn) {
    o.warn(message);
    return;
  }
  std::cerr << "theodosian: warning: " << message << std::endl;
}

}  // namespace theo
