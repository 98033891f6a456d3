// The traffic model (theo/model/traffic.h): the recording backend changes no word, counts the
// modelled bytes and multiply-adds of known shapes, scopes nest, and nothing happens when off.

#include <string>
#include <thread>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"
#include "theo/model/traffic.h"
#include "theo/model/traffic_trace.h"
#include "theo/theodosian.h"

namespace theo::test {
namespace {

constexpr u32 kLogN = 10;
constexpr double kN = 1 << kLogN;

class TrafficTest : public RingTest {
 protected:
  void SetUp() override {
    RingTest::SetUp();
    ring_ = mixed_ring(kLogN, 8);
    plain_ = make_cpu_backend(ring_, 2);
    rec_ = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.keep_records = true});
    wrapped_ = make_recording_backend(make_cpu_backend(ring_, 2), rec_);
  }

  // The same random words on both backends.
  std::pair<RnsPoly, RnsPoly> twin(const Basis& basis) {
    const auto w = random_words(*plain_, basis);
    return {from_words(*plain_, basis, w), from_words(*wrapped_, basis, w)};
  }
  void expect_same(const RnsPoly& a, const RnsPoly& b, const char* what) {
    EXPECT_EQ(words(*plain_, a), words(*wrapped_, b)) << what;
  }
  // The recorder emptied, then `ops` (fill_zero of a poly of `limbs` limbs, fork, end_fork,
  // join) run on the recording backend in order under the OpScope `scope`.
  void record_ops(const char* scope, u32 limbs, const std::vector<std::string>& ops) {
    RnsPoly x = wrapped_->make_poly(Basis::range(0, limbs));
    rec_->clear();
    const OpScope s(scope);
    for (const std::string& op : ops) {
      if (op == "fill_zero") wrapped_->fill_zero(x.ref());
      if (op == "fork") wrapped_->fork();
      if (op == "end_fork") wrapped_->end_fork();
      if (op == "join") wrapped_->join();
    }
  }

  RingParams ring_;
  std::unique_ptr<Backend> plain_;
  std::shared_ptr<TrafficRecorder> rec_;
  std::unique_ptr<Backend> wrapped_;
};

