// The four key-switching dataflows (DSOB, DPOB, DSOC, DPOC with 2..10 chunks) on the CPU backend:
// every one gives the words of the reference key switch (every optimization off) at every level,
// with and without pipelining, fusion and multi-poly caching, through KeySwitcher, the evaluator
// (relinearization, ModDown merged with the rescale, rotations) and a captured graph;
// Dataflow::kAuto's selection follows the level; the tuning table is measured, written, loaded and,
// when bad, reported and ignored while the Context is made.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>

#include "ckks/ckks_test_util.h"
#include "theo/backend/factory.h"
#include "theo/ckks/graph.h"
#include "theo/math/parameter_grid.h"
#include "theo/tuning/key_switch_tuning.h"

namespace theo::test {
namespace {

namespace fs = std::filesystem;

// Two small sets: the 25-30 system (digits of unequal size at the lower levels) and a grid-style
// set of 10 limbs in 4 digits (alpha 3: the last digit holds one limb).
std::vector<ParameterSet> sets() {
  return {generated_params(11, 4), generate_grid_parameters({11, 10, 4})};
}

ContextPtr context(const ParameterSet& p, const Optimizations& opt, const KeySwitchOptions& ks) {
  ContextOptions o;
  o.backend = BackendChoice::kCpu;
  o.threads = 2;
  o.allow_insecure = true;
  o.optimizations = opt;
  o.key_switching = ks;
  o.key_switching.tuning.use_table = false;  // no table of the test machine leaks in
  return Context::create(p, o);
}

KeySwitchOptions prepared() {
  KeySwitchOptions ks;
  ks.prepare_all = true;
  return ks;
}

KeySwitchOptions fixed(const DataflowChoice& c) {
  KeySwitchOptions ks;
  ks.dataflow = c.dataflow;
  ks.chunks = is_chunked(c.dataflow) ? c.chunks : 0;
  return ks;
}

// Random canonical words over a level's basis (fresh each run; printed seed in the failure).
std::vector<u32> random_words(const Context& ctx, u32 level, u64 seed) {
  const LevelData& lv = ctx.level(level);
  std::mt19937_64 rng(seed);
  std::vector<u32> w(std::size_t{lv.limbs} * ctx.n());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<u32>(rng() % ctx.prime(lv.q_basis[static_cast<u32>(i / ctx.n())]));
  return w;
}

// One key switch of the given words at `level` with `key`, forced to a dataflow when given.
u64 switched(const Context& ctx, const KeySwitcher& ks, const SwitchingKey& key, u32 level,
             const std::vector<u32>& words, const DataflowChoice* forced = nullptr) {
  const LevelData& lv = ctx.level(level);
  Backend& be = ctx.backend();
  RnsPoly in = be.make_poly(lv.q_basis), o0 = be.make_poly(lv.q_basis),
          o1 = be.make_poly(lv.q_basis);
  be.upload(words.data(), in.ref());
  const ConstPolyRef ins[] = {in.cref()};
  const SwitchingKey* keys[] = {&key};
  const PolyRef out0[] = {o0.ref()}, out1[] = {o1.ref()};
  std::optional<DataflowChoice> dataflow;
  if (forced != nullptr) dataflow = *forced;
  ks.run({.level = level,
          .inputs = ins,
          .keys = keys,
          .out0 = out0,
          .out1 = out1,
          .dataflow = dataflow});
  return hash_poly(ctx, o0, hash_poly(ctx, o1));
}

// The keys of every Context in this run: one fresh seed per process, printed, and shared by the
// reference and the Contexts compared with it (they must hold the same keys).
const Prng::Seed& key_seed() {
  static const Prng::Seed seed = [] {
    Prng::Seed s{};
    std::random_device rd;
    for (std::uint8_t& b : s)
      b = static_cast<std::uint8_t>(rd());
    std::printf("[key seed] ");
    for (const std::uint8_t b : s)
      std::printf("%02x", b);
    std::printf("\n");
    return s;
  }();
  return seed;
}

struct Keys {
  explicit Keys(const ContextPtr& c)
      : ctx(c),
        kg(ctx, key_seed()),
        sk(kg.create_secret_key()),
        rlk(kg.create_relin_key(sk)),
        gk(kg.create_galois_keys(sk, {3}, false)),
        ev(ctx) {}
  ContextPtr ctx;
  KeyGenerator kg;
  SecretKey sk;
  RelinKey rlk;
  GaloisKeys gk;
  Evaluator ev;
};

u64 seed_for_run() {
  const u64 seed = std::random_device{}();
  std::printf("[seed] %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

// Every candidate, forced on one prepared Context, at every level: the words of the reference.
TEST(Dataflows, EveryDataflowAndChunkCountGivesTheSameWords) {
  const u64 seed = seed_for_run();
  for (const ParameterSet& p : sets()) {
    const Keys ref(context(p, Optimizations::none(), {}));
    const KeySwitcher& ref_ks = ref.ev.key_switcher();
    Optimizations serial = Optimizations::all();
    serial.pipelining = false;
    Optimizations unfused = Optimizations::all();
    unfused.fusion = false;
    Optimizations uncached = Optimizations::all();
    uncached.multi_poly_caching = false;
    for (const Optimizations& opt : {Optimizations::all(), serial, unfused, uncached}) {
      const Keys k(context(p, opt, prepared()));
      const KeySwitcher& ks = k.ev.key_switcher();
      for (u32 level = 0; level <= k.ctx->max_level(); ++level) {
        const std::vector<u32> words = random_words(*ref.ctx, level, seed + level);
        const u64 want = switched(*ref.ctx, ref_ks, ref.rlk.key(), level, words);
        for (const DataflowChoice& c : dataflow_candidates()) {
          EXPECT_EQ(switched(*k.ctx, ks, k.rlk.key(), level, words, &c), want)
              << p.name << " level " << level << " " << choice_name(c) << " fusion " << opt.fusion
              << " pipelining " << opt.pipelining << " caching " << opt.multi_poly_caching;
        }
      }
    }
  }
}

// A Context asked for one dataflow runs it in every op that key-switches alone: relinearization,
// ModDown merged with the rescale (extend with the P d terms), rotation, the bootstrapper's
// switches; and a captured graph replays it.
TEST(Dataflows, EvaluatorOpsUnderEachDataflow) {
  const ParameterSet p = generate_grid_parameters({11, 10, 4});
  const Keys ref(context(p, Optimizations::none(), {}));
  Encoder enc(ref.ctx);
  Encryptor encryptor(ref.ctx, ref.sk, seed_of(43));
  const u32 top = ref.ctx->default_encryption_level();
  const auto slots = random_slots(ref.ctx->max_slots());
  const Ciphertext a = encryptor.encrypt(enc.encode(slots, top));
  const Ciphertext b = encryptor.encrypt(enc.encode(random_slots(ref.ctx->max_slots()), top));
  const u64 want_mult = hash_ct(*ref.ctx, ref.ev.multiply(a, b, ref.rlk));
  const u64 want_mrr = hash_ct(*ref.ctx, ref.ev.multiply_relin_rescale(a, b, ref.rlk));
  const u64 want_rot = hash_ct(*ref.ctx, ref.ev.rotate(a, 3, ref.gk));
  // The same words of a and b in each Context (the ciphertexts carry their Context's id).
  const auto copy = [&](const Context& ctx, const Ciphertext& ct) {
    std::vector<RnsPoly> polys;
    for (const RnsPoly& q : ct.polys()) {
      std::vector<u32> w(q.words());
      ref.ctx->backend().download(q.cref(), w.data());
      polys.push_back(ctx.backend().make_poly(q.basis()));
      ctx.backend().upload(w.data(), polys.back().ref());
    }
    return Ciphertext(ctx.id(), ct.level(), ct.scale(), ct.slots(), std::move(polys));
  };
  for (const DataflowChoice& c : dataflow_candidates()) {
    const Keys k(context(p, Optimizations::all(), fixed(c)));
    for (u32 l = 0; l <= k.ctx->max_level(); ++l) {
      EXPECT_EQ(k.ctx->key_switch_planner().dataflow(l).choice, c);
      EXPECT_EQ(k.ctx->key_switch_planner().dataflow(l).source, ChoiceSource::kFixed);
    }
    EXPECT_EQ(k.ctx->tuning_report().status, TuningLoadStatus::kNotUsed);  // fixed: no table
    const Ciphertext ka = copy(*k.ctx, a), kb = copy(*k.ctx, b);
    EXPECT_EQ(hash_ct(*k.ctx, k.ev.multiply(ka, kb, k.rlk)), want_mult) << choice_name(c);
    EXPECT_EQ(hash_ct(*k.ctx, k.ev.multiply_relin_rescale(ka, kb, k.rlk)), want_mrr)
        << choice_name(c);
    EXPECT_EQ(hash_ct(*k.ctx, k.ev.rotate(ka, 3, k.gk)), want_rot) << choice_name(c);
    // Captured once, replayed (the CPU backend records the calls).
    Ciphertext out;
    Graph g = k.ctx->capture([&] { out = k.ev.multiply_relin_rescale(ka, kb, k.rlk); });
    g.replay();
    EXPECT_EQ(hash_ct(*k.ctx, out), want_mrr) << choice_name(c) << " replayed";
  }
}

// Auto without a table: the footprint model against the cache, so the dataflow changes with the
// level, and the words stay those of the reference.
TEST(Dataflows, AutoFollowsTheLevel) {
  const u64 seed = seed_for_run();
  const ParameterSet p = generate_grid_parameters({11, 10, 4});
  const Keys ref(context(p, Optimizations::none(), {}));
  Optimizations opt = Optimizations::all();
  // The DPOB footprint of a middle level times kFootprintHeadroom: the top levels chunk, the
  // bottom ones do not.
  const u32 mid = 5, limb = 4u << 11;
  opt.cache_bytes = static_cast<std::size_t>(kFootprintHeadroom *
                                             static_cast<double>((mid + 4 * (mid + 3)) * limb));
  const Keys k(context(p, opt, {}));
  const KeySwitchPlanner& planner = k.ctx->key_switch_planner();
  std::set<std::string> seen;
  for (u32 l = 0; l <= k.ctx->max_level(); ++l) {
    const LevelDataflow& d = planner.dataflow(l);
    EXPECT_EQ(d.source, ChoiceSource::kModel);
    EXPECT_EQ(d.choice, model_choice(planner.key_switch_shape(l), opt.cache_bytes));
    seen.insert(choice_name(d.choice));
    const std::vector<u32> words = random_words(*ref.ctx, l, seed + l);
    EXPECT_EQ(switched(*k.ctx, k.ev.key_switcher(), k.rlk.key(), l, words),
              switched(*ref.ctx, ref.ev.key_switcher(), ref.rlk.key(), l, words))
        << "level " << l << " " << choice_name(d.choice);
  }
  EXPECT_GE(seen.size(), 2u);
  EXPECT_TRUE(seen.count("DPOB"));
  // A chunked choice has its tables; an unchosen count does not (prepare_all builds them all).
  const u32 top = k.ctx->max_level();
  const DataflowChoice c = planner.dataflow(top).choice;
  ASSERT_TRUE(is_chunked(c.dataflow));
  EXPECT_NE(k.ctx->level(top).chunk_plans(c.chunks), nullptr);
  EXPECT_EQ(k.ctx->level(top).chunk_plans(c.chunks == 10 ? 9 : c.chunks + 1), nullptr);
  const DataflowChoice other{c.dataflow, c.chunks == 10 ? 9 : c.chunks + 1};
  const std::vector<u32> words = random_words(*k.ctx, top, seed);
  EXPECT_THROW(switched(*k.ctx, k.ev.key_switcher(), k.rlk.key(), top, words, &other),
               ParameterError);
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("theo_dataflow_test_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Contexts with Auto and a table directory, their warnings collected.
struct TableRun {
  ContextPtr ctx;
  std::vector<std::string> warnings;
  bool measured = false;   // tune: the table was measured (create_tuned_context)
  std::string save_error;  // tune: why it could not be written
};
TableRun with_table(const ParameterSet& p, const fs::path& dir, bool tune, bool use = true) {
  TableRun r;
  ContextOptions o;
  o.backend = BackendChoice::kCpu;
  o.threads = 2;
  o.allow_insecure = true;
  o.optimizations.cache_bytes = std::size_t{1} << 20;  // a cache to plan for on the CPU
  o.key_switching.tuning.directory = dir;
  o.key_switching.tuning.use_table = use;
  auto* warnings = &r.warnings;
  o.key_switching.tuning.warn = [warnings](const std::string& m) { warnings->push_back(m); };
  if (tune) {
    TunedContext t = create_tuned_context(p, o);
    r.ctx = t.ctx;
    r.measured = t.measured;
    r.save_error = t.save_error;
  } else {
    r.ctx = Context::create(p, o);
  }
  return r;
}

std::set<ChoiceSource> sources(const Context& ctx) {
  const KeySwitchPlanner& planner = ctx.key_switch_planner();
  std::set<ChoiceSource> s;
  for (u32 l = 0; l <= ctx.max_level(); ++l)
    s.insert(planner.dataflow(l).source);
  return s;
}

TEST(Dataflows, TuningTableAtContextCreation) {
  const ParameterSet p = generated_params(10, 3);
  TempDir dir;
  // No table yet: the model, no warning.
  TableRun none = with_table(p, dir.path(), false);
  EXPECT_EQ(none.ctx->tuning_report().status, TuningLoadStatus::kMissing);
  EXPECT_TRUE(none.warnings.empty());
  EXPECT_EQ(sources(*none.ctx), std::set<ChoiceSource>{ChoiceSource::kModel});
  const fs::path file = none.ctx->tuning_report().file;
  EXPECT_EQ(file.parent_path(), dir.path());
  EXPECT_FALSE(fs::exists(file));

  // create_tuned_context: measured before the Context is made, written, and used.
  TableRun tuned = with_table(p, dir.path(), true);
  EXPECT_TRUE(tuned.measured);
  EXPECT_TRUE(tuned.save_error.empty());
  EXPECT_EQ(tuned.ctx->tuning_report().status, TuningLoadStatus::kGiven);
  EXPECT_TRUE(tuned.warnings.empty());
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(sources(*tuned.ctx), std::set<ChoiceSource>{ChoiceSource::kTable});

  // The next Context loads it and makes the same choices.
  TableRun loaded = with_table(p, dir.path(), false);
  EXPECT_EQ(loaded.ctx->tuning_report().status, TuningLoadStatus::kLoaded);
  EXPECT_TRUE(loaded.warnings.empty());
  const TuningLoad on_disk = load_tuning_table(file, loaded.ctx->tuning_key());
  ASSERT_TRUE(on_disk.table.has_value());
  for (u32 l = 0; l <= loaded.ctx->max_level(); ++l) {
    EXPECT_EQ(loaded.ctx->key_switch_planner().dataflow(l).source, ChoiceSource::kTable);
    EXPECT_EQ(loaded.ctx->key_switch_planner().dataflow(l).choice, on_disk.table->choice(l));
  }
  // use_table = false: the file is not read.
  TableRun ignored = with_table(p, dir.path(), false, false);
  EXPECT_EQ(sources(*ignored.ctx), std::set<ChoiceSource>{ChoiceSource::kModel});
  EXPECT_EQ(ignored.ctx->tuning_report().status, TuningLoadStatus::kNotUsed);
  EXPECT_STREQ(tuning_load_status_name(ignored.ctx->tuning_report().status), "not used");

  // Corrupted: a warning naming the file, the model, a working Context.
  { std::ofstream(file, std::ios::trunc) << "{ \"format\": \"theodosian-key-switch-tuning\", 7"; }
  TableRun corrupted = with_table(p, dir.path(), false);
  EXPECT_EQ(corrupted.ctx->tuning_report().status, TuningLoadStatus::kCorrupted);
  ASSERT_EQ(corrupted.warnings.size(), 1u);
  EXPECT_NE(corrupted.warnings[0].find("corrupted"), std::string::npos) << corrupted.warnings[0];
  EXPECT_NE(corrupted.warnings[0].find(file.string()), std::string::npos);
  EXPECT_EQ(sources(*corrupted.ctx), std::set<ChoiceSource>{ChoiceSource::kModel});

  // Stale: a table of another GPU under this file's name.
  {
    TuningKey other = loaded.ctx->tuning_key();
    other.device.name = "some other device";
    TuningTable t(other);
    t.set_level({0, {{kDefaultChoice, 5.0}}});
    ASSERT_EQ(save_tuning_table(t, file), "");
  }
  TableRun stale = with_table(p, dir.path(), false);
  EXPECT_EQ(stale.ctx->tuning_report().status, TuningLoadStatus::kStale);
  ASSERT_EQ(stale.warnings.size(), 1u);
  EXPECT_NE(stale.warnings[0].find("stale"), std::string::npos) << stale.warnings[0];
  EXPECT_EQ(sources(*stale.ctx), std::set<ChoiceSource>{ChoiceSource::kModel});
  // ...and create_tuned_context replaces it.
  TableRun retuned = with_table(p, dir.path(), true);
  EXPECT_TRUE(retuned.measured);
  EXPECT_EQ(with_table(p, dir.path(), false).ctx->tuning_report().status,
            TuningLoadStatus::kLoaded);

  // Unwritable: measured and used, the failure reported, nothing thrown.
  if (fs::is_directory("/proc")) {
    TableRun unwritable = with_table(p, "/proc/theodosian-tuning-test", true);
    EXPECT_TRUE(unwritable.measured);
    EXPECT_FALSE(unwritable.save_error.empty());
    ASSERT_EQ(unwritable.warnings.size(), 1u);
    EXPECT_NE(unwritable.warnings[0].find("cannot be written"), std::string::npos);
    EXPECT_EQ(sources(*unwritable.ctx), std::set<ChoiceSource>{ChoiceSource::kTable});
  }
}

TEST(Dataflows, TunerErrors) {
  const ParameterSet p = generated_params(10, 3);
  const ContextPtr bare = context(p, Optimizations::all(), {});
  // Chunked candidates need their tables (prepare_all).
  EXPECT_THROW(tune_key_switching(bare, {}), ParameterError);
  TuneOptions bulk;
  bulk.candidates = {{Dataflow::kDSOB, 1}, {Dataflow::kDPOB, 1}};
  bulk.reps = 1;
  bulk.warmup = 0;
  std::size_t calls = 0;
  bulk.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_LE(done, total);
  };
  const TuningTable t = tune_key_switching(bare, bulk);
  EXPECT_EQ(t.levels().size(), bare->max_level() + 1u);
  EXPECT_EQ(calls, 2u * (bare->max_level() + 1u));
  for (const TunedLevel& l : t.levels()) {
    ASSERT_EQ(l.measured.size(), 2u);
    for (const TuningMeasurement& m : l.measured)
      EXPECT_GT(m.median_us, 0);
  }
  // No confirmation, one key switch per sample: still a full table.
  bulk.confirm_factor = 0;
  bulk.batch = 1;
  EXPECT_EQ(tune_key_switching(bare, bulk).levels().size(), bare->max_level() + 1u);
  bulk.batch = 0;
  EXPECT_THROW(tune_key_switching(bare, bulk), ParameterError);
  bulk.batch = 4;
  bulk.reps = 0;
  EXPECT_THROW(tune_key_switching(bare, bulk), ParameterError);
  bulk.reps = 1;
  bulk.levels = {bare->max_level() + 1};
  EXPECT_THROW(tune_key_switching(bare, bulk), LevelError);
  bulk.levels = {};
  bulk.candidates = {{Dataflow::kDPOC, 1}};
  EXPECT_THROW(tune_key_switching(bare, bulk), ParameterError);
  // Bad options are refused at creation.
  KeySwitchOptions bad;
  bad.dataflow = Dataflow::kDSOC;
  bad.chunks = 12;
  EXPECT_THROW(context(p, Optimizations::all(), bad), ParameterError);
}

}  // namespace
}  // namespace theo::test
