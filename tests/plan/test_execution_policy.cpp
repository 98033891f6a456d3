// ExecutionPolicy: the environment is read once, when a Context is made, and the Context's policy
// never changes afterwards; the request and the environment combine as docs/configuration.md says.

#include <gtest/gtest.h>
#include <stdlib.h>  // setenv, unsetenv

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ckks/ckks_test_util.h"
#include "theo/plan/execution_policy.h"

namespace theo::test {
namespace {

constexpr const char* kKnobs[] = {"THEO_BACKEND",
                                  "THEO_FUSION",
                                  "THEO_OUTPUT_CHUNKING",
                                  "THEO_GRAPHS",
                                  "THEO_PDL",
                                  "THEO_NTT_ROW_OTF",
                                  "THEO_NTT_ROWS_RESIDENT",
                                  "THEO_NTT_ROWS_PERSISTENT_TILES",
                                  "THEO_NTT_COLS_WIDE"};

// Unsets every knob now and again when the test ends, so no other test sees one.
class EnvironmentGuard {
 public:
  EnvironmentGuard() { clear(); }
  ~EnvironmentGuard() { clear(); }
  static void clear() {
    for (const char* k : kKnobs)
      ::unsetenv(k);
  }
};

ContextOptions cpu_options(const Optimizations& opt = Optimizations::all()) {
  ContextOptions o = test_options();
  o.threads = 2;
  o.optimizations = opt;
  return o;
}

TEST(ExecutionPolicy, EnvironmentIsReadAsDocumented) {
  const EnvironmentGuard guard;
  const Environment none = Environment::read();
  EXPECT_TRUE(none.backend.empty());
  EXPECT_TRUE(none.fusion && none.output_chunking && none.graphs && none.programmatic_launch);
  EXPECT_FALSE(none.ntt_row_otf.has_value());
  ::setenv("THEO_BACKEND", "cpu", 1);
  ::setenv("THEO_FUSION", "0", 1);
  ::setenv("THEO_GRAPHS", "1", 1);  // only "0" turns a mechanism off
  ::setenv("THEO_PDL", "0", 1);
  ::setenv("THEO_NTT_ROW_OTF", "3", 1);
  ::setenv("THEO_NTT_COLS_WIDE", "x", 1);  // not a number: the tuned default
  const Environment env = Environment::read();
  EXPECT_EQ(env.backend, "cpu");
  EXPECT_FALSE(env.fusion);
  EXPECT_TRUE(env.graphs);
  EXPECT_TRUE(env.output_chunking);
  EXPECT_FALSE(env.programmatic_launch);
  EXPECT_EQ(env.ntt_row_otf, 3u);
  EXPECT_FALSE(env.ntt_cols_wide.has_value());
}

TEST(ExecutionPolicy, RequestAndEnvironmentCombine) {
  ExecutionRequest r;
  r.threads = 3;
  r.optimizations.output_chunking = true;
  const ExecutionPolicy all = ExecutionPolicy::make(r, Environment::none());
  EXPECT_TRUE(all.fusion() && all.multi_poly_caching() && all.pipelining() && all.graphs());
  EXPECT_TRUE(all.output_chunking());
  EXPECT_EQ(all.backend().threads, 3u);
  EXPECT_TRUE(all.backend().tuning.programmatic_launch);

  Environment env;
  env.fusion = false;
  env.graphs = false;
  env.programmatic_launch = false;
  env.ntt_rows_resident = 1;
  env.backend = "cpu";
  const ExecutionPolicy off = ExecutionPolicy::make(r, env);
  EXPECT_FALSE(off.fusion());
  EXPECT_FALSE(off.graphs());
  EXPECT_FALSE(off.output_chunking());  // it needs fusion
  EXPECT_TRUE(off.multi_poly_caching());
  EXPECT_EQ(off.backend().auto_choice, "cpu");
  EXPECT_FALSE(off.backend().tuning.programmatic_launch);
  EXPECT_EQ(off.backend().tuning.ntt_rows_resident, 1u);
  EXPECT_FALSE(off.optimizations().graphs);

  ExecutionRequest no_graphs = r;
  no_graphs.graphs = false;  // ContextOptions::graphs
  EXPECT_FALSE(ExecutionPolicy::make(no_graphs, Environment::none()).graphs());
  ExecutionRequest no_caching = r;
  no_caching.optimizations.multi_poly_caching = false;
  EXPECT_FALSE(ExecutionPolicy::make(no_caching, Environment::none()).output_chunking());
}

// Every knob changed after the Context exists: the Context keeps what it was made with (its policy,
// its graphs, its backend), and only a Context made afterwards sees the change.
TEST(ExecutionPolicy, ChangingTheEnvironmentAfterCreationHasNoEffect) {
  const EnvironmentGuard guard;
  Optimizations opt = Optimizations::all();
  opt.output_chunking = true;
  const ContextPtr ctx = Context::create(generated_params(12, 3), cpu_options(opt));
  ContextOptions automatic = cpu_options(opt);
  automatic.backend = BackendChoice::kAuto;
  const ContextPtr auto_ctx = Context::create(generated_params(12, 3), automatic);
  const BackendKind auto_kind = auto_ctx->backend().kind();
  const ExecutionPolicy before = ctx->policy();

  ::setenv("THEO_BACKEND", "tpu", 1);
  ::setenv("THEO_FUSION", "0", 1);
  ::setenv("THEO_OUTPUT_CHUNKING", "0", 1);
  ::setenv("THEO_GRAPHS", "0", 1);
  ::setenv("THEO_PDL", "0", 1);
  ::setenv("THEO_NTT_ROW_OTF", "0", 1);
  ::setenv("THEO_NTT_ROWS_RESIDENT", "0", 1);
  ::setenv("THEO_NTT_ROWS_PERSISTENT_TILES", "0", 1);
  ::setenv("THEO_NTT_COLS_WIDE", "0", 1);

  for (const ContextPtr& c : {ctx, auto_ctx}) {
    const ExecutionPolicy& p = c->policy();
    EXPECT_TRUE(p.fusion());
    EXPECT_TRUE(p.output_chunking());
    EXPECT_TRUE(p.graphs());
    EXPECT_TRUE(p.backend().tuning.programmatic_launch);
    EXPECT_FALSE(p.backend().tuning.ntt_row_otf.has_value());
    EXPECT_TRUE(p.environment().backend.empty());
  }
  EXPECT_EQ(before.fusion(), ctx->policy().fusion());
  EXPECT_EQ(auto_ctx->backend().kind(), auto_kind);

  // The Context still captures graphs and computes what it computed before the change.
  SeededKeys k(ctx, 5, 6);
  const Ciphertext a = k.encrypt(random_slots(8), 3);
  const u64 eager = hash_ct(*ctx, k.evaluator.multiply(a, a, k.rlk));
  Ciphertext out;
  Graph g = ctx->capture([&] { out = k.evaluator.multiply(a, a, k.rlk); });
  EXPECT_TRUE(g.captured());
  g.replay();
  EXPECT_EQ(hash_ct(*ctx, out), eager);

  // A Context made now reads the new values.
  ::setenv("THEO_BACKEND", "cpu", 1);
  const ContextPtr later = Context::create(generated_params(12, 3), automatic);
  EXPECT_FALSE(later->policy().fusion());
  EXPECT_FALSE(later->policy().output_chunking());
  EXPECT_FALSE(later->policy().graphs());
  EXPECT_FALSE(later->policy().backend().tuning.programmatic_launch);
  EXPECT_EQ(later->policy().backend().tuning.ntt_row_otf, 0u);
  EXPECT_EQ(later->backend().kind(), BackendKind::kCpu);
  EXPECT_FALSE(later->capture([] {}).captured());
  ::setenv("THEO_BACKEND", "tpu", 1);
  EXPECT_THROW(Context::create(generated_params(12, 3), automatic), ParameterError);
}

// Every THEO_* variable the library, the apps, the bindings or the benchmarks name is in
// docs/configuration.md's tables, and the library reads the environment in one file only.
TEST(ExecutionPolicy, EveryKnobIsDocumentedAndReadInOnePlace) {
  namespace fs = std::filesystem;
  const fs::path root = THEO_SOURCE_DIR;
  const auto read = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  const std::string doc = read(root / "docs/configuration.md");
  ASSERT_FALSE(doc.empty());
  const std::regex knob("\"(THEO_[A-Z0-9_]+)\"");
  std::set<std::string> named;
  for (const char* dir : {"src", "include", "apps", "bench", "python/src"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh"))
        continue;
      const std::string text = read(e.path());
      for (std::sregex_iterator m(text.begin(), text.end(), knob), end; m != end; ++m)
        named.insert((*m)[1].str());
      const std::string rel = fs::relative(e.path(), root).generic_string();
      const bool library = rel.rfind("src/", 0) == 0 || rel.rfind("include/", 0) == 0;
      if (library && rel != "src/common/environment.cpp") {
        EXPECT_EQ(text.find("getenv("), std::string::npos) << rel << " reads the environment";
      }
    }
  }
  EXPECT_GE(named.size(), std::size(kKnobs));
  for (const std::string& name : named)
    EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << name << " is not in the table";
}

// The bootstrapping levers by name (theo_boot_levers --configs, theo_trace --levers).
TEST(Optimizations, BootstrapLeversByName) {
  Optimizations o = Optimizations::all();
  for (const std::string& n : bootstrap_lever_names()) {
    set_bootstrap_lever(o, n, true);
    EXPECT_TRUE(bootstrap_lever(o, n)) << n;
  }
  const Optimizations base = with_bootstrap_levers(o, "baseline");
  for (const std::string& n : bootstrap_lever_names())
    EXPECT_FALSE(bootstrap_lever(base, n)) << n;
  EXPECT_TRUE(base.fusion && base.pipelining);  // the other switches as they were
  const Optimizations two = with_bootstrap_levers(base, "lazy_polynomial+slot_to_coeff_first");
  EXPECT_TRUE(two.circuits.lazy_polynomial && two.circuits.slot_to_coeff_first);
  EXPECT_FALSE(two.inplace_constants || two.batched_evalmod);
  EXPECT_TRUE(bootstrap_lever(with_bootstrap_levers(base, "all"), "batched_evalmod"));
  EXPECT_EQ(with_bootstrap_levers(two, "default").circuits.slot_to_coeff_first, true);
  EXPECT_THROW(with_bootstrap_levers(o, "lazy_polynomial+nope"), ParameterError);
  EXPECT_THROW(with_bootstrap_levers(o, "lazy_polynomial+"), ParameterError);
  EXPECT_THROW(set_bootstrap_lever(o, "fusion", true), ParameterError);
  // none() and all() leave the circuit-level choices (they change the words) as they are.
  EXPECT_EQ(Optimizations::none().circuits.lazy_polynomial,
            Optimizations{}.circuits.lazy_polynomial);
  EXPECT_EQ(Optimizations::all().circuits.slot_to_coeff_first,
            Optimizations{}.circuits.slot_to_coeff_first);
}

}  // namespace
}  // namespace theo::test