TEST_F(TrafficTest, RecordingBackendGivesIdenticalWords) {
  const Basis b4 = Basis::range(0, 4), b3 = Basis::range(5, 3);
  auto [a, a_w] = twin(b4);
  auto [b, b_w] = twin(b4);
  auto [c, c_w] = twin(b4);
  std::vector<u32> consts;
  for (u32 l = 0; l < b4.size; ++l)
    consts.push_back(uniform(plain_->modulus(b4[l]).q));

  const PolyRef ap[] = {a.ref()}, awp[] = {a_w.ref()};
  plain_->ntt(ap, consts);
  wrapped_->ntt(awp, consts);
  expect_same(a, a_w, "ntt");
  plain_->intt(ap);
  wrapped_->intt(awp);
  expect_same(a, a_w, "intt");

  RnsPoly y = plain_->make_poly(b3), y_w = wrapped_->make_poly(b3);
  plain_->bconv(*plain_->make_bconv(b4, b3, true), a.cref(), y.ref());
  wrapped_->bconv(*wrapped_->make_bconv(b4, b3, true), a_w.cref(), y_w.ref());
  expect_same(y, y_w, "bconv exact");
  plain_->bconv_matmul(*plain_->make_bconv(b4, b3), a.cref(), y.ref());
  wrapped_->bconv_matmul(*wrapped_->make_bconv(b4, b3), a_w.cref(), y_w.ref());
  expect_same(y, y_w, "bconv_matmul");

  RnsPoly o = plain_->make_poly(b4), o_w = wrapped_->make_poly(b4);
  plain_->mul_add(a.cref(), b.cref(), c.cref(), o.ref());
  wrapped_->mul_add(a_w.cref(), b_w.cref(), c_w.cref(), o_w.ref());
  expect_same(o, o_w, "mul_add");
  plain_->sub_mul_scalar(a.cref(), b.cref(), consts, o.ref());
  wrapped_->sub_mul_scalar(a_w.cref(), b_w.cref(), consts, o_w.ref());
  expect_same(o, o_w, "sub_mul_scalar");

  const ConstPolyRef ins[] = {a.cref(), b.cref()}, ins_w[] = {a_w.cref(), b_w.cref()};
  const u32 ks[] = {5, 25};
  plain_->automorphism_sum(ins, ks, o.ref(), true);
  wrapped_->automorphism_sum(ins_w, ks, o_w.ref(), true);
  expect_same(o, o_w, "automorphism_sum");
  std::vector<u32> rows(consts);
  for (u32 l = 0; l < b4.size; ++l)  // second row: -consts, canonical per limb
    rows.push_back(consts[l] == 0 ? 0 : plain_->modulus(b4[l]).q - consts[l]);
  plain_->mul_scalar_sum(ins, rows, o.ref());
  wrapped_->mul_scalar_sum(ins_w, rows, o_w.ref());
  expect_same(o, o_w, "mul_scalar_sum");

  RnsPoly d0 = plain_->make_poly(b4), d1 = plain_->make_poly(b4), d2 = plain_->make_poly(b4);
  RnsPoly e0 = wrapped_->make_poly(b4), e1 = wrapped_->make_poly(b4), e2 = wrapped_->make_poly(b4);
  plain_->tensor(a.cref(), b.cref(), c.cref(), o.cref(), d0.ref(), d1.ref(), d2.ref());
  wrapped_->tensor(a_w.cref(), b_w.cref(), c_w.cref(), o_w.cref(), e0.ref(), e1.ref(), e2.ref());
  expect_same(d1, e1, "tensor");

  const ConstPolyRef dg[] = {a.cref(), b.cref()}, dg_w[] = {a_w.cref(), b_w.cref()};
  const ConstPolyRef kb[] = {c.cref(), d0.cref()}, kb_w[] = {c_w.cref(), e0.cref()};
  const ConstPolyRef ka[] = {d1.cref(), d2.cref()}, ka_w[] = {e1.cref(), e2.cref()};
  RnsPoly k1 = plain_->make_poly(b4), k1_w = wrapped_->make_poly(b4);
  plain_->key_mult(dg, kb, ka, o.ref(), k1.ref());
  wrapped_->key_mult(dg_w, kb_w, ka_w, o_w.ref(), k1_w.ref());
  expect_same(o, o_w, "key_mult out0");
  expect_same(k1, k1_w, "key_mult out1");

  plain_->mul_monomial(a.cref(), -7, o.ref());
  wrapped_->mul_monomial(a_w.cref(), -7, o_w.ref());
  expect_same(o, o_w, "mul_monomial");

  const std::array<std::uint8_t, 32> seed{1, 2, 3};
  plain_->sample_uniform(seed, 9, o.ref());
  wrapped_->sample_uniform(seed, 9, o_w.ref());
  expect_same(o, o_w, "sample_uniform");

  EXPECT_EQ(wrapped_->kind(), plain_->kind());
  EXPECT_EQ(wrapped_->name(), plain_->name());
  EXPECT_EQ(&unwrap_recording_backend(*plain_), plain_.get());
  EXPECT_NE(&unwrap_recording_backend(*wrapped_), wrapped_.get());
}

