#include "scheme_env.h"

#include <map>
#include <vector>

namespace theo::bench {

SchemeEnv& scheme_env(BackendKind kind) {
  static std::map<BackendKind, SchemeEnv> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  SchemeEnv e;
  ContextOptions o;
  o.backend = kind == BackendKind::kCuda ? BackendChoice::kCuda : BackendChoice::kCpu;
  e.ctx = Context::create(load_preset("bootparam_40"), o);
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
  return cache.emplace(kind, std::move(e)).first->second;
}

}  // namespace theo::bench
