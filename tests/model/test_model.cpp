// The model layer: GPU descriptors are the probe runs' numbers, and the cost-only backend records
// the op trace a computing backend records (the same calls, scopes, shapes and costs) without
// computing it.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "circuits/circuits_test_util.h"
#include "ckks/ckks_test_util.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/model/cost_only_backend.h"
#include "theo/model/report.h"

namespace theo::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void expect_same_gpu(const GpuDescriptor& a, const GpuDescriptor& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.sms, b.sms);
  EXPECT_EQ(a.l2_bytes, b.l2_bytes);
  EXPECT_DOUBLE_EQ(a.memory_gib, b.memory_gib);
  EXPECT_DOUBLE_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(a.dram_copy_gbps, b.dram_copy_gbps);
  EXPECT_DOUBLE_EQ(a.dram_read_gbps, b.dram_read_gbps);
  EXPECT_DOUBLE_EQ(a.l2_read_gbps, b.l2_read_gbps);
  EXPECT_DOUBLE_EQ(a.l2_read_write_gbps, b.l2_read_write_gbps);
  EXPECT_DOUBLE_EQ(a.int32_mad_gops, b.int32_mad_gops);
  EXPECT_DOUBLE_EQ(a.int32_mulhi_gops, b.int32_mulhi_gops);
  EXPECT_DOUBLE_EQ(a.montgomery_gmodmul, b.montgomery_gmodmul);
  EXPECT_DOUBLE_EQ(a.launch_stream_us, b.launch_stream_us);
  EXPECT_DOUBLE_EQ(a.launch_graph_us, b.launch_graph_us);
  EXPECT_DOUBLE_EQ(a.round_trip_us, b.round_trip_us);
}

// The built-in descriptors are what gpu_from_probe reads from the probe outputs they cite.
TEST(GpuDescriptors, AreTheProbeRuns) {
  ASSERT_EQ(known_gpus().size(), 2u);
  for (const GpuDescriptor& g : known_gpus()) {
    const std::string text = read_text(std::string(THEO_SOURCE_DIR) + "/" + g.source);
    ASSERT_FALSE(text.empty()) << g.source;
    expect_same_gpu(gpu_from_probe(text, g.key, g.source), g);
    expect_same_gpu(gpu_from_json(to_json(g)), g);
  }
  const GpuDescriptor& h100 = *find_gpu("h100");
  EXPECT_EQ(h100.l2_bytes, std::size_t{50} << 20);
  EXPECT_DOUBLE_EQ(h100.l2_read_write_gbps, 6244.0);  // the best of the sizes that fit its L2
  EXPECT_DOUBLE_EQ(h100.l2_us(6244e3), 1.0);
  EXPECT_EQ(find_gpu("cuda (NVIDIA H200)")->key, "h200");  // a CUDA backend's name
  EXPECT_EQ(find_gpu("NVIDIA H100 80GB HBM3")->key, "h100");
  EXPECT_EQ(find_gpu("H200")->key, "h200");
  EXPECT_EQ(find_gpu("cpu (2 threads)"), nullptr);
  EXPECT_EQ(load_gpu("h200").key, "h200");
  EXPECT_EQ(load_gpu(std::string(THEO_SOURCE_DIR) + "/" + h100.source).dram_copy_gbps,
            h100.dram_copy_gbps);
  EXPECT_THROW(load_gpu("rtx9090"), ParameterError);
  EXPECT_THROW(gpu_from_probe("not a probe", "x", "-"), ParameterError);
}

struct RecordedRun {
  std::vector<TrafficRecord> records;
  MemoryReport memory;
};

// A bootstrapping of test_boot_n12 recorded op by op, on the CPU or on the cost-only backend.
RecordedRun record_bootstrap(bool cost_only) {
  auto rec = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.keep_records = true});
  rec->set_enabled(false);
  ContextOptions o = test_options();
  o.threads = 2;
  if (cost_only) o.make_backend = [](const RingParams& r) { return make_cost_only_backend(r); };
  o.wrap_backend = record_traffic(rec);
  BootstrapConfig cfg;
  cfg.slots = 16;
  SeededBootEnv e(Context::create(load_preset("test_boot_n12"), o), cfg, 7, 8);
  const Ciphertext ct = e.encrypt(random_slots(16), 0);
  rec->set_enabled(true);
  {
    const OpScope scope("Boot");
    const Ciphertext out = e.boot.bootstrap(ct, e.keys);
  }
  rec->set_enabled(false);
  return {rec->records(), e.ctx->backend().memory_report()};
}