TEST_F(TrafficTest, CountsBytesAndMacsOfKnownShapes) {
  const Basis b4 = Basis::range(0, 4), b3 = Basis::range(4, 3);
  RnsPoly x = wrapped_->make_poly(b4), y = wrapped_->make_poly(b4), z = wrapped_->make_poly(b3);
  rec_->clear();  // make_poly records nothing; the uploads of twin() are not used here

  const PolyRef both[] = {x.ref(), y.ref()};  // 8 limbs over 4 distinct primes
  wrapped_->ntt(both);
  TrafficTotals t = rec_->by_op().at("ntt");
  EXPECT_EQ(t.calls, 1u);
  EXPECT_DOUBLE_EQ(t.bytes_read, 8 * kN * 4);
  EXPECT_DOUBLE_EQ(t.bytes_written, 8 * kN * 4);
  EXPECT_DOUBLE_EQ(t.table_bytes, 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.macs, 8 * kN / 2 * kLogN);

  const std::vector<u32> ones(4, 1);
  wrapped_->intt(both, ones);  // + N per limb for the fused constants
  EXPECT_DOUBLE_EQ(rec_->by_op().at("intt").macs, 8 * kN / 2 * kLogN + 8 * kN);

  wrapped_->bconv(*wrapped_->make_bconv(b4, b3), x.cref(), z.ref());
  t = rec_->by_op().at("bconv");
  EXPECT_DOUBLE_EQ(t.bytes_read, 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.bytes_written, 3 * kN * 4);
  EXPECT_DOUBLE_EQ(t.macs, 4 * 3 * kN + 4 * kN);
  EXPECT_DOUBLE_EQ(t.table_bytes, (4 * 3 + 4) * 4);
  wrapped_->bconv_matmul(*wrapped_->make_bconv(b4, b3), x.cref(), z.ref());
  EXPECT_DOUBLE_EQ(rec_->by_op().at("bconv_matmul").macs, 4 * 3 * kN);

  const ConstPolyRef digits[] = {x.cref(), y.cref(), x.cref()};
  RnsPoly o0 = wrapped_->make_poly(b4), o1 = wrapped_->make_poly(b4);
  wrapped_->key_mult(digits, digits, digits, o0.ref(), o1.ref());
  t = rec_->by_op().at("key_mult");
  EXPECT_DOUBLE_EQ(t.bytes_read, 3 * 3 * 4 * kN * 4);  // 3 digits + 3 kb + 3 ka
  EXPECT_DOUBLE_EQ(t.bytes_written, 2 * 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.macs, 2 * 3 * 4 * kN);

  wrapped_->mul_add(x.cref(), y.cref(), o0.cref(), o1.ref());
  t = rec_->by_op().at("mul_add");
  EXPECT_DOUBLE_EQ(t.bytes_read, 3 * 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.bytes_written, 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.macs, 4 * kN);

  const ConstPolyRef a2[] = {x.cref(), y.cref()}, b2[] = {y.cref(), x.cref()};
  const PolyRef out2[] = {o0.ref(), o1.ref()};
  wrapped_->add_batch(a2, b2, out2);
  t = rec_->by_op().at("add_batch");
  EXPECT_EQ(t.calls, 1u);
  EXPECT_DOUBLE_EQ(t.bytes_read, 2 * 2 * 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.bytes_written, 2 * 4 * kN * 4);
  EXPECT_DOUBLE_EQ(t.macs, 0);

  const auto records = rec_->records();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().op, "ntt");
  EXPECT_EQ(records.front().cost.polys, 2u);
  EXPECT_EQ(records.front().cost.limbs, 8u);
  EXPECT_EQ(records.front().cost.n, 1u << kLogN);
  EXPECT_EQ(rec_->total().calls, records.size());
}

