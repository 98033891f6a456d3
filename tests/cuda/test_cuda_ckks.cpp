// Scheme-level bit-exactness: keygen, encryption and the evaluator ops with fixed seeds on a CPU
// Context and on a CUDA Context must give identical words (compared op by op through hashes of
// every limb word), and the CUDA result must decrypt correctly.

#include <map>
#include <optional>
#include <string>

#include "ckks/ckks_test_util.h"
#include "theo/ring/automorphism.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

std::vector<Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.9, phase + 0.37 * static_cast<double>(i));
  return v;
}

ContextPtr context_on(const ParameterSet& p, BackendChoice b) {
  ContextOptions o;
  o.backend = b;
  o.allow_insecure = true;
  return Context::create(p, o);
}

Hashes run_pipeline(const ParameterSet& params, BackendChoice backend, double* mult_err) {
  const ContextPtr ctx = context_on(params, backend);
  KeyGenerator kg(ctx, seed_of(42));
  Hashes h;
  const SecretKey sk = kg.create_secret_key();
  h["sk"] = hash_poly(*ctx, sk.ntt());
  const PublicKey pk = kg.create_public_key(sk);
  h["pk"] = hash_poly(*ctx, pk.b(), hash_poly(*ctx, pk.a()));
  const RelinKey rlk = kg.create_relin_key(sk);
  u64 rh = 0;
  for (u32 k = 0; k < rlk.key().dnum(); ++k)
    rh = hash_poly(*ctx, rlk.key().b(k), hash_poly(*ctx, rlk.key().a(k), rh));
  h["rlk"] = rh;
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, -2, 5}, true);

  Encoder enc(ctx);
  Encryptor pk_enc(ctx, pk, seed_of(43));
  Encryptor sk_enc(ctx, sk, seed_of(44));
  const u32 top = ctx->default_encryption_level();
  const auto ma = fixed_slots(ctx->max_slots(), 0.1), mb = fixed_slots(ctx->max_slots(), 0.7);
  const Ciphertext a = pk_enc.encrypt(enc.encode(ma, top));
  const Ciphertext b = sk_enc.encrypt(enc.encode(mb, top));
  h["encrypt pk"] = hash_ct(*ctx, a);
  h["encrypt sk"] = hash_ct(*ctx, b);

  Evaluator ev(ctx);
  h["add"] = hash_ct(*ctx, ev.add(a, b));
  h["sub"] = hash_ct(*ctx, ev.sub(a, b));
  h["multiply_const"] = hash_ct(*ctx, ev.multiply_const(a, {0.5, -0.25}));
  h["multiply relin"] = hash_ct(*ctx, ev.multiply(a, b, rlk));
  h["rescale"] = hash_ct(*ctx, ev.rescale(ev.multiply_const(a, 2.0)));
  const Ciphertext ab = ev.multiply_relin_rescale(a, b, rlk);
  h["multiply_relin_rescale"] = hash_ct(*ctx, ab);
  h["rotate"] = hash_ct(*ctx, ev.rotate(a, 1, gk));
  h["rotate 5"] = hash_ct(*ctx, ev.rotate(ab, 5, gk));
  h["conjugate"] = hash_ct(*ctx, ev.conjugate(a, gk));
  const auto hoisted = ev.rotate_hoisted(a, {1, -2}, gk);
  h["rotate_hoisted"] = hash_ct(*ctx, hoisted[1]);
  h["multiply_monomial"] = hash_ct(*ctx, ev.multiply_monomial(a, 3));

  Decryptor dec(ctx, sk);
  const auto got = enc.decode(dec.decrypt(ab));
  std::vector<Cplx> want(ma.size());
  for (std::size_t i = 0; i < ma.size(); ++i)
    want[i] = ma[i] * mb[i];
  *mult_err = max_abs_error(got, want);
  return h;
}

void compare(const ParameterSet& p, const char* what) {
  double cpu_err = 0, gpu_err = 0;
  const Hashes cpu = run_pipeline(p, BackendChoice::kCpu, &cpu_err);
  const Hashes gpu = run_pipeline(p, BackendChoice::kCuda, &gpu_err);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (const auto& [op, hash] : cpu) {
    EXPECT_EQ(hash, gpu.at(op)) << what << ": " << op << " differs between CPU and CUDA";
    std::printf("[cpu=cuda] %-8s %-24s %016llx %s\n", what, op.c_str(),
                static_cast<unsigned long long>(hash), hash == gpu.at(op) ? "same" : "DIFFERENT");
  }
  EXPECT_EQ(cpu_err, gpu_err);
  EXPECT_LT(gpu_err, 1e-4) << what << ": HMult + rescale on CUDA decrypts wrongly";
  std::printf("[cpu=cuda] %s multiply_relin_rescale max error %.3g\n", what, gpu_err);
}

TEST(CudaCkks, SameSeedsSameWordsN12) {
  compare(generated_params(12, 4), "N=2^12");
}
TEST(CudaCkks, SameSeedsSameWordsN14) {
  compare(generated_params(14, 8), "N=2^14");
}

}  // namespace
}  // namespace theo::test
