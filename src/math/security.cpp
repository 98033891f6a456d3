// 128-bit security bound (HomomorphicEncryption.org standard, ternary secret, classical attacks),
// as tabulated by OpenFHE: the largest log2(PQ) that keeps N = 2^log_n at 128-bit security.

#include "theo/math/security.h"

#include <cstdio>
#include <string>

#include "theo/errors.h"
#include "theo/math/params.h"

namespace theo {

double max_log2_pq_128(u32 log_n) {
  switch (log_n) {
    case 13:
      return 218;
    case 14:
      return 438;
    case 15:
      return 881;
    case 16:
      return 1747;
    case 17:
      return 3523;
    default:
      return 0;  // below 2^13 nothing is 128-bit secure; above 2^17 not tabulated
  }
}

void check_security(const ParameterSet& p, bool allow_insecure) {
  const double bound = max_log2_pq_128(p.log_degree);
  const double log_pq = p.log2_pq();
  if (log_pq <= bound || allow_insecure) return;
  char buf[512];
  const std::string name =
      p.name.empty() ? std::string("parameter set") : "parameter set '" + p.name + "'";
  if (bound == 0) {
    std::snprintf(buf, sizeof buf,
                  "%s is not 128-bit secure: N = 2^%u (log_degree = %u) has no 128-bit secure "
                  "modulus (the HomomorphicEncryption.org table starts at N = 2^13), log2(PQ) = "
                  "%.2f, bound 0, over by %.2f bits. Pass allow_insecure = true to use it anyway "
                  "(tests only).",
                  name.c_str(), p.log_degree, p.log_degree, log_pq, log_pq);
  } else {
    std::snprintf(
        buf, sizeof buf,
        "%s is not 128-bit secure: N = 2^%u (log_degree = %u), log2(PQ) = %.2f exceeds "
        "the bound %.0f for a ternary secret (HomomorphicEncryption.org table), over by "
        "%.2f bits. Use fewer levels or auxiliary primes, or pass allow_insecure = true to "
        "use it anyway (tests only).",
        name.c_str(), p.log_degree, p.log_degree, log_pq, bound, log_pq - bound);
  }
  throw SecurityError(buf);
}

}  // namespace theo
