// Container version 2 (docs/serialization.md): sections larger than a 256 KiB piece are hashed in
// pieces on several threads, with the same bytes for any thread count; a corrupted piece, a
// swapped pair of pieces and a version 1 object read as version 2 are refused; version 1 objects
// (the old tags) still load; ciphertexts split at the device (HostCiphertext) give the bytes and
// the words of to_bytes / load_ciphertext and every one of its checks.

#include <cstring>
#include <sstream>

#include "ckks/ckks_test_util.h"
#include "serialization_test_util.h"

namespace theo::test {
namespace {

using serial::get_u32;
using serial::reseal;
using serial::sections;
using serial::set_u32;

// N = 2^13 with 40 levels: a ciphertext polynomial at the top level is 41 limbs x 32 KiB = 1.3 MiB,
// two pieces; one at level 20 fits one piece.
struct Big {
  Env env{generated_params(13, 40)};
  u32 top = env.ctx->max_level();
  Ciphertext ct = env.encrypt(random_slots(env.ctx->n() / 2), top);
  std::vector<std::uint8_t> bytes = to_bytes(*env.ctx, ct);
};

template <typename F>
void expect_parameter_error(F&& f, const char* word) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << word;
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(SerializationPieces, SameBytesForAnyThreadCountAndRoundTrip) {
  Big b;
  const auto polys = sections(b.bytes);
  ASSERT_GE(polys.size(), 3u);
  ASSERT_GT(polys[1].size, u64{1} << 20) << "the test needs a section of several pieces";
  EXPECT_EQ(get_u32(b.bytes, serial::kOffVersion), 2u);
  for (const unsigned threads : {1u, 2u, 3u, 0u}) {
    SaveOptions so;
    so.threads = threads;
    EXPECT_EQ(to_bytes(*b.env.ctx, b.ct, so), b.bytes) << threads;
    std::vector<std::uint8_t> into(serialized_size(*b.env.ctx, b.ct, so));
    to_bytes(*b.env.ctx, b.ct, std::span<std::uint8_t>(into), so);
    EXPECT_EQ(into, b.bytes) << threads;
    std::ostringstream os;
    save(*b.env.ctx, b.ct, os, so);
    const std::string s = os.str();
    EXPECT_EQ(std::vector<std::uint8_t>(s.begin(), s.end()), b.bytes) << threads;
    LoadOptions lo;
    lo.threads = threads;
    expect_same_ct(*b.env.ctx,
                   load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(b.bytes), lo), b.ct);
    std::istringstream is(s);
    expect_same_ct(*b.env.ctx, load_ciphertext(b.env.ctx, is, lo), b.ct);
  }
  // The buffer must be exactly the object's size.
  std::vector<std::uint8_t> small(b.bytes.size() - 1);
  EXPECT_THROW(to_bytes(*b.env.ctx, b.ct, std::span<std::uint8_t>(small)), Error);
}

TEST(SerializationPieces, CorruptedOrSwappedPiecesAreRefused) {
  Big b;
  const auto polys = sections(b.bytes);
  const auto& c0 = polys[1];
  const auto load = [&](const std::vector<std::uint8_t>& x) {
    (void)load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(x));
  };
  // One bit in the second piece, from memory and from a stream.
  auto flipped = b.bytes;
  flipped[c0.body + (std::size_t{1} << 20) + 12345] ^= 0x10;
  expect_parameter_error([&] { load(flipped); }, "checksum mismatch in section 1");
  std::istringstream is(std::string(flipped.begin(), flipped.end()));
  expect_parameter_error([&] { (void)load_ciphertext(b.env.ctx, is); }, "checksum mismatch");
  // The first 4 KiB of the two pieces exchanged.
  auto swapped = b.bytes;
  std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(c0.body),
                   swapped.begin() + static_cast<std::ptrdiff_t>(c0.body + 4096),
                   swapped.begin() + static_cast<std::ptrdiff_t>(c0.body + (std::size_t{1} << 20)));
  expect_parameter_error([&] { load(swapped); }, "checksum mismatch in section 1");
}

TEST(SerializationPieces, ContainerVersions) {
  Big b;
  // Version 1 (one BLAKE2b over the body) still loads, to the same ciphertext.
  auto v1 = b.bytes;
  set_u32(v1, serial::kOffVersion, 1);
  reseal(v1);
  EXPECT_NE(v1, b.bytes);
  expect_same_ct(*b.env.ctx, load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(v1)), b.ct);
  // Version 1's tags under a version 2 header (or the reverse) do not pass.
  auto mixed = v1;
  set_u32(mixed, serial::kOffVersion, 2);
  crypto_generichash(mixed.data() + serial::kHeaderFields, 16, mixed.data(), serial::kHeaderFields,
                     nullptr, 0);
  expect_parameter_error(
      [&] { (void)load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(mixed)); },
      "checksum mismatch");
  // Versions this build does not read, named.
  for (const u32 v : {0u, 3u}) {
    auto other = b.bytes;
    set_u32(other, serial::kOffVersion, v);
    reseal(other);
    expect_parameter_error(
        [&] { (void)load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(other)); },
        ("container version " + std::to_string(v)).c_str());
  }
}

TEST(SerializationPieces, HostCiphertextIsTheSameFormSplitAtTheDevice) {
  Big b;
  const Context& ctx = *b.env.ctx;
  SaveOptions real;
  real.real_slots = true;
  for (const bool compact : {false, true}) {
    SaveOptions so = real;
    so.compact = compact;
    // A fresh secret-key ciphertext has a seed: compact stores it instead of c1.
    Encryptor sk_enc(b.env.ctx, b.env.sk);
    const Ciphertext ct =
        sk_enc.encrypt(b.env.encoder.encode(random_slots(ctx.n() / 2), b.top / 2));
    const HostCiphertext h = download(ctx, ct, so);
    EXPECT_EQ(h.c1_seed.has_value(), compact);
    const std::vector<std::uint8_t> want = to_bytes(ctx, ct, so);
    EXPECT_EQ(to_bytes(ctx, h), want);
    EXPECT_EQ(serialized_size(ctx, h), want.size());
    const HostCiphertext back = load_host_ciphertext(ctx, want);
    EXPECT_TRUE(back.real_slots);
    EXPECT_EQ(back.level, ct.level());
    EXPECT_EQ(to_bytes(ctx, back), want);
    expect_same_ct(ctx, upload(b.env.ctx, back), ct);
  }
  // Every check of load_ciphertext: a bad word (resealed, so only the word check can see it).
  const auto polys = sections(b.bytes);
  auto bad = b.bytes;
  set_u32(bad, polys[1].body + 4 * 7, 0xffffffffu);
  reseal(bad);
  expect_parameter_error([&] { (void)load_host_ciphertext(ctx, bad); }, "word 7 of limb 0");
  expect_parameter_error(
      [&] { (void)load_ciphertext(b.env.ctx, std::span<const std::uint8_t>(bad)); },
      "word 7 of limb 0");
  ASSERT_GT(b.bytes.size(), 100u);
  const std::vector<std::uint8_t> truncated(b.bytes.begin(), b.bytes.end() - 100);
  expect_parameter_error([&] { (void)load_host_ciphertext(ctx, truncated); }, "truncated");
  // Other parameters: ContextError from both halves.
  const auto other = make_context(generated_params(13, 39));
  EXPECT_THROW((void)load_host_ciphertext(*other, b.bytes), ContextError);
  EXPECT_THROW((void)upload(other, load_host_ciphertext(ctx, b.bytes)), ContextError);
}

}  // namespace
}  // namespace theo::test
