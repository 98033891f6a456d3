// KeySwitcher (theo/ckks/key_switcher.h): a request checked, planned once, and run batch by batch.

#include "theo/ckks/key_switcher.h"

#include <algorithm>
#include <string>

#include "ckks/keyswitch/dataflows.h"
#include "theo/errors.h"

namespace theo {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw ParameterError("KeySwitcher::run: " + what);
}

// A span of one entry per switch, or (when `shared` may be) one for all, or (when it may be
// empty) none.
void require_count(const char* what, std::size_t got, std::size_t want, bool shared_ok,
                   bool empty_ok) {
  if (got == want || (shared_ok && got == 1) || (empty_ok && got == 0)) return;
  fail(std::string(what) + ": " + std::to_string(got) + " given for " + std::to_string(want) +
       " switches (one per switch" + (shared_ok ? ", or one for all" : "") +
       (empty_ok ? ", or none" : "") + ")");
}

void require_bases(const char* what, std::span<const PolyRef> polys, const Basis& basis,
                   const char* over) {
  for (const PolyRef& p : polys)
    if (!(p.basis == basis)) fail(std::string(what) + " are not over " + over);
}

// Every check of a request that the stages do not make themselves.
void check(const Context& ctx, const KeySwitchRequest& r) {
  const LevelData& lv = ctx.level(r.level);  // LevelError for a level that does not exist
  const bool finish_only = !r.extended.empty();
  const std::size_t n = finish_only ? r.out0.size() : r.keys.size();
  if (n == 0 && r.out0.empty() && r.out1.empty()) return;  // nothing to switch
  if (finish_only && !r.inputs.empty()) fail("give inputs or extended pairs, not both");
  if (finish_only && (!r.keys.empty() || !r.galois.empty() || !r.add0.empty()))
    fail("extended pairs only finish: no keys, Galois elements or terms");
  if (finish_only && r.finish == KeySwitchFinish::kExtended)
    fail("extended pairs need a ModDown finish");
  if (finish_only && r.extended.size() != 2 * n)
    fail("two extended polys (c0, c1) per output pair are needed");
  if (!finish_only) require_count("inputs", r.inputs.size(), n, true, false);
  require_count("out0", r.out0.size(), n, false, false);
  require_count("out1", r.out1.size(), n, false, false);
  require_count("Galois elements", r.galois.size(), n, false, true);
  require_count("add0", r.add0.size(), n, true, true);
  for (const SwitchingKey* k : r.keys)
    if (k == nullptr) fail("a key is null");
  for (const u32 g : r.galois)
    if (g <= 1 || g % 2 == 0)
      fail("Galois element " + std::to_string(g) + " is not an automorphism that needs a switch");
  if (r.galois.empty()) {
    if (r.add1.size() != r.add0.size()) fail("add1 needs one poly per add0 poly");
    if (!r.add0.empty() && r.scale.size() != lv.limbs)
      fail("the terms need one scale constant per limb of level " + std::to_string(r.level));
  } else if (!r.add1.empty() || !r.scale.empty()) {
    fail("with Galois elements the term is add0 alone, read through phi_g (no add1, no scale)");
  }
  if (r.finish == KeySwitchFinish::kModDownRescale && r.level == 0)
    throw LevelError("KeySwitcher::run: ModDown + rescale at level 0: no level below it");
  const std::string level = std::to_string(r.level);
  switch (r.finish) {
    case KeySwitchFinish::kModDown:
      require_bases("outputs", r.out0, lv.q_basis, ("Q_l of level " + level).c_str());
      require_bases("outputs", r.out1, lv.q_basis, ("Q_l of level " + level).c_str());
      break;
    case KeySwitchFinish::kModDownRescale: {
      const Basis& below = ctx.level(r.level - 1).q_basis;
      require_bases("outputs", r.out0, below, ("Q of the level below " + level).c_str());
      require_bases("outputs", r.out1, below, ("Q of the level below " + level).c_str());
      break;
    }
    case KeySwitchFinish::kExtended:
      require_bases("outputs", r.out0, lv.pq_basis, ("Q_l u P of level " + level).c_str());
      require_bases("outputs", r.out1, lv.pq_basis, ("Q_l u P of level " + level).c_str());
      break;
  }
  require_bases("extended pairs", r.extended, lv.pq_basis, ("Q_l u P of level " + level).c_str());
}

KeySwitchWork work_of(const KeySwitchRequest& r) {
  KeySwitchWork w;
  w.level = r.level;
  w.finish_only = !r.extended.empty();
  w.switches = w.finish_only ? r.out0.size() : r.keys.size();
  w.shared_input = r.inputs.size() == 1 && w.switches > 1;
  w.galois = !r.galois.empty();
  w.shared_key = !r.keys.empty() && std::all_of(r.keys.begin(), r.keys.end(),
                                                [&](const auto* k) { return k == r.keys.front(); });
  w.finish = r.finish;
  w.batch = r.batch;
  w.dataflow = r.dataflow;
  return w;
}

// The part of a span that belongs to one batch: per switch, shared, or none.
template <typename T>
std::span<const T> part_of(std::span<const T> s, const ScheduledBatch& b, std::size_t switches) {
  if (s.size() != switches || (s.size() == 1 && switches > 1)) return s;
  return s.subspan(b.first, b.count);
}

}  // namespace

KeySwitcher::KeySwitcher(std::shared_ptr<const Context> ctx)
    : ctx_(ctx ? std::move(ctx) : throw ContextError("KeySwitcher: the Context is null")) {}

void KeySwitcher::switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                             PolyRef out1) const {
  const ConstPolyRef in[] = {d};
  const SwitchingKey* const keys[] = {&key};
  const PolyRef o0[] = {out0}, o1[] = {out1};
  run({.level = level, .inputs = in, .keys = keys, .out0 = o0, .out1 = o1});
}

KeySwitchSchedule KeySwitcher::plan(const KeySwitchRequest& request) const {
  check(*ctx_, request);
  return ctx_->key_switch_planner().schedule(work_of(request));
}

void KeySwitcher::run(const KeySwitchRequest& r) const {
  const KeySwitchSchedule schedule = plan(r);
  const keyswitch::Stages st(*ctx_, schedule.base.issue);
  if (!r.extended.empty()) {
    for (const ScheduledBatch& b : schedule.batches)
      keyswitch::finish(st, b.plan, r.finish, r.extended.subspan(2 * b.first, 2 * b.count),
                        r.out0.subspan(b.first, b.count), r.out1.subspan(b.first, b.count),
                        r.level);
    return;
  }
  const std::size_t n = r.keys.size();
  for (const ScheduledBatch& b : schedule.batches) {
    KeySwitchRequest s = r;
    s.inputs = part_of(r.inputs, b, n);
    s.keys = r.keys.subspan(b.first, b.count);
    s.galois = part_of(r.galois, b, n);
    s.add0 = part_of(r.add0, b, n);
    s.add1 = part_of(r.add1, b, n);
    s.out0 = r.out0.subspan(b.first, b.count);
    s.out1 = r.out1.subspan(b.first, b.count);
    keyswitch::run_batch(st, b.plan, s);
  }
}

}  // namespace theo
