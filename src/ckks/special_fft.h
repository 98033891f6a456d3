#pragma once
// The FFT of the CKKS canonical embedding restricted to the rotation group <5>.
//
// For n slots (a power of two <= N/2) and xi = exp(2 pi i / 4n):
//   forward:  z_j = sum_{k<n} u_k xi^(5^j k),  j < n      (decoding)
//   inverse:  u = forward^-1(z)                           (encoding)
// where u_k = a_k + i a_{k+n} packs the 2n real coefficients of the message in the subring of
// X^(N/2n). Radix 2: xi^(5^(j + n/2)) = -xi^(5^j), so each stage is a butterfly with twiddles
// xi_{4 len}^(5^j mod 4 len). Computed in long double.

#include <complex>
#include <vector>

#include "theo/common.h"

namespace theo::detail {

class SpecialFft {
 public:
  using Complex = std::complex<long double>;
  explicit SpecialFft(u32 log_n);
  void forward(std::vector<Complex>& v) const;
  void inverse(std::vector<Complex>& v) const;

 private:
  u32 two_n_;
  std::vector<Complex> roots_;  // exp(2 pi i k / 2N)
};

}  // namespace theo::detail