TEST_F(TrafficTest, ScopesNestAndSum) {
  RnsPoly x = wrapped_->make_poly(Basis::range(0, 2));
  rec_->clear();
  {
    const OpScope a("A");
    wrapped_->fill_zero(x.ref());
    {
      const OpScope b("B");
      EXPECT_EQ(current_op_scope(), "A/B");
      wrapped_->fill_zero(x.ref());
      wrapped_->fill_zero(x.ref());
    }
    EXPECT_EQ(current_op_scope(), "A");
  }
  {
    const OpScope ab("AB");
    wrapped_->fill_zero(x.ref());
  }
  wrapped_->fill_zero(x.ref());
  EXPECT_EQ(current_op_scope(), "");

  const auto scopes = rec_->by_scope();
  EXPECT_EQ(scopes.at("A").calls, 3u);  // inclusive of A/B
  EXPECT_EQ(scopes.at("A/B").calls, 2u);
  EXPECT_EQ(scopes.at("AB").calls, 1u);
  EXPECT_EQ(scopes.at("").calls, 1u);
  EXPECT_EQ(rec_->total_in("A").calls, 3u);  // "AB" is not inside "A"
  EXPECT_EQ(rec_->total_in("A/B").calls, 2u);
  EXPECT_EQ(rec_->total().calls, 5u);
  EXPECT_DOUBLE_EQ(rec_->total_in("A").bytes_written, 3 * 2 * kN * 4);
  EXPECT_EQ(rec_->cells().size(), 4u);

  // Thread-local: another thread starts outside every scope.
  const OpScope outer("Main");
  std::string seen = "unset";
  std::thread([&] { seen = current_op_scope(); }).join();
  EXPECT_EQ(seen, "");
}

TEST_F(TrafficTest, ForksAreMarkersOutsideTheTotals) {
  const std::vector<std::string> run = {"fill_zero", "fork",      "fill_zero",
                                        "end_fork",  "fill_zero", "join"};
  record_ops("A", 2, run);
  std::vector<std::string> ops;
  for (const TrafficRecord& r : rec_->records()) {
    ops.push_back(r.op);
    EXPECT_EQ(r.scope, "A");
  }
  EXPECT_EQ(ops, run);
  EXPECT_EQ(rec_->total().calls, 3u);  // markers are not calls
  EXPECT_EQ(rec_->by_op().count("fork"), 0u);
}

TEST_F(TrafficTest, TraceJsonListsEveryRecordInOrder) {
  record_ops("HMult", 3, {"fill_zero", "fork", "join"});
  TraceInfo info;
  info.workload = "test";
  info.n = 1u << kLogN;
  const std::string doc = trace_json(rec_->records(), info);
  EXPECT_NE(doc.find("\"format\": \"theo-trace\", \"version\": 1"), std::string::npos);
  EXPECT_NE(doc.find("\"log_n\":10"), std::string::npos);
  const auto fill = doc.find("\"op\":\"fill_zero\"");
  const auto fork = doc.find("\"op\":\"fork\"");
  const auto join = doc.find("\"op\":\"join\"");
  ASSERT_NE(fill, std::string::npos);
  ASSERT_NE(fork, std::string::npos);
  ASSERT_NE(join, std::string::npos);
  EXPECT_LT(fill, fork);
  EXPECT_LT(fork, join);
  EXPECT_NE(doc.find("\"bytes_written\":" + std::to_string(3 * (1 << kLogN) * 4)),
            std::string::npos);
  info.n = 0;
  EXPECT_THROW(trace_json(rec_->records(), info), ParameterError);
}

TEST_F(TrafficTest, NothingHappensWhenOff) {
  RnsPoly x = wrapped_->make_poly(Basis::range(0, 2));
  rec_->clear();
  rec_->set_enabled(false);
  {
    const OpScope a("A");  // no enabled recorder in the process: no path kept
    EXPECT_EQ(current_op_scope(), "");
    wrapped_->fill_zero(x.ref());
  }
  EXPECT_EQ(rec_->total().calls, 0u);
  EXPECT_TRUE(rec_->records().empty());
  rec_->set_enabled(true);
  wrapped_->fill_zero(x.ref());
  EXPECT_EQ(rec_->total().calls, 1u);
  EXPECT_DOUBLE_EQ(rec_->total().time_us, 0);  // not profiling
}

