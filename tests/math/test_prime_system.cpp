// The 25-30 prime system generator and the per-level scales.
//
// The generated presets in presets/ are checked against the generator here; to regenerate them
// after a deliberate change run:  THEO_WRITE_PRESETS=1 ./test_prime_system
// --gtest_filter='*Presets*'

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "theo/errors.h"
#include "theo/math/params.h"
#include "theo/math/prime_system.h"
#include "theo/math/primes.h"
#include "theo/math/security.h"

namespace {

using namespace theo;
using ld = long double;

// log2 Delta_l from the primes, independently of level_log2_scales.
std::vector<ld> scales(const ParameterSet& p) {
  std::vector<ld> out;
  ld d = p.log_default_scale, prev = 0;
  for (u32 l = 0; l < p.level_config.size(); ++l) {
    ld q = 0;
    for (u32 i = 0; i < p.level_config[l][0]; ++i)
      q += std::log2(static_cast<ld>(p.main_primes[i]));
    for (u32 i = 0; i < p.level_config[l][1]; ++i)
      q += std::log2(static_cast<ld>(p.terminal_primes[i]));
    if (l) d = (d + q - prev) / 2;
    out.push_back(d);
    prev = q;
  }
  return out;
}

ld worst_deviation(const ParameterSet& p) {
  const auto sc = scales(p);
  ld w = 0;
  for (u32 l = 0; l <= p.default_encryption_level; ++l)
    w = std::max(w, std::abs(sc[l] - static_cast<ld>(p.log_default_scale)));
  return w;
}

void check_set(const ParameterSet& p, const PrimeSystemSpec& spec) {
  SCOPED_TRACE(p.name);
  EXPECT_NO_THROW(validate(p));
  EXPECT_EQ(p.log_degree, spec.log_n);
  EXPECT_EQ(p.log_default_scale, spec.log_scale);
  EXPECT_EQ(p.default_encryption_level, spec.levels);
  EXPECT_EQ(p.level_config.size(), spec.levels + 1 + spec.boot_levels);
  EXPECT_EQ(p.boot, spec.boot_levels > 0);
  // Scales within 0.1 bit at every non-bootstrapping level.
  const auto sc = scales(p);
  for (u32 l = 0; l <= spec.levels; ++l)
    EXPECT_NEAR(static_cast<double>(sc[l]), spec.log_scale, 0.1) << "level " << l;
  // Distinct primes, all NTT-friendly and < 2^31.
  std::set<u64> all;
  std::size_t count = 0;
  for (const auto* l : {&p.terminal_primes, &p.main_primes, &p.auxiliary_primes}) {
    for (u64 q : *l) {
      all.insert(q);
      ++count;
      EXPECT_LT(q, u64{1} << 31);
      EXPECT_EQ((q - 1) % (2 * u64{p.n()}), 0u);
    }
  }
  EXPECT_EQ(all.size(), count) << "duplicate primes";
  EXPECT_LE(p.terminal_primes.size(), 5u) << "the cycle uses at most 5 terminal primes";
  // dnum about 4 by default; P's primes just below 2^31.
  if (spec.alpha == 0) {
    EXPECT_LE(p.dnum(), 4u);
  }
  for (u64 q : p.auxiliary_primes)
    EXPECT_GT(q, u64{1} << 30);
  // With bootstrapping levels the top level holds every prime.
  if (spec.boot_levels) {
    EXPECT_EQ(p.limbs_at(p.max_level()), p.max_limbs());
  }
  EXPECT_EQ(parse_parameters(to_json(p)), p);
}

TEST(PrimeSystem, ScalesWithinATenthOfABit) {
  std::printf("   N  scale  T   M  alpha  log2(PQ)  worst dev (bits)\n");
  for (u32 log_n : {14u, 15u, 16u}) {
    for (u32 s : {30u, 35u, 40u, 45u, 50u}) {
      PrimeSystemSpec spec;
      spec.log_n = log_n;
      spec.log_scale = s;
      spec.levels = 12;
      const ParameterSet p = generate_prime_system(spec);
      check_set(p, spec);
      EXPECT_EQ(p.name, "gen_N" + std::to_string(log_n) + "_s" + std::to_string(s) + "_L12");
      std::printf("  2^%u  2^%u  %zu  %2zu  %2u  %8.2f  %.4f\n", log_n, s, p.terminal_primes.size(),
                  p.main_primes.size(), p.alpha(), p.log2_pq(),
                  static_cast<double>(worst_deviation(p)));
    }
  }
}

TEST(PrimeSystem, ManyLevelsAndBootstrapping) {
  for (u32 s : {30u, 35u, 40u, 45u, 50u}) {
    PrimeSystemSpec spec;
    spec.log_n = 16;
    spec.log_scale = s;
    spec.levels = 24;
    spec.boot_levels = 10;
    const ParameterSet p = generate_prime_system(spec);
    check_set(p, spec);
    EXPECT_EQ(p.num_cts_levels, 4u);
    EXPECT_EQ(p.num_stc_levels, 3u);
    EXPECT_EQ(p.sparse_hamming_weight, 32u);
    EXPECT_EQ(p.dense_hamming_weight, 1u << 15);
    // Double rescaling levels: two ~2^29 primes, 58 bits per level (default boot scale).
    for (u32 l = spec.levels + 1; l <= p.max_level(); ++l) {
      const double step = p.log2_q(l) - p.log2_q(l - 1);
      EXPECT_GT(step, 45) << "s=" << s << " level " << l;
      EXPECT_LT(step, 62) << "s=" << s << " level " << l;
    }
  }
}

TEST(PrimeSystem, EveryIntegerScaleFrom30To50) {
  for (u32 log_n : {13u, 16u}) {
    for (u32 s = 30; s <= 50; ++s) {
      PrimeSystemSpec spec;
      spec.log_n = log_n;
      spec.log_scale = s;
      spec.levels = 15;
      const ParameterSet p = generate_prime_system(spec);
      SCOPED_TRACE(p.comment);
      EXPECT_NO_THROW(validate(p));
      EXPECT_LE(worst_deviation(p), 0.1L) << "N=2^" << log_n << " s=" << s;
    }
  }
}

// The generator reproduces the anchor files' level structure (the Cheddar rescaling cycles).
TEST(PrimeSystem, ReproducesAnchorLevelConfigs) {
  struct Row {
    const char* name;
    u32 s, levels;
  };
  for (const Row r :
       {Row{"bootparam_30", 30, 22}, Row{"bootparam_35", 35, 19}, Row{"bootparam_40", 40, 16}}) {
    const ParameterSet a = load_preset(r.name);
    PrimeSystemSpec spec;
    spec.log_n = 16;
    spec.log_scale = r.s;
    spec.levels = r.levels;
    spec.boot_levels = a.max_level() - a.default_encryption_level;
    const ParameterSet p = generate_prime_system(spec);
    check_set(p, spec);
    EXPECT_EQ(p.level_config, a.level_config) << r.name;
    EXPECT_EQ(p.terminal_primes.size(), a.terminal_primes.size()) << r.name;
    EXPECT_EQ(p.main_primes.size(), a.main_primes.size()) << r.name;
    EXPECT_EQ(p.auxiliary_primes, a.auxiliary_primes) << r.name;  // 12 largest NTT primes < 2^31
    std::printf(
        "%s: generated log2(PQ) = %.2f (anchor %.2f), worst scale deviation %.4f (anchor %.4f)\n",
        r.name, p.log2_pq(), a.log2_pq(), static_cast<double>(worst_deviation(p)),
        static_cast<double>(worst_deviation(a)));
  }
}

// Informational: the anchor files' per-level scale under the library's definition.
TEST(PrimeSystem, AnchorScaleDeviations) {
  for (const char* name : {"bootparam_35", "bootparam_40", "bootparam_30"}) {
    const ParameterSet a = load_preset(name);
    const auto sc = level_log2_scales(a);
    const auto ref = scales(a);
    std::printf("%s: log2 Delta_l - %u for levels 0..%u:\n ", name, a.log_default_scale,
                a.default_encryption_level);
    for (u32 l = 0; l <= a.default_encryption_level; ++l) {
      EXPECT_NEAR(sc[l], static_cast<double>(ref[l]), 1e-9);
      std::printf(" %+.4f", sc[l] - a.log_default_scale);
    }
    std::printf("\n  worst %.4f bits\n", static_cast<double>(worst_deviation(a)));
  }
}

TEST(PrimeSystem, Options) {
  PrimeSystemSpec spec;
  spec.log_n = 15;
  spec.log_scale = 40;
  spec.levels = 8;
  spec.alpha = 5;
  spec.log_base = 60;
  spec.dense_hamming_weight = 192;
  ParameterSet p = generate_prime_system(spec);
  check_set(p, spec);
  EXPECT_EQ(p.alpha(), 5u);
  EXPECT_EQ(p.dense_hamming_weight, 192u);
  EXPECT_NEAR(p.log2_q(0), 60, 6);
  // Deterministic.
  EXPECT_EQ(generate_prime_system(spec), p);
  // Auxiliary primes: the largest NTT primes below 2^31 not used in Q.
  std::vector<u32> used;
  for (u64 q : p.main_primes)
    used.push_back(static_cast<u32>(q));
  for (u64 q : p.terminal_primes)
    used.push_back(static_cast<u32>(q));
  const auto aux = find_ntt_primes(15, 31, 5, used);
  EXPECT_EQ(p.auxiliary_primes, std::vector<u64>(aux.begin(), aux.end()));
  // Small rings for tests.
  for (u32 log_n : {10u, 12u, 13u}) {
    spec = {};
    spec.log_n = log_n;
    spec.log_scale = 35;
    spec.levels = 6;
    check_set(generate_prime_system(spec), spec);
  }
}

TEST(PrimeSystem, Errors) {
  // Each case changes the default spec; the error must name the word.
  struct Case {
    const char* word;
    std::function<void(PrimeSystemSpec&)> change;
  };
  const Case cases[] = {
      {"log_scale", [](PrimeSystemSpec& s) { s.log_scale = 29; }},
      {"log_scale", [](PrimeSystemSpec& s) { s.log_scale = 51; }},
      {"log_n", [](PrimeSystemSpec& s) { s.log_n = 9; }},
      {"log_n", [](PrimeSystemSpec& s) { s.log_n = 18; }},
      {"log_boot_scale",
       [](PrimeSystemSpec& s) {
         s.boot_levels = 5;
         s.log_boot_scale = 70;
       }},
      {"log_base", [](PrimeSystemSpec& s) { s.log_base = 30; }},
      // s = 35, 8 levels ends at [11, 0] with 5 terminal primes left: 3 levels needed to add them.
      {"boot_levels",
       [](PrimeSystemSpec& s) {
         s.log_scale = 35;
         s.levels = 8;
         s.boot_levels = 2;
       }},
  };
  for (const Case& c : cases) {
    PrimeSystemSpec spec;
    c.change(spec);
    try {
      generate_prime_system(spec);
      ADD_FAILURE() << "accepted, expected error naming " << c.word;
    } catch (const ParameterError& e) {
      EXPECT_NE(std::string(e.what()).find(c.word), std::string::npos) << e.what();
    }
  }
}

TEST(PrimeSystem, LevelScalesDefinition) {
  // Delta_0 = 2^s; a product at level l rescaled to l - 1 lands exactly on Delta_{l-1}.
  PrimeSystemSpec spec;
  spec.log_n = 14;
  spec.log_scale = 45;
  spec.levels = 8;
  const ParameterSet p = generate_prime_system(spec);
  const auto sc = level_log2_scales(p);
  EXPECT_EQ(sc[0], 45.0);
  for (u32 l = 1; l < sc.size(); ++l)
    EXPECT_NEAR(2 * sc[l] - (p.log2_q(l) - p.log2_q(l - 1)), sc[l - 1], 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Generated presets (presets/*.json): the generator's output for these specs, committed.

struct PresetSpec {
  const char* file;
  u32 log_n, s, levels, boot;
  bool secure;
  u32 cts = 0;         // num_cts_levels (0: the generator's choice)
  u32 boot_scale = 0;  // log_boot_scale (0: the generator's choice)
};
const PresetSpec kPresets[] = {
    {"n14_s35", 14, 35, 6, 0, true},
    {"n14_s40", 14, 40, 6, 0, true},
    {"n15_s35", 15, 35, 17, 0, true},
    {"n15_s40", 15, 40, 14, 0, true},
    {"n16_s35", 16, 35, 35, 0, true},
    {"n16_s40", 16, 40, 30, 0, true},
    {"n16_s35_boot", 16, 35, 18, 12, true},
    {"n16_s40_boot", 16, 40, 16, 12, true},
    {"test_n12", 12, 35, 6, 0, false},
    {"test_n13", 13, 40, 6, 0, false},
    // Theodosian's Table IV parameters (log2 PQ <= 1711, Delta = 2^35, h = 32, 15 levels per
    // bootstrapping), two ways: 11 bootstrapping levels at 2^58 with CoeffToSlot in 3, or 12 at
    // 2^55.
    {"n16_s35_t4", 16, 35, 18, 11, true, 3},
    {"n16_s35_t4_s55", 16, 35, 18, 12, true, 4, 55},
};

TEST(PrimeSystem, GeneratedPresets) {
  const bool write = std::getenv("THEO_WRITE_PRESETS") != nullptr;
  const std::filesystem::path dir = std::filesystem::path(THEO_SOURCE_DIR) / "presets";
  for (const auto& ps : kPresets) {
    PrimeSystemSpec spec;
    spec.log_n = ps.log_n;
    spec.log_scale = ps.s;
    spec.levels = ps.levels;
    spec.boot_levels = ps.boot;
    spec.num_cts_levels = ps.cts;
    spec.log_boot_scale = ps.boot_scale;
    ParameterSet p = generate_prime_system(spec);
    check_set(p, spec);
    p.name = ps.file;
    const double bound = max_log2_pq_128(ps.log_n);
    std::printf(
        "%-14s N = 2^%u  scale 2^%u  levels %2u + %2u boot  log2(PQ) %8.2f / %4.0f  %s  dev %.4f\n",
        ps.file, ps.log_n, ps.s, ps.levels, ps.boot, p.log2_pq(), bound,
        p.log2_pq() <= bound ? "secure" : "test-only", static_cast<double>(worst_deviation(p)));
    if (ps.secure) {
      EXPECT_NO_THROW(check_security(p, false)) << ps.file;
    } else {
      EXPECT_THROW(check_security(p, false), SecurityError) << ps.file;
      EXPECT_NO_THROW(check_security(p, true));
    }
    const auto path = dir / (std::string(ps.file) + ".json");
    if (write) {
      std::ofstream(path) << to_json(p);
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path))
        << path << " missing; regenerate with THEO_WRITE_PRESETS=1";
    EXPECT_EQ(load_parameter_file(path), p) << path << " differs from the generator's output";
    EXPECT_EQ(load_preset(ps.file), p);
  }
}

}  // namespace
