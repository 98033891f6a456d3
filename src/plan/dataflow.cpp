// Dataflow names, candidates, output chunks and the footprint model (theo/plan/dataflow.h).

#include "theo/plan/dataflow.h"

#include <algorithm>

#include "common/enum_names.h"

namespace theo {

namespace {

constexpr EnumName<Dataflow> kDataflowNames[] = {
    {Dataflow::kAuto, "auto"}, {Dataflow::kDSOB, "DSOB"}, {Dataflow::kDPOB, "DPOB"},
    {Dataflow::kDSOC, "DSOC"}, {Dataflow::kDPOC, "DPOC"},
};

}  // namespace

std::string_view dataflow_name(Dataflow d) {
  return enum_name(kDataflowNames, d, "?");
}

std::optional<Dataflow> parse_dataflow(std::string_view name) {
  return enum_from_name(kDataflowNames, name);
}

std::string choice_name(const DataflowChoice& c) {
  std::string s(dataflow_name(c.dataflow));
  if (is_chunked(c.dataflow)) {
    s.push_back('/');
    s.append(std::to_string(c.chunks));
  }
  return s;
}

bool valid_choice(const DataflowChoice& c) {
  switch (c.dataflow) {
    case Dataflow::kDSOB:
    case Dataflow::kDPOB:
      return c.chunks == 1;
    case Dataflow::kDSOC:
    case Dataflow::kDPOC:
      return c.chunks >= kMinChunks && c.chunks <= kMaxChunks;
    case Dataflow::kAuto:
      break;
  }
  return false;
}

std::vector<DataflowChoice> dataflow_candidates() {
  std::vector<DataflowChoice> v{{Dataflow::kDSOB, 1}, {Dataflow::kDPOB, 1}};
  for (Dataflow d : {Dataflow::kDSOC, Dataflow::kDPOC})
    for (u32 c = kMinChunks; c <= kMaxChunks; ++c)
      v.push_back({d, c});
  return v;
}

std::vector<ChunkRange> output_chunks(u32 extended_limbs, u32 chunks) {
  std::vector<ChunkRange> out;
  const u32 c = std::clamp<u32>(chunks, 1, std::max<u32>(extended_limbs, 1));
  const u32 base = extended_limbs / c, extra = extended_limbs % c;
  u32 first = 0;
  for (u32 i = 0; i < c; ++i) {
    const u32 count = base + (i < extra ? 1 : 0);
    out.push_back({first, count});
    first += count;
  }
  return out;
}

std::size_t dataflow_footprint(const KeySwitchShape& s, const DataflowChoice& c) {
  const std::size_t limb = std::size_t{s.n} * sizeof(u32);
  const std::size_t l = s.limbs, a = s.alpha, beta = std::max<u32>(s.digits, 1), e = l + a;
  const std::size_t chunks = std::max<u32>(c.chunks, 1);
  const std::size_t ch = (e + chunks - 1) / chunks;
  switch (c.dataflow) {
    case Dataflow::kDPOB:
      return (l + beta * e) * limb;
    case Dataflow::kDPOC:
      return (l + beta * ch) * limb;
    case Dataflow::kDSOB:
      return (a + 3 * e) * limb;
    case Dataflow::kDSOC:
      return (l + 3 * ch) * limb;
    case Dataflow::kAuto:
      break;
  }
  return 0;
}

namespace {

bool fits(const KeySwitchShape& s, const DataflowChoice& c, std::size_t cache_bytes) {
  return kFootprintHeadroom * static_cast<double>(dataflow_footprint(s, c)) <=
         static_cast<double>(cache_bytes);
}

}  // namespace

u32 model_chunks(const KeySwitchShape& s, Dataflow chunked, std::size_t cache_bytes) {
  if (cache_bytes == 0) return kMinChunks;
  for (u32 c = kMinChunks; c <= kMaxChunks; ++c)
    if (fits(s, {chunked, c}, cache_bytes)) return c;
  return kMaxChunks;
}

DataflowChoice model_choice(const KeySwitchShape& s, std::size_t cache_bytes) {
  if (cache_bytes == 0) return kDefaultChoice;
  if (fits(s, {Dataflow::kDPOB, 1}, cache_bytes)) return {Dataflow::kDPOB, 1};
  for (u32 c = kMinChunks; c <= kMaxChunks; ++c)
    if (fits(s, {Dataflow::kDPOC, c}, cache_bytes)) return {Dataflow::kDPOC, c};
  if (fits(s, {Dataflow::kDSOB, 1}, cache_bytes)) return {Dataflow::kDSOB, 1};
  for (u32 c = kMinChunks; c <= kMaxChunks; ++c)
    if (fits(s, {Dataflow::kDSOC, c}, cache_bytes)) return {Dataflow::kDSOC, c};
  // Nothing fits: the smallest footprint.
  DataflowChoice best{Dataflow::kDSOC, kMaxChunks};
  for (const DataflowChoice& c : dataflow_candidates())
    if (dataflow_footprint(s, c) < dataflow_footprint(s, best)) best = c;
  return best;
}

}  // namespace theo
