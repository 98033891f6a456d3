#pragma once
// CKKS encoding through the canonical embedding: slot j of an n-slot vector is the evaluation of
// the message polynomial at zeta^(5^j), zeta = exp(i pi / N). Any power-of-two n <= N/2 works; a
// vector of n < N/2 slots lives in the subring of X^(N/2n) and is replicated N/2n times. The FFT
// runs in long double. The host reduces the rounded coefficients modulo only as many primes as
// their size needs; the backend spreads them to the other limbs with an exact BConv.

#include <complex>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"

namespace theo {

class Encoder {
 public:
  explicit Encoder(std::shared_ptr<const Context> ctx);
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  // values.size() is padded with zeros to the next power of two (the slot count, at most N/2).
  // scale: the level's default scale Delta_l unless given.
  Plaintext encode(std::span<const std::complex<double>> values, u32 level,
                   std::optional<long double> scale = std::nullopt) const;
  Plaintext encode(std::span<const double> values, u32 level,
                   std::optional<long double> scale = std::nullopt) const;
  // At the context's default encryption level.
  Plaintext encode(std::span<const std::complex<double>> values) const;
  Plaintext encode(std::span<const double> values) const;
  // encode() of every vector at one level and scale, with identical words: the host half (FFT,
  // rounding, residues) runs on all hardware threads, the backend half (upload, spread to the
  // other limbs, NTT) in order on the backend. For the many diagonals of linear transforms.
  std::vector<Plaintext> encode_batch(std::span<const std::vector<std::complex<double>>> values,
                                      u32 level, std::optional<long double> scale) const;

  // Exact CRT decoding: returns pt.slots() values.
  std::vector<std::complex<double>> decode(const Plaintext& pt) const;
  std::vector<double> decode_real(const Plaintext& pt) const;

  const std::shared_ptr<const Context>& context() const { return ctx_; }

 private:
  struct Tables;
  struct HostPlaintext;
  HostPlaintext encode_host(std::span<const std::complex<double>> values, u32 level,
                            long double delta) const;
  Plaintext encode_on_backend(const HostPlaintext& host, u32 level, long double delta) const;
  std::shared_ptr<const Context> ctx_;
  std::unique_ptr<Tables> tables_;
};

}  // namespace theo
