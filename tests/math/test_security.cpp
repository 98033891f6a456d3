// The 128-bit security table and check_security.

#include <gtest/gtest.h>

#include <string>

#include "theo/errors.h"
#include "theo/math/params.h"
#include "theo/math/security.h"

namespace {

using namespace theo;

TEST(Security, Table) {
  EXPECT_EQ(max_log2_pq_128(13), 218);
  EXPECT_EQ(max_log2_pq_128(14), 438);
  EXPECT_EQ(max_log2_pq_128(15), 881);
  EXPECT_EQ(max_log2_pq_128(16), 1747);
  EXPECT_EQ(max_log2_pq_128(17), 3523);
  for (u32 ln = 0; ln < 13; ++ln)
    EXPECT_EQ(max_log2_pq_128(ln), 0) << ln;
  EXPECT_EQ(max_log2_pq_128(18), 0);
}

TEST(Security, AnchorFiles) {
  struct Row {
    const char* name;
    bool secure;
  };
  // bootparam_30 / _35 exceed the bound by ~21 / ~24 bits; bootparam_40 (1745.4) and the 64-bit
  // file (1637.0) are within it.
  for (const Row r : {Row{"bootparam_30", false}, Row{"bootparam_35", false},
                      Row{"bootparam_40", true}, Row{"bootparam_40_64bit", true}}) {
    const ParameterSet p = load_preset(r.name);
    std::printf("%-20s N = 2^%u  log2(PQ) = %8.2f  bound %4.0f  %s\n", r.name, p.log_degree,
                p.log2_pq(), max_log2_pq_128(p.log_degree),
                p.log2_pq() <= max_log2_pq_128(p.log_degree) ? "secure" : "INSECURE");
    EXPECT_NO_THROW(check_security(p, true));
    if (r.secure) {
      EXPECT_NO_THROW(check_security(p, false)) << r.name;
    } else {
      EXPECT_THROW(check_security(p, false), SecurityError) << r.name;
    }
  }
}

TEST(Security, Message) {
  const ParameterSet p = load_preset("bootparam_35");
  try {
    check_security(p, false);
    FAIL();
  } catch (const SecurityError& e) {
    const std::string m = e.what();
    for (const char* part :
         {"N = 2^16", "1771.06", "1747", "over by 24.06 bits", "allow_insecure", "bootparam_35"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
  // SecurityError is a ParameterError.
  EXPECT_THROW(check_security(p, false), ParameterError);
}

TEST(Security, SmallRingIsNeverSecure) {
  ParameterSet p = load_preset("bootparam_40");
  p.log_degree = 12;
  try {
    check_security(p, false);
    FAIL();
  } catch (const SecurityError& e) {
    EXPECT_NE(std::string(e.what()).find("2^12"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allow_insecure"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_security(p, true));
}

TEST(Security, BoundIsInclusive) {
  ParameterSet p;
  p.log_degree = 13;
  p.main_primes = {u64{1} << 60, u64{1} << 60,
                   u64{1} << 60};       // log2 = 180 (not primes; only sizes matter)
  p.auxiliary_primes = {u64{1} << 38};  // 218 in all
  p.level_config = {{3, 0}};
  EXPECT_NO_THROW(check_security(p, false));
  p.auxiliary_primes = {u64{1} << 39};
  EXPECT_THROW(check_security(p, false), SecurityError);
}

}  // namespace
