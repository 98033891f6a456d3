#pragma once
// The bootparam_40 Context and keys the scheme-level benchmark cases share (scheme_cases.cpp,
// graph_cases.cpp): built once per backend kind, on first use, outside any timed region.

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

}  // namespace theo::bench