TEST_F(TrafficTest, ProfilingTimesEveryOp) {
  RnsPoly x = random_poly(*wrapped_, Basis::range(0, 4));
  rec_->clear();
  rec_->set_profiling(true);
  const PolyRef p[] = {x.ref()};
  wrapped_->ntt(p);
  wrapped_->intt(p);
  const auto ops = rec_->by_op();
  EXPECT_GT(ops.at("ntt").time_us, 0);
  EXPECT_GT(ops.at("intt").time_us, 0);
  EXPECT_GT(rec_->total().achieved_gbps(), 0);
}

TEST_F(TrafficTest, CapturedOpsAreRecordedAtEveryReplay) {
  RnsPoly x = random_poly(*wrapped_, Basis::range(0, 3));
  RnsPoly y = wrapped_->make_poly(Basis::range(0, 3));
  rec_->clear();
  std::unique_ptr<CapturedWork> work;
  {
    const OpScope cap("Capture");
    wrapped_->begin_capture();
    {
      const OpScope inner("Step");
      wrapped_->add(x.cref(), x.cref(), y.ref());
    }
    wrapped_->neg(y.cref(), y.ref());
    work = wrapped_->end_capture();
  }
  EXPECT_EQ(rec_->total().calls, 0u);  // nothing ran yet
  {
    const OpScope rep("Replay");
    work->replay();
    work->replay();
  }
  const auto scopes = rec_->by_scope();
  EXPECT_EQ(scopes.at("Replay").calls, 4u);
  EXPECT_EQ(scopes.at("Replay/Step").calls, 2u);
  EXPECT_EQ(work->kernel_count(), 2u);
}

TEST_F(TrafficTest, NullArgumentsAreRejected) {
  EXPECT_THROW(make_recording_backend(nullptr, rec_), ParameterError);
  EXPECT_THROW(make_recording_backend(make_cpu_backend(ring_, 1), nullptr), ParameterError);
}

// The Context wraps its backend when ContextOptions::traffic is set, and KeySwitcher labels its
// three stages.
TEST(TrafficContext, KeySwitchStagesAreScoped) {
  auto rec = std::make_shared<TrafficRecorder>();
  ContextOptions o = test_options();
  o.threads = 2;
  o.wrap_backend = record_traffic(rec);
  const auto ctx = Context::create(load_preset("test_n12"), o);
  KeyGenerator kg(ctx);
  const SecretKey sk = kg.create_secret_key();
  const RelinKey rlk = kg.create_relin_key(sk);
  Evaluator ev(ctx);
  const u32 level = ctx->max_level();
  const LevelData& lv = ctx->level(level);
  Backend& be = ctx->backend();
  RnsPoly d = be.make_poly(lv.q_basis), o0 = be.make_poly(lv.q_basis),
          o1 = be.make_poly(lv.q_basis);
  be.fill_zero(d.ref());
  rec->clear();
  {
    const OpScope s("KeySwitch");
    ev.key_switcher().switch_key(d.cref(), level, rlk.key(), o0.ref(), o1.ref());
  }
  const auto scopes = rec->by_scope();
  ASSERT_TRUE(scopes.count("KeySwitch/ModUp"));
  ASSERT_TRUE(scopes.count("KeySwitch/KeyMult"));
  ASSERT_TRUE(scopes.count("KeySwitch/ModDown"));
  EXPECT_EQ(scopes.at("KeySwitch").calls, rec->total().calls);
  const auto keymult = rec->by_op("KeySwitch/KeyMult");
  ASSERT_TRUE(keymult.count("key_mult"));
  EXPECT_EQ(keymult.at("key_mult").calls, 2u);  // the Q_l part and the P part
  const double digits = static_cast<double>(lv.digits.size());
  const double words = static_cast<double>(lv.limbs + ctx->alpha()) * ctx->n();
  EXPECT_DOUBLE_EQ(keymult.at("key_mult").bytes_read, 3 * digits * words * 4);
}

}  // namespace
}  // namespace theo::test
