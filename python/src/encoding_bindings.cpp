// Bindings of the Encoder, Encryptor and Decryptor.

#include "bindings.h"

namespace theopy {

void bind_encoding(nb::module_& m) {
  // ---- Encoder -------------------------------------------------------------------------------
  nb::class_<WEncoder> encoder(
      m, "Encoder",
      "CKKS encoding through the canonical embedding: numpy float64/complex128 vectors <-> "
      "Plaintexts. n values are padded to the next power of two (at most N/2 slots).");
  encoder
      .def(
          "__init__", [](WEncoder* self, const WContext& ctx) { new (self) WEncoder{ctx.s}; },
          "context"_a, "An encoder for `context`.")
      .def(
          "decode",
          [](const WEncoder& e, const WPlaintext& pt, std::optional<bool> real) {
            return decode_to_numpy(*e.s, pt.pt, real.value_or(pt.real));
          },
          "plaintext"_a, "real"_a = nb::none(),
          nb::sig("def decode(self, plaintext: Plaintext, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decodes to float64 (real) or complex128 values (default: plaintext.is_real).");
  def_encode(encoder,
             "Encodes a 1-D array-like of real or complex values at `level` (default: the "
             "context's default encryption level) and `scale` (default: the level's Delta). "
             "float64/complex128 contiguous arrays are read in place.");

  // ---- Encryptor / Decryptor -----------------------------------------------------------------
  nb::class_<WEncryptor>(
      m, "Encryptor",
      "Encrypts with a public key, or with a secret key (secret-key ciphertexts serialize at "
      "half the size). Unseeded instances draw randomness from the OS.")
      .def(
          "__init__",
          [](WEncryptor* self, const WContext& ctx, nb::handle key, nb::handle seed) {
            std::optional<theo::Prng::Seed> sd;
            if (!seed.is_none()) sd = to_seed(seed, "Encryptor");
            std::shared_ptr<const theo::PublicKey> pk;
            std::shared_ptr<const theo::SecretKey> sk;
            std::unique_ptr<theo::Encryptor> enc;
            if (nb::isinstance<WPublicKey>(key)) {
              pk = nb::cast<const WPublicKey&>(key).k;
              enc = sd ? std::make_unique<theo::Encryptor>(ctx.s->ctx, *pk, *sd)
                       : std::make_unique<theo::Encryptor>(ctx.s->ctx, *pk);
            } else if (nb::isinstance<WSecretKey>(key)) {
              sk = nb::cast<const WSecretKey&>(key).k;
              enc = sd ? std::make_unique<theo::Encryptor>(ctx.s->ctx, *sk, *sd)
                       : std::make_unique<theo::Encryptor>(ctx.s->ctx, *sk);
            } else {
              throw nb::type_error("Encryptor: key must be a PublicKey or a SecretKey");
            }
            new (self) WEncryptor{ctx.s, std::move(pk), std::move(sk), std::move(enc), {}};
          },
          "context"_a, "key"_a, "seed"_a = nb::none(),
          nb::sig("def __init__(self, context: Context, key: PublicKey | SecretKey, "
                  "seed: bytes | int | None = None) -> None"),
          "An encryptor with a public key or a secret key; seed: deterministic encryption "
          "(tests only).")
      .def_prop_ro(
          "is_secret_key_mode", [](const WEncryptor& e) { return e.sk != nullptr; },
          "True when encrypting with the secret key.")
      .def(
          "encrypt",
          [](WEncryptor& e, nb::handle values, std::optional<u32> level,
             std::optional<double> scale) {
            if (nb::isinstance<WPlaintext>(values)) {
              if (level || scale) {
                throw theo::ParameterError(
                    "encrypt: level and scale apply to values, not to a Plaintext (it is "
                    "encrypted at its own level and scale)");
              }
              auto& p = nb::cast<WPlaintext&>(values);
              return run_ct(e.s, p.real, [&] {
                std::lock_guard<std::mutex> lock(e.mu);
                return e.enc->encrypt(p.pt);
              });
            }
            WPlaintext p = encode_values(e.s, values, level, scale);
            return run_ct(e.s, p.real, [&] {
              std::lock_guard<std::mutex> lock(e.mu);
              return e.enc->encrypt(p.pt);
            });
          },
          "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(),
          nb::sig("def encrypt(self, values: Plaintext | numpy.typing.ArrayLike, "
                  "level: int | None = None, scale: float | None = None) -> Ciphertext"),
          "Encrypts a Plaintext (at its level and scale) or encodes and encrypts slot values at "
          "`level` (default: the default encryption level) and `scale` (default: Delta_level).")
      .def(
          "encrypt_zero",
          [](WEncryptor& e, std::optional<u32> level) {
            const u32 lvl = level.value_or(e.s->ctx->default_encryption_level());
            return run_ct(e.s, true, [&] {
              std::lock_guard<std::mutex> lock(e.mu);
              return e.enc->encrypt_zero(lvl);
            });
          },
          "level"_a = nb::none(), "An encryption of zero at `level` (scale Delta_level).");

  nb::class_<WDecryptor>(m, "Decryptor", "Decrypts with the secret key.")
      .def(
          "__init__",
          [](WDecryptor* self, const WContext& ctx, const WSecretKey& sk) {
            new (self)
                WDecryptor{ctx.s, sk.k, std::make_unique<theo::Decryptor>(ctx.s->ctx, *sk.k)};
          },
          "context"_a, "secret_key"_a, "A decryptor for `context` with `secret_key`.")
      .def(
          "decrypt",
          [](const WDecryptor& d, const WCiphertext& c, std::optional<bool> real) {
            theo::Plaintext pt;
            {
              nb::gil_scoped_release release;
              pt = d.dec->decrypt(c.ct);
            }
            return decode_to_numpy(*d.s, pt, real.value_or(c.real));
          },
          "ciphertext"_a, "real"_a = nb::none(),
          nb::sig("def decrypt(self, ciphertext: Ciphertext, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decrypts and decodes: a numpy array of ciphertext.slots values, float64 when real "
          "(default: ciphertext.is_real), else complex128.")
      .def(
          "decrypt_plaintext",
          [](const WDecryptor& d, const WCiphertext& c) {
            theo::Plaintext pt;
            {
              nb::gil_scoped_release release;
              pt = d.dec->decrypt(c.ct);
            }
            return WPlaintext{d.s, std::move(pt), c.real};
          },
          "ciphertext"_a, "Decrypts to a Plaintext (c0 + c1 s (+ c2 s^2)) without decoding.");
}

}  // namespace theopy
