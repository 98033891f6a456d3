// N = 2^16 with the anchor's bootparam_40 (Delta = 2^40): encode, encrypt, HMult + rescale,
// rotations (plain and hoisted) and conjugation. bootparam_40 exceeds the 128-bit bound for its N
// (P*Q_max is sized for bootstrapping), so this test opts in explicitly. Labelled `slow`.

#include "ckks_test_util.h"

namespace theo::test {
namespace {

TEST(PrecisionN16, Bootparam40) {
  Env e(load_preset("bootparam_40"));
  const u32 log_n = e.ctx->log_n();
  ASSERT_EQ(log_n, 16u);
  const std::size_t n = e.ctx->max_slots();
  const u32 level = e.ctx->default_encryption_level();
  const auto x = random_slots(n);
  const auto y = random_slots(n);

  const Plaintext px = e.encoder.encode(x, level);
  EXPECT_LT(report("encode/decode", log_n, e.encoder.decode(px), x), -30);
  // Public-key encryption works over Q_l u P and divides by P, so its noise is one ModDown
  // rounding (~2^-24 here) instead of v e + e0 + e1 s (~2^-20); the secret-key form is ~2^-29.
  const Ciphertext cx_pk = e.encryptor.encrypt(px);
  EXPECT_LT(report("encrypt/decrypt (pk)", log_n, e.decrypt(cx_pk), x), -22);
  Encryptor sym(e.ctx, e.sk);
  const Ciphertext cx = sym.encrypt(px);
  EXPECT_LT(report("encrypt/decrypt (sk)", log_n, e.decrypt(cx), x), -25);

  const RelinKey rlk = e.keygen.create_relin_key(e.sk);
  std::vector<Cplx> xy(n);
  for (std::size_t i = 0; i < n; ++i)
    xy[i] = x[i] * y[i];
  const Ciphertext prod =
      e.evaluator.multiply_relin_rescale(cx, sym.encrypt(e.encoder.encode(y, level)), rlk);
  EXPECT_LT(std::abs(static_cast<double>(std::log2(prod.scale())) - 40.0), 0.1);
  EXPECT_LT(report("HMult+relin+rescale", log_n, e.decrypt(prod), xy), -20);
  const Ciphertext prod_pk = e.evaluator.multiply_relin_rescale(
      cx_pk, e.encryptor.encrypt(e.encoder.encode(y, level)), rlk);
  EXPECT_LT(report("HMult+relin+rescale (pk inputs)", log_n, e.decrypt(prod_pk), xy), -20);

  const std::vector<int> rotations = {1, -1, 1234};
  const GaloisKeys gk = e.keygen.create_galois_keys(e.sk, rotations, true);
  // Rotation error at Delta = 2^40 is bounded below by the ModDown rounding term times the dense
  // secret (~2^-24 here, with the exact ModDown); the 2^-25 bar is checked at scale 2^50.
  EXPECT_LT(report("rotate 1234, Delta 2^40", log_n, e.decrypt(e.evaluator.rotate(cx, 1234, gk)),
                   [&] {
                     std::vector<Cplx> v(n);
                     for (std::size_t i = 0; i < n; ++i)
                       v[i] = x[(i + 1234) % n];
                     return v;
                   }()),
            -22);
  const Ciphertext cs = sym.encrypt(e.encoder.encode(x, level, 0x1p50L));
  auto rotated = [&](int r) {
    std::vector<Cplx> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      v[i] = x[static_cast<std::size_t>((static_cast<i64>(i) + r + static_cast<i64>(n)) %
                                        static_cast<i64>(n))];
    }
    return v;
  };
  double worst = -1000;
  worst = std::max(worst, report("rotate 1234, scale 2^50", log_n,
                                 e.decrypt(e.evaluator.rotate(cs, 1234, gk)), rotated(1234)));
  const auto hoisted = e.evaluator.rotate_hoisted(cs, rotations, gk);
  for (std::size_t i = 0; i < rotations.size(); ++i) {
    worst = std::max(worst, report("rotate_hoisted, scale 2^50", log_n, e.decrypt(hoisted[i]),
                                   rotated(rotations[i])));
  }
  std::vector<Cplx> conj(n);
  for (std::size_t i = 0; i < n; ++i)
    conj[i] = std::conj(x[i]);
  worst = std::max(worst, report("conjugate, scale 2^50", log_n,
                                 e.decrypt(e.evaluator.conjugate(cs, gk)), conj));
  EXPECT_LT(worst, -25);
}

}  // namespace
}  // namespace theo::test
