// Determinism and bit-exactness at scheme level: with fixed seeds keygen, encryption and every
// evaluator op produce the same words (compared by hash) on the backend under test as on an
// independent CPU Context, and the product decrypts correctly; without seeds every run differs.
// Built for the CPU (two CPU Contexts) and as test_cuda_ckks for the GPU (tests/backend_test.h).

#include <map>
#include <optional>
#include <string>

#include "backend_test.h"
#include "ckks/ckks_test_util.h"
#include "theo/ring/automorphism.h"

namespace theo::test {
namespace {

using Hashes = std::map<std::string, u64>;

// Fixed message (no randomness besides the library's own PRNG).
std::vector<Cplx> fixed_slots(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.9, phase + 0.37 * static_cast<double>(i));
  return v;
}

ContextPtr context_on(const ParameterSet& p, BackendChoice b) {
  return Context::create(p, test_options(b));
}

// Every op hashed; the seeds derive from seed_tag (none: the library's own randomness).
// mult_err: the max slot error of the decrypted multiply_relin_rescale.
Hashes run_pipeline(const ParameterSet& params, BackendChoice backend,
                    std::optional<std::uint8_t> seed_tag, double* mult_err = nullptr) {
  const ContextPtr ctx = context_on(params, backend);
  KeyGenerator kg = seed_tag ? KeyGenerator(ctx, seed_of(*seed_tag)) : KeyGenerator(ctx);
  Hashes h;
  const SecretKey sk = kg.create_secret_key();
  h["sk"] = hash_poly(*ctx, sk.ntt());
  const PublicKey pk = kg.create_public_key(sk);
  h["pk"] = hash_poly(*ctx, pk.b(), hash_poly(*ctx, pk.a()));
  const RelinKey rlk = kg.create_relin_key(sk);
  u64 rh = 0;
  for (u32 k = 0; k < rlk.key().dnum(); ++k) {
    rh = hash_poly(*ctx, rlk.key().b(k), hash_poly(*ctx, rlk.key().a(k), rh));
  }
  h["rlk"] = rh;
  const GaloisKeys gk = kg.create_galois_keys(sk, {1, -2, 5}, true);
  const u32 g1 = galois_element_for_rotation(1, ctx->log_n());
  h["galois"] = hash_poly(*ctx, gk.find(g1)->b(0));

  Encoder enc(ctx);
  Encryptor pk_enc = seed_tag ? Encryptor(ctx, pk, seed_of(*seed_tag + 1)) : Encryptor(ctx, pk);
  Encryptor sk_enc = seed_tag ? Encryptor(ctx, sk, seed_of(*seed_tag + 2)) : Encryptor(ctx, sk);
  const u32 top = ctx->default_encryption_level();
  const auto ma = fixed_slots(ctx->max_slots(), 0.1), mb = fixed_slots(ctx->max_slots(), 0.7);
  const Ciphertext a = pk_enc.encrypt(enc.encode(ma, top));
  const Ciphertext b = sk_enc.encrypt(enc.encode(mb, top));
  h["encrypt pk"] = hash_ct(*ctx, a);
  h["encrypt sk"] = hash_ct(*ctx, b);

  Evaluator ev(ctx);
  h["add"] = hash_ct(*ctx, ev.add(a, b));
  h["sub"] = hash_ct(*ctx, ev.sub(a, b));
  h["negate"] = hash_ct(*ctx, ev.negate(a));
  h["add_const"] = hash_ct(*ctx, ev.add_const(a, {0.5, -0.25}));
  {
    // In place (Optimizations::inplace_constants, on in test_options): add_const's words.
    Ciphertext ai = ev.clone(a);
    ev.add_const_inplace(ai, {0.5, -0.25});
    h["add_const_inplace"] = hash_ct(*ctx, ai);
  }
  h["multiply_const"] = hash_ct(*ctx, ev.multiply_const(a, {0.5, -0.25}));
  h["multiply_plain"] = hash_ct(*ctx, ev.multiply_plain(a, enc.encode(fixed_slots(16, 0.3), top)));
  h["multiply"] = hash_ct(*ctx, ev.multiply(a, b));
  h["multiply relin"] = hash_ct(*ctx, ev.multiply(a, b, rlk));
  h["square"] = hash_ct(*ctx, ev.square(a, rlk));
  h["rescale"] = hash_ct(*ctx, ev.rescale(ev.multiply_const(a, 2.0)));
  const Ciphertext ab = ev.multiply_relin_rescale(a, b, rlk);
  h["multiply_relin_rescale"] = hash_ct(*ctx, ab);
  h["level_down"] = hash_ct(*ctx, ev.level_down(a, 1));
  h["rotate"] = hash_ct(*ctx, ev.rotate(a, 1, gk));
  h["rotate 5"] = hash_ct(*ctx, ev.rotate(ab, 5, gk));
  h["conjugate"] = hash_ct(*ctx, ev.conjugate(a, gk));
  const auto hoisted = ev.rotate_hoisted(a, {1, -2}, gk);
  h["rotate_hoisted"] = hash_ct(*ctx, hoisted[1]);
  h["multiply_monomial"] = hash_ct(*ctx, ev.multiply_monomial(a, 3));

  if (mult_err != nullptr) {
    Decryptor dec(ctx, sk);
    const auto got = enc.decode(dec.decrypt(ab));
    std::vector<Cplx> want(ma.size());
    for (std::size_t i = 0; i < ma.size(); ++i)
      want[i] = ma[i] * mb[i];
    *mult_err = max_abs_error(got, want);
  }
  return h;
}

// The sets each backend runs: the CPU a small one (CI time), the GPU also a larger one.
std::vector<std::pair<std::string, ParameterSet>> param_sets(BackendChoice backend) {
  std::vector<std::pair<std::string, ParameterSet>> sets = {{"N=2^12", generated_params(12, 4)}};
  if (backend != BackendChoice::kCpu) sets.emplace_back("N=2^14", generated_params(14, 8));
  return sets;
}

class Determinism : public OnBackend {};

// The backend under test against an independent CPU Context, seed for seed.
TEST_P(Determinism, SameSeedsGiveTheCpuWords) {
  const char* tag = on_cpu() ? "determinism" : "cpu=cuda";
  for (const auto& [what, params] : param_sets(backend())) {
    double cpu_err = 0, err = 0;
    const Hashes cpu = run_pipeline(params, BackendChoice::kCpu, 42, &cpu_err);
    const Hashes got = run_pipeline(params, backend(), 42, &err);
    ASSERT_EQ(cpu.size(), got.size());
    for (const auto& [op, hash] : cpu) {
      EXPECT_EQ(got.at(op), hash) << what << ": " << op << " differs from the CPU";
      std::printf("[%s] %-8s %-24s %016llx %s\n", tag, what.c_str(), op.c_str(),
                  static_cast<unsigned long long>(hash), hash == got.at(op) ? "same" : "DIFFERENT");
    }
    EXPECT_EQ(got.at("add_const_inplace"), got.at("add_const")) << what;
    EXPECT_EQ(err, cpu_err);
    EXPECT_LT(err, 1e-4) << what << ": HMult + rescale decrypts wrongly";
    std::printf("[%s] %s multiply_relin_rescale max error %.3g\n", tag, what.c_str(), err);
    // A different seed gives different keys.
    EXPECT_NE(run_pipeline(params, backend(), 43).at("sk"), got.at("sk"));
  }
}

TEST_P(Determinism, UnseededRunsDiffer) {
  const ParameterSet params = generated_params(12, 4);
  const Hashes first = run_pipeline(params, backend(), std::nullopt);
  const Hashes second = run_pipeline(params, backend(), std::nullopt);
  for (const char* op : {"sk", "pk", "rlk", "encrypt pk", "encrypt sk", "multiply relin"}) {
    EXPECT_NE(first.at(op), second.at(op)) << op;
  }
}

THEO_INSTANTIATE_ON_BACKEND(Determinism);

}  // namespace
}  // namespace theo::test
