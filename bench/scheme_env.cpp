#include "scheme_env.h"

#include <map>
#include <vector>

namespace theo::bench {

ContextOptions context_options(BackendKind kind) {
  ContextOptions o;
  o.backend = kind == BackendKind::kCuda ? BackendChoice::kCuda : BackendChoice::kCpu;
  return o;
}

u32 level_for(const Context& ctx, u32 limbs) {
  u32 best = 0;
  for (u32 l = 0; l <= ctx.max_level(); ++l)
    if (ctx.level(l).limbs <= limbs && ctx.level(l).limbs >= ctx.level(best).limbs) best = l;
  return best;
}

namespace {

SchemeEnv make_scheme_env(BackendKind kind) {
  SchemeEnv e;
  e.ctx = Context::create(load_preset("bootparam_40"), context_options(kind));
  KeyGenerator kg(e.ctx);
  const SecretKey sk = kg.create_secret_key();
  e.pk = std::make_unique<PublicKey>(kg.create_public_key(sk));
  e.rlk = std::make_unique<RelinKey>(kg.create_relin_key(sk));
  std::vector<int> rots{kRotation};
  for (int r = 1; r <= kHoistedRots; ++r)
    rots.push_back(r);
  e.gk = std::make_unique<GaloisKeys>(kg.create_galois_keys(sk, rots));
  e.ev = std::make_unique<Evaluator>(e.ctx);
  e.enc = std::make_unique<Encoder>(e.ctx);
  return e;
}

}  // namespace

SchemeEnv& scheme_env(BackendKind kind) {
  return once_per_backend<SchemeEnv>(kind, [&] { return make_scheme_env(kind); });
}

}  // namespace theo::bench
