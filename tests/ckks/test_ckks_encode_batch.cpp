// Encoder: the host reduces coefficients modulo only the first few primes of a level and the
// backend spreads them to the other limbs with an exact BConv. The words must equal a direct
// reduction modulo every prime (the reference below), for every size of coefficient, and
// encode_batch must equal encode.

#include <cmath>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "ckks/rns_util.h"
#include "ckks/special_fft.h"

namespace theo::test {
namespace {

// encode() as it was: every limb reduced on the host.
std::vector<u32> reference_words(const Context& ctx, const std::vector<Cplx>& values, u32 level,
                                 long double delta) {
  const LevelData& lv = ctx.level(level);
  const u32 n = ctx.n();
  const u32 slots = static_cast<u32>(values.size());
  std::vector<detail::SpecialFft::Complex> u(slots);
  for (u32 i = 0; i < slots; ++i)
    u[i] = {values[i].real(), values[i].imag()};
  detail::SpecialFft(ctx.log_n()).inverse(u);
  const u32 gap = n / (2 * slots);
  std::vector<u32> host(static_cast<std::size_t>(lv.limbs) * n, 0);
  for (u32 l = 0; l < lv.limbs; ++l) {
    const u32 q = ctx.prime(lv.q_basis[l]);
    for (u32 k = 0; k < slots; ++k) {
      host[static_cast<std::size_t>(l) * n + k * gap] =
          detail::reduce_long_double(std::round(u[k].real() * delta), q);
      host[static_cast<std::size_t>(l) * n + (k + slots) * gap] =
          detail::reduce_long_double(std::round(u[k].imag() * delta), q);
    }
  }
  Backend& be = ctx.backend();
  RnsPoly p = be.make_poly(lv.q_basis);
  be.upload(host.data(), p.ref());
  const PolyRef refs[] = {p.ref()};
  be.ntt(refs);
  std::vector<u32> w(p.words());
  be.download(p.cref(), w.data());
  return w;
}

std::vector<u32> words(const Context& ctx, const Plaintext& pt) {
  std::vector<u32> w(pt.poly().words());
  ctx.backend().download(pt.poly().cref(), w.data());
  return w;
}

std::vector<Cplx> slots_of(std::size_t n, double phase) {
  std::vector<Cplx> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::polar(0.95, phase + 0.29 * static_cast<double>(i * i % 97));
  return v;
}

TEST(EncoderSpread, WordsEqualDirectReductionAtEveryCoefficientSize) {
  const auto ctx = make_context(generated_params(12, 8));
  const Encoder enc(ctx);
  const u32 top = ctx->max_level();
  const long double log2_q = ctx->level(top).log2_q;
  // From one source prime (2^20) to all of them (just below the modulus).
  for (const long double log2_scale : {20.0L, 40.0L, 80.0L, 150.0L, log2_q - 4}) {
    for (const std::size_t slots :
         {std::size_t{1}, std::size_t{8}, std::size_t{ctx->max_slots()}}) {
      const auto v = slots_of(slots, static_cast<double>(log2_scale));
      const long double scale = std::exp2(log2_scale);
      EXPECT_EQ(words(*ctx, enc.encode(v, top, scale)), reference_words(*ctx, v, top, scale))
          << "scale 2^" << static_cast<double>(log2_scale) << ", " << slots << " slots";
    }
  }
  // Level 0 (fewest limbs) and a zero vector.
  const auto v = slots_of(ctx->max_slots(), 1.0);
  EXPECT_EQ(words(*ctx, enc.encode(v, 0)), reference_words(*ctx, v, 0, ctx->default_scale(0)));
  const std::vector<Cplx> zero(16);
  EXPECT_EQ(words(*ctx, enc.encode(zero, top)),
            reference_words(*ctx, zero, top, ctx->default_scale(top)));
}

TEST(EncoderSpread, EncodeBatchEqualsEncode) {
  const auto ctx = make_context(generated_params(12, 6));
  const Encoder enc(ctx);
  std::vector<std::vector<Cplx>> values;
  for (u32 i = 0; i < 11; ++i)
    values.push_back(slots_of(i == 4 ? 32 : ctx->max_slots(), 0.5 * i));
  const u32 level = ctx->max_level() - 1;
  const long double scale = ctx->default_scale(level) * 0x1p35L;
  const std::vector<Plaintext> batch = enc.encode_batch(values, level, scale);
  ASSERT_EQ(batch.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Plaintext one = enc.encode(values[i], level, scale);
    EXPECT_EQ(words(*ctx, batch[i]), words(*ctx, one)) << "vector " << i;
    EXPECT_EQ(batch[i].slots(), one.slots());
    EXPECT_EQ(batch[i].level(), level);
    EXPECT_EQ(batch[i].scale(), scale);
  }
  EXPECT_TRUE(enc.encode_batch({}, level, scale).empty());
}

TEST(EncoderSpread, EncodeBatchRejectsBadInput) {
  const auto ctx = make_context(generated_params(12, 4));
  const Encoder enc(ctx);
  std::vector<std::vector<Cplx>> values(3, slots_of(8, 0.0));
  values[2][1] = {NAN, 0};
  EXPECT_THROW(enc.encode_batch(values, 1, std::nullopt), ParameterError);
  values[2] = std::vector<Cplx>(ctx->max_slots() + 1);
  EXPECT_THROW(enc.encode_batch(values, 1, std::nullopt), ParameterError);
  EXPECT_THROW(enc.encode_batch(values, 1, -1.0L), ParameterError);
}

}  // namespace
}  // namespace theo::test
