#pragma once
// The bootparam_40 Context and keys the scheme-level benchmark cases share (scheme_cases.cpp,
// graph_cases.cpp): built once per backend kind, on first use, outside any timed region; and the
// helpers of the cases that build their own (graph_cases.cpp, model_mechanisms.cpp).

#include <map>
#include <memory>

#include "theo/theodosian.h"

namespace theo::bench {

inline constexpr int kRotation = 1234;  // the anchor's HRot
inline constexpr int kHoistedRots = 8;  // rotations 1..8 share one ModUp

struct SchemeEnv {
  ContextPtr ctx;
  std::unique_ptr<Evaluator> ev;
  std::unique_ptr<RelinKey> rlk;
  std::unique_ptr<GaloisKeys> gk;  // kRotation and 1..kHoistedRots
  std::unique_ptr<PublicKey> pk;
  std::unique_ptr<Encoder> enc;
};

SchemeEnv& scheme_env(BackendKind kind);

// ContextOptions of a benchmark Context on the backend of `kind`.
ContextOptions context_options(BackendKind kind);

// One Env per backend kind: made by `make` on first use (outside any timed region), then kept.
template <typename Env, typename Make>
Env& once_per_backend(BackendKind kind, Make&& make) {
  static std::map<BackendKind, Env> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  return cache.emplace(kind, make()).first->second;
}

// The highest level of `ctx` with at most `limbs` limbs (level 0 when none has so few).
u32 level_for(const Context& ctx, u32 limbs);

}  // namespace theo::bench
