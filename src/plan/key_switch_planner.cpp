// KeySwitchPlanner (theo/plan/key_switch_plan.h): the footprint model against the cache, and the
// plan of every key-switching caller.

#include <algorithm>
#include <string>

#include "theo/errors.h"
#include "theo/plan/key_switch_plan.h"

namespace theo {

KeySwitchFootprint key_switch_footprint(u32 limbs, u32 alpha, std::size_t beta, u32 n) {
  const std::size_t limb = std::size_t{n} * sizeof(u32);
  const std::size_t l = limbs, a = alpha;
  KeySwitchFootprint f;
  f.mod_up = (l + beta * (l + a)) * limb;
  f.mod_down = (2 * a + 4 * l) * limb;
  f.hoisted = beta * (l + a) * limb;
  return f;
}

std::size_t planned_cache_bytes(const Optimizations& opt, std::size_t device_l2_bytes) {
  return opt.cache_bytes != 0 ? opt.cache_bytes : device_l2_bytes;
}

KeySwitchPlanner::KeySwitchPlanner(const ExecutionPolicy& policy, std::size_t device_l2_bytes,
                                   u32 n, u32 alpha, std::vector<LevelShape> levels,
                                   const TuningTable* table)
    : opt_(policy.optimizations()),
      cache_bytes_(planned_cache_bytes(policy.optimizations(), device_l2_bytes)),
      n_(n),
      alpha_(alpha),
      levels_(std::move(levels)) {
  std::vector<KeySwitchShape> shapes;
  for (u32 l = 0; l < levels_.size(); ++l)
    shapes.push_back(key_switch_shape(l));
  // Without multi-poly caching nothing is planned by the cache: the model keeps DPOB (and output
  // chunking is off, ExecutionPolicy).
  const std::size_t model_cache = opt_.multi_poly_caching ? cache_bytes_ : 0;
  selection_ =
      select_dataflows(policy.key_switching(), shapes, model_cache, table, opt_.output_chunking);
}

KeySwitchShape KeySwitchPlanner::key_switch_shape(u32 level) const {
  const LevelShape& s = shape(level);
  return {s.limbs, s.digits, alpha_, n_};
}

const LevelDataflow& KeySwitchPlanner::dataflow(u32 level) const {
  shape(level);  // throws for a level that does not exist
  return selection_[level];
}

const LevelShape& KeySwitchPlanner::shape(u32 level) const {
  if (level >= levels_.size()) {
    throw LevelError("key-switch planner: level " + std::to_string(level) +
                     " does not exist (levels " + std::to_string(levels_.size()) + ")");
  }
  return levels_[level];
}

KeySwitchFootprint KeySwitchPlanner::footprint(u32 level) const {
  const LevelShape& s = shape(level);
  return key_switch_footprint(s.limbs, alpha_, s.digits, n_);
}

u32 KeySwitchPlanner::batch_size(std::size_t count, std::size_t per_item_bytes,
                                 std::size_t shared_bytes) const {
  if (count == 0) return 1;
  const auto clamp = [count](std::size_t b) {
    return static_cast<u32>(std::clamp<std::size_t>(b, 1, std::min<std::size_t>(count, 1u << 16)));
  };
  if (!opt_.multi_poly_caching) return 1;
  if (cache_bytes_ == 0 || per_item_bytes == 0) return clamp(count);
  const std::size_t room = cache_bytes_ > shared_bytes ? cache_bytes_ - shared_bytes : 0;
  return clamp(room / per_item_bytes);
}

u32 KeySwitchPlanner::mod_up_digit_groups(u32 level, std::size_t inputs) const {
  const LevelShape& s = shape(level);
  const std::size_t beta = s.digits;
  if (beta <= 1 || inputs == 0 || !opt_.multi_poly_caching) return 1;
  const std::size_t limb = std::size_t{n_} * sizeof(u32);
  const std::size_t shared = inputs * s.limbs * limb;                // INTT'd inputs
  const std::size_t per_digit = inputs * (s.limbs + alpha_) * limb;  // outputs
  const std::size_t fit = batch_size(beta, per_digit, shared);
  return static_cast<u32>((beta + fit - 1) / fit);
}

bool KeySwitchPlanner::output_chunked(u32 level) const {
  return is_chunked(dataflow(level).choice.dataflow);
}

ModUpSchedule KeySwitchPlanner::mod_up(u32 level, std::size_t inputs) const {
  ModUpSchedule m;
  if (opt_.multi_poly_caching) {
    m.digit_groups = mod_up_digit_groups(level, inputs);
  } else {
    m.digit_groups = std::max<u32>(shape(level).digits, 1);
    m.transform_per_group = true;
    m.input_by_input = true;
  }
  return m;
}

KeySwitchPlan KeySwitchPlanner::plan(u32 level, std::size_t switches, u32 batch) const {
  KeySwitchPlan p;
  p.batch = batch != 0 ? batch : batch_size(switches, footprint(level).per_switch());
  const std::size_t first = std::min<std::size_t>(p.batch, std::max<std::size_t>(switches, 1));
  p.mod_up = mod_up(level, first);
  const DataflowChoice& c = first == 1 ? dataflow(level).choice : dataflow(level).batched;
  p.dataflow = c.dataflow;
  p.chunks = c.chunks;
  p.streams = opt_.pipelining ? 2 : 1;
  p.mod_down_together = opt_.multi_poly_caching;
  p.issue = {opt_.fusion, opt_.multi_poly_caching};
  return p;
}

KeySwitchPlan KeySwitchPlanner::plan_hoisted(u32 level, std::size_t rotations) const {
  const KeySwitchFootprint f = footprint(level);
  KeySwitchPlan p;
  p.batch = batch_size(rotations, f.mod_down, f.hoisted);
  p.mod_up = mod_up(level, 1);  // the one shared input
  p.dataflow = dataflow(level).batched.dataflow;
  p.chunks = dataflow(level).batched.chunks;
  p.streams = opt_.pipelining ? 2 : 1;
  p.mod_down_together = opt_.multi_poly_caching;
  p.issue = {opt_.fusion, opt_.multi_poly_caching};
  return p;
}

KeySwitchSchedule KeySwitchPlanner::schedule(const KeySwitchWork& w) const {
  KeySwitchSchedule s;
  s.base = plan(w.level, std::max<std::size_t>(w.switches, 1));
  if (w.switches == 0) return s;
  if (w.finish_only) {  // ModDowns of extended pairs, in the batches of as many switches
    const std::size_t size = w.batch != 0 ? w.batch : s.base.batch;
    for (std::size_t first = 0; first < w.switches; first += size)
      s.batches.push_back({first, std::min(size, w.switches - first), s.base});
    return s;
  }
  const bool hoisted = w.shared_input;
  // Hoisted rotations left extended run in one KeyMult pass over all of them.
  const std::size_t size =
      w.batch != 0 ? w.batch
      : hoisted    ? (w.finish == KeySwitchFinish::kExtended ? w.switches
                                                             : plan_hoisted(w.level, w.switches).batch)
                   : plan(w.level, w.switches).batch;
  for (std::size_t first = 0; first < w.switches; first += size) {
    const std::size_t count = std::min(size, w.switches - first);
    KeySwitchPlan p =
        hoisted ? plan_hoisted(w.level, count) : plan(w.level, count, static_cast<u32>(count));
    p.batch = static_cast<u32>(count);
    if (w.galois && !hoisted) {  // read through Galois elements: the batched dataflow
      p.dataflow = dataflow(w.level).batched.dataflow;
      p.chunks = dataflow(w.level).batched.chunks;
    } else if (w.dataflow && !w.galois && !hoisted) {
      p.dataflow = w.dataflow->dataflow;
      p.chunks = w.dataflow->chunks;
    }
    // A shared key read once for the batch, unless pipelining splits KeyMult into its parts.
    p.shared_key_pass = opt_.multi_poly_caching && w.shared_key && count > 1 &&
                        p.dataflow == Dataflow::kDPOB &&
                        !(w.finish == KeySwitchFinish::kModDown && p.streams > 1);
    s.batches.push_back({first, count, p});
  }
  return s;
}

WorkLanes plan_work_lanes(const ExecutionPolicy& policy, std::size_t items, bool in_fork) {
  if (policy.pipelining() && !in_fork && items >= 2) return WorkLanes::kTwoStreams;
  if (policy.multi_poly_caching()) return WorkLanes::kBatched;
  return WorkLanes::kInOrder;
}

}  // namespace theo
