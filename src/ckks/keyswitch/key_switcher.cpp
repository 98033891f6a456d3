// KeySwitcher (theo/ckks/key_switcher.h): the planner's plan for each batch, run by its dataflow.

#include "theo/ckks/key_switcher.h"

#include <algorithm>
#include <string>

#include "ckks/keyswitch/dataflows.h"
#include "theo/errors.h"

namespace theo {

namespace {

const Context& require_context(const std::shared_ptr<const Context>& ctx) {
  if (!ctx) throw ContextError("KeySwitcher: the Context is null");
  return *ctx;
}

void require_counts(const char* op, std::size_t inputs, std::span<const SwitchingKey* const> keys,
                    std::size_t out0, std::size_t out1) {
  if (keys.size() != inputs || out0 != inputs || out1 != inputs) {
    throw ParameterError(std::string("KeySwitcher::") + op +
                         ": one key and one output pair per input are needed (inputs " +
                         std::to_string(inputs) + ", keys " + std::to_string(keys.size()) +
                         ", outputs " + std::to_string(out0) + " and " + std::to_string(out1) +
                         ")");
  }
  for (const SwitchingKey* k : keys)
    if (k == nullptr) throw ParameterError(std::string("KeySwitcher::") + op + ": a key is null");
}

}  // namespace

KeySwitcher::KeySwitcher(std::shared_ptr<const Context> ctx)
    : ctx_(std::move(ctx)), stages_(require_context(ctx_)) {}

void KeySwitcher::switch_key(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef out0,
                             PolyRef out1) const {
  const ConstPolyRef in[] = {d};
  const SwitchingKey* const keys[] = {&key};
  const PolyRef o0[] = {out0}, o1[] = {out1};
  switch_keys(in, keys, level, o0, o1);
}

void KeySwitcher::switch_keys(std::span<const ConstPolyRef> d,
                              std::span<const SwitchingKey* const> keys, u32 level,
                              std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                              u32 batch) const {
  KeySwitchPlan plan = planner().plan(level, d.size(), batch);
  plan.dataflow = Dataflow::kAuto;  // each batch as the planner plans it
  switch_keys(d, keys, level, out0, out1, plan);
}

void KeySwitcher::switch_keys(std::span<const ConstPolyRef> d,
                              std::span<const SwitchingKey* const> keys, u32 level,
                              std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                              const KeySwitchPlan& plan) const {
  require_counts("switch_keys", d.size(), keys, out0.size(), out1.size());
  const std::size_t b = std::max<u32>(plan.batch, 1);
  for (std::size_t start = 0; start < d.size(); start += b) {
    const std::size_t count = std::min(b, d.size() - start);
    const KeySwitchPlan p = plan.dataflow == Dataflow::kAuto
                                ? planner().plan(level, count, static_cast<u32>(count))
                                : plan;
    const keyswitch::Batch batch{level, d.subspan(start, count), keys.subspan(start, count),
                                 out0.subspan(start, count), out1.subspan(start, count)};
    keyswitch::run_dataflow(stages_, p, batch);
  }
}

void KeySwitcher::extend(ConstPolyRef d, u32 level, const SwitchingKey& key, PolyRef ext0,
                         PolyRef ext1, ConstPolyRef a0, ConstPolyRef a1,
                         std::span<const u32> s) const {
  keyswitch::extend(stages_, planner().plan(level, 1, 1), {level, d, &key, ext0, ext1, a0, a1, s},
                    {});
}

std::vector<ModUpDigits> KeySwitcher::mod_up(std::span<const ConstPolyRef> inputs,
                                             u32 level) const {
  return stages_.mod_up(inputs, level, planner().mod_up(level, inputs.size()));
}

ModUpDigits KeySwitcher::mod_up(ConstPolyRef input, u32 level) const {
  const ConstPolyRef one[] = {input};
  return std::move(mod_up(one, level).front());
}

void KeySwitcher::switch_keys_hoisted(const ModUpDigits& up, std::span<const u32> galois,
                                      std::span<const SwitchingKey* const> keys,
                                      std::span<const PolyRef> out0,
                                      std::span<const PolyRef> out1) const {
  require_counts("switch_keys_hoisted", galois.size(), keys, out0.size(), out1.size());
  for (const u32 g : galois) {
    if (g == 1)
      throw ParameterError(
          "KeySwitcher::switch_keys_hoisted: galois element 1 needs no key switch");
  }
  if (galois.empty()) return;
  const LevelData& lv = ctx_->level(up.level);
  if (up.digits.size() != lv.digits.size()) {
    throw ParameterError("KeySwitcher::switch_keys_hoisted: digit count does not match level " +
                         std::to_string(up.level));
  }
  const KeySwitchPlan plan = planner().plan_hoisted(up.level, galois.size());
  std::vector<ConstPolyRef> shared;
  for (const RnsPoly& d : up.digits)
    shared.push_back(d.cref());
  for (std::size_t start = 0; start < galois.size(); start += plan.batch) {
    const std::size_t count = std::min<std::size_t>(plan.batch, galois.size() - start);
    const std::vector<std::vector<ConstPolyRef>> digits(count, shared);
    keyswitch::key_mult_mod_down(stages_, plan, digits, keys.subspan(start, count), up.level,
                                 out0.subspan(start, count), out1.subspan(start, count),
                                 galois.subspan(start, count));
  }
}

void KeySwitcher::key_mult_mod_down(std::span<const std::vector<ConstPolyRef>> digits,
                                    std::span<const SwitchingKey* const> keys, u32 level,
                                    std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                                    std::span<const u32> galois) const {
  keyswitch::key_mult_mod_down(
      stages_, planner().plan(level, digits.size(), static_cast<u32>(digits.size())), digits, keys,
      level, out0, out1, galois);
}

void KeySwitcher::mod_down(std::span<const PolyRef> in, std::span<const PolyRef> out,
                           u32 level) const {
  keyswitch::mod_down(stages_, planner().plan(level, in.size()), in, out, level);
}

}  // namespace theo