TEST(CostOnlyBackend, RecordsTheTraceOfAComputingBackend) {
  const RecordedRun cpu = record_bootstrap(false);
  const RecordedRun model = record_bootstrap(true);
  ASSERT_GT(cpu.records.size(), 100u);
  ASSERT_EQ(model.records.size(), cpu.records.size());
  for (std::size_t i = 0; i < cpu.records.size(); ++i) {
    const TrafficRecord& a = cpu.records[i];
    const TrafficRecord& b = model.records[i];
    ASSERT_EQ(b.scope, a.scope) << "call " << i;
    ASSERT_EQ(b.op, a.op) << "call " << i;
    EXPECT_EQ(b.cost.polys, a.cost.polys) << "call " << i;
    EXPECT_EQ(b.cost.limbs, a.cost.limbs) << "call " << i;
    EXPECT_EQ(b.cost.n, a.cost.n) << "call " << i;
    EXPECT_EQ(b.cost.bytes_read, a.cost.bytes_read) << "call " << i;
    EXPECT_EQ(b.cost.bytes_written, a.cost.bytes_written) << "call " << i;
    EXPECT_EQ(b.cost.table_bytes, a.cost.table_bytes) << "call " << i;
    EXPECT_EQ(b.cost.macs, a.cost.macs) << "call " << i;
  }
  EXPECT_GT(model.memory.peak_bytes, 0u);  // the run's live memory, counted without any
}

TEST(CostOnlyBackend, ComputesNothingAndKeepsTheProtocol) {
  RingParams ring;
  ring.log_n = 10;
  ring.primes = {12289};
  const auto be = make_cost_only_backend(ring, 1u << 20);
  EXPECT_EQ(be->kind(), BackendKind::kCostOnly);
  EXPECT_EQ(be->l2_bytes(), 1u << 20);
  RnsPoly a = be->make_poly(Basis::range(0, 1)), b = be->make_poly(Basis::range(0, 1));
  EXPECT_NE(a.data(), b.data());
  std::vector<u32> host(a.words(), 7);
  be->upload(host.data(), a.ref());
  be->add(a.cref(), a.cref(), b.ref());
  be->download(b.cref(), host.data());
  EXPECT_EQ(host[0], 0u);  // nothing was computed
  EXPECT_GE(be->memory_report().live_bytes, 2 * a.words() * 4);
  be->begin_capture();
  EXPECT_THROW(be->upload(host.data(), a.ref()), BackendError);
  be->add(a.cref(), a.cref(), b.ref());
  const auto work = be->end_capture();
  EXPECT_EQ(work->kernel_count(), 1u);
  work->replay();
  be->fork();
  EXPECT_TRUE(be->forked());
  EXPECT_THROW(be->download(b.cref(), host.data()), BackendError);
  be->end_fork();
  be->join();
}

TEST(Reports, TotalsAgainstTheCeilings) {
  auto rec = std::make_shared<TrafficRecorder>(TrafficRecorderOptions{.keep_records = true});
  RingParams ring;
  ring.log_n = 10;
  ring.primes = {12289, 40961};
  const auto be = make_recording_backend(make_cost_only_backend(ring), rec);
  RnsPoly a = be->make_poly(Basis::range(0, 2));
  {
    const OpScope scope("Step");
    const PolyRef p[] = {a.ref()};
    be->ntt(p);
    be->add(a.cref(), a.cref(), a.ref());
  }
  const std::vector<TrafficRecord> calls = rec->records();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].op, "ntt");
  EXPECT_EQ(calls[0].scope, "Step");
  EXPECT_EQ(calls[0].cost.limbs, 2u);
  EXPECT_EQ(calls[0].cost.n, 1024u);
  EXPECT_GT(calls[0].cost.macs, 0);
  EXPECT_EQ(calls[1].cost.bytes_written, 2 * 1024 * 4);
  const GpuDescriptor& gpu = *find_gpu("h100");
  const nlohmann::json t = totals_json(rec->total(), gpu, 0);
  EXPECT_EQ(t["calls"], 2);
  EXPECT_EQ(key_switch_steps(*rec).size(), 0u);
  EXPECT_DOUBLE_EQ(t["bound_l2_us"].get<double>(), gpu.l2_us(rec->total().bytes()));
  EXPECT_EQ(ops_json(*rec, "Step", 1, gpu).size(), 2u);
}

}  // namespace
}  // namespace theo::test
