// make_recording_backend: a Backend decorator that forwards every call to the wrapped backend and
// records the call's modelled cost (traffic_model.h) in a TrafficRecorder.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "theo/errors.h"
#include "theo/model/traffic.h"
#include "traffic_model.h"

namespace theo {

namespace {

// One op issued while capturing: recorded at every replay.
struct CapturedOp {
  std::string scope;  // relative to the scope begin_capture() was called in
  const char* op = nullptr;
  TrafficCost cost;
  bool marker = false;  // fork / end_fork / join: TrafficRecorder::mark at replay
};

// The relative path of `scope` below `base` ("" when equal; `scope` itself when not below).
std::string relative_scope(const std::string& scope, const std::string& base) {
  if (base.empty()) return scope;
  if (scope == base) return {};
  if (scope.size() > base.size() && scope.compare(0, base.size(), base) == 0 &&
      scope[base.size()] == '/')
    return scope.substr(base.size() + 1);
  return scope;
}

// Wraps the inner backend's CapturedWork: every replay records the captured ops.
class RecordingCapturedWork final : public CapturedWork {
 public:
  RecordingCapturedWork(std::unique_ptr<CapturedWork> inner, Backend& backend,
                        std::shared_ptr<TrafficRecorder> rec, std::vector<CapturedOp> ops)
      : inner_(std::move(inner)), backend_(backend), rec_(std::move(rec)), ops_(std::move(ops)) {}

  void replay() override {
    if (!rec_->enabled()) {
      inner_->replay();
      return;
    }
    double us = 0;
    const bool profile = rec_->profiling();
    if (profile) {
      backend_.synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      inner_->replay();
      backend_.synchronize();
      us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    } else {
      inner_->replay();
    }
    for (const CapturedOp& op : ops_) {
      if (op.marker) {
        rec_->mark(op.op, op.scope);
      } else {
        rec_->record(op.op, op.cost, 0, op.scope);
      }
    }
    if (profile) rec_->record("graph_replay", TrafficCost{}, us);
  }
  std::size_t kernel_count() const override { return inner_->kernel_count(); }
  std::size_t node_count() const override { return inner_->node_count(); }

 private:
  std::unique_ptr<CapturedWork> inner_;
  Backend& backend_;  // the inner backend, which outlives its captured work
  std::shared_ptr<TrafficRecorder> rec_;
  std::vector<CapturedOp> ops_;
};

class RecordingBackend final : public Backend {
 public:
  RecordingBackend(std::unique_ptr<Backend> inner, std::shared_ptr<TrafficRecorder> recorder)
      : Backend(inner->ring()), inner_(std::move(inner)), rec_(std::move(recorder)) {}

  Backend& inner() const { return *inner_; }

  BackendKind kind() const override { return inner_->kind(); }
  std::string name() const override { return inner_->name(); }

  // ---- memory -----------------------------------------------------------------------------
  std::shared_ptr<Allocator> allocator() override { return inner_->allocator(); }
  std::shared_ptr<Allocator> host_staging_allocator() override {
    return inner_->host_staging_allocator();
  }
  void do_upload(const u32* host, PolyRef dst) override {
    run(
        "upload", [&] { return traffic_model::upload(dst); }, [&] { inner_->upload(host, dst); });
  }
  void do_download(ConstPolyRef src, u32* host) override {
    run(
        "download", [&] { return traffic_model::download(src); },
        [&] { inner_->download(src, host); });
  }
  void do_copy(ConstPolyRef src, PolyRef dst) override {
    run(
        "copy", [&] { return traffic_model::copy(src, dst); }, [&] { inner_->copy(src, dst); });
  }
  void do_fill_zero(PolyRef dst) override {
    run(
        "fill_zero", [&] { return traffic_model::write_only(dst); },
        [&] { inner_->fill_zero(dst); });
  }
  void do_synchronize() override { inner_->synchronize(); }

  // ---- NTT --------------------------------------------------------------------------------
  void do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
              std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override {
    transform(false, polys, pre_consts, src, input_copy);
  }
  void do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
               std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override {
    transform(true, polys, post_consts, src, input_copy);
  }
  void do_ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                             std::span<const ConstPolyRef> a, u32 first,
                             std::span<const u32> s) override {
    run(
        "ntt_sub_mul_scalar",
        [&] {
          return traffic_model::ntt_sub_mul_scalar(polys, !pre_consts.empty(), ring_.log_n, a);
        },
        [&] { inner_->ntt_sub_mul_scalar(polys, pre_consts, a, first, s); });
  }

  // ---- basis conversion -------------------------------------------------------------------
  std::shared_ptr<const BConvPlan> do_make_bconv(const Basis& src, const Basis& dst,
                                                 bool exact) override {
    return inner_->make_bconv(src, dst, exact);
  }
  void do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override {
    run(
        "bconv", [&] { return traffic_model::bconv(plan, in, out, true); },
        [&] { inner_->bconv(plan, in, out); });
  }
  void do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override {
    run(
        "bconv_matmul", [&] { return traffic_model::bconv(plan, in, out, false); },
        [&] { inner_->bconv_matmul(plan, in, out); });
  }
  void do_bconv_matmul_batch(std::span<const BConvJob> jobs) override {
    run(
        "bconv_matmul",
        [&] {
          TrafficCost c;
          for (const BConvJob& j : jobs)
            c = traffic_model::sum(c, traffic_model::bconv(*j.plan, j.in, j.out, false));
          return c;
        },
        [&] { inner_->bconv_matmul_batch(jobs); });
  }

  // ---- element-wise -----------------------------------------------------------------------
  void do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    run_elementwise("add", out, 2, 0, [&] { inner_->add(a, b, out); });
  }
  void do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    run_elementwise("sub", out, 2, 0, [&] { inner_->sub(a, b, out); });
  }
  void do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override {
    run(
        "add_batch", [&] { return traffic_model::elementwise_batch(out); },
        [&] { inner_->add_batch(a, b, out); });
  }
  void do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override {
    run(
        "sub_batch", [&] { return traffic_model::elementwise_batch(out); },
        [&] { inner_->sub_batch(a, b, out); });
  }
  void do_neg(ConstPolyRef a, PolyRef out) override {
    run_elementwise("neg", out, 1, 0, [&] { inner_->neg(a, out); });
  }
  void do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) override {
    run_elementwise("mul", out, 2, 1, [&] { inner_->mul(a, b, out); });
  }
  void do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) override {
    run_elementwise("mul_add", out, 3, 1, [&] { inner_->mul_add(a, b, c, out); });
  }
  void do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override {
    run_elementwise("mul_scalar", out, 1, 1, [&] { inner_->mul_scalar(a, s, out); });
  }
  void do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override {
    run_elementwise("add_scalar", out, 1, 0, [&] { inner_->add_scalar(a, s, out); });
  }
  void do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                         PolyRef out) override {
    run_elementwise("mul_scalar_add", out, 2, 1, [&] { inner_->mul_scalar_add(a, s, b, out); });
  }
  void do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                         PolyRef out) override {
    run_elementwise("sub_mul_scalar", out, 2, 1, [&] { inner_->sub_mul_scalar(a, b, s, out); });
  }
  void do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                         PolyRef out) override {
    run(
        "mul_scalar_sum", [&] { return traffic_model::mul_scalar_sum(a, out); },
        [&] { inner_->mul_scalar_sum(a, s, out); });
  }
  void do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                 PolyRef d1, PolyRef d2) override {
    run(
        "tensor", [&] { return traffic_model::tensor(d0); },
        [&] { inner_->tensor(a0, a1, b0, b1, d0, d1, d2); });
  }
  void do_tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                        PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s) override {
    run(
        "tensor", [&] { return traffic_model::tensor(d0); },
        [&] { inner_->tensor_scaled(a0, a1, b0, b1, d0, d1, d2, s); });
  }
  void do_key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                   std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) override {
    run(
        "key_mult", [&] { return traffic_model::key_mult(digits, out0); },
        [&] { inner_->key_mult(digits, kb, ka, out0, out1); });
  }
  void do_key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                              std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                              PolyRef out0, PolyRef out1, ConstPolyRef a0, ConstPolyRef a1,
                              std::span<const u32> s) override {
    // key_mult's words plus a0 and a1 read once; one multiply-add per added word.
    run(
        "key_mult_add_scaled",
        [&] {
          TrafficCost c = traffic_model::key_mult(digits, out0);
          c.bytes_read += 4.0 * static_cast<double>(a0.words() + a1.words());
          c.macs += static_cast<double>(a0.words() + a1.words());
          return c;
        },
        [&] { inner_->key_mult_add_scaled(digits, kb, ka, out0, out1, a0, a1, s); });
  }
  void do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                               std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                               PolyRef out0, PolyRef out1, ConstPolyRef add0) override {
    // Same words moved as key_mult (the digits are gathered through the permutation), plus add0.
    run(
        "key_mult_automorphed",
        [&] {
          TrafficCost c = traffic_model::key_mult(digits, out0);
          c.bytes_read += 4.0 * static_cast<double>(add0.words());
          return c;
        },
        [&] { inner_->key_mult_automorphed(digits, g, kb, ka, out0, out1, add0); });
  }
  void do_key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                             std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                             std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                             ConstPolyRef add0) override {
    // The digits (and add0) once for all rotations; each rotation's keys and outputs.
    run(
        "key_mult_rotations",
        [&] {
          TrafficCost c;
          for (std::size_t r = 0; r < gs.size(); ++r) {
            TrafficCost one = traffic_model::key_mult(digits, out0[r]);
            if (r > 0) one.bytes_read -= 4.0 * static_cast<double>(digits.size() * out0[r].words());
            c = traffic_model::sum(c, one);
          }
          c.bytes_read += 4.0 * static_cast<double>(add0.words());
          return c;
        },
        [&] { inner_->key_mult_rotations(digits, gs, kb, ka, out0, out1, add0); });
  }
  void do_key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                        std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                        std::span<const PolyRef> out1) override {
    // kb / ka once for all sums, every present d once, every output written once.
    run(
        "key_mult_sums",
        [&] {
          TrafficCost c;
          if (out0.empty()) return c;
          double dwords = 0;
          for (const ConstPolyRef& x : d)
            dwords += static_cast<double>(x.words());
          const double w = static_cast<double>(out0[0].words());
          c.polys = static_cast<u32>(2 * out0.size());
          c.limbs = static_cast<u32>(2 * out0.size()) * out0[0].limbs();
          c.n = out0[0].n;
          c.bytes_read = 4.0 * (dwords + 2.0 * w * static_cast<double>(kb.size()));
          c.bytes_written = 4.0 * 2.0 * w * static_cast<double>(out0.size());
          c.macs = 2.0 * dwords;
          return c;
        },
        [&] { inner_->key_mult_sums(d, kb, ka, out0, out1); });
  }
  void do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) override {
    run_elementwise("mul_monomial", out, 1, 1, [&] { inner_->mul_monomial(a, k, out); });
  }

  // ---- automorphism -----------------------------------------------------------------------
  void do_automorphism(ConstPolyRef in, u32 k, PolyRef out) override {
    run_elementwise("automorphism", out, 1, 0, [&] { inner_->automorphism(in, k, out); });
  }
  void do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks, PolyRef out,
                           bool accumulate) override {
    run(
        "automorphism_sum", [&] { return traffic_model::automorphism_sum(ins, out, accumulate); },
        [&] { inner_->automorphism_sum(ins, ks, out, accumulate); });
  }

  // ---- capture ----------------------------------------------------------------------------
  std::shared_ptr<CaptureWorkspace> make_capture_workspace() override {
    return inner_->make_capture_workspace();
  }
  void do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) override {
    inner_->begin_capture(std::move(workspace));
    captured_.clear();
    capture_base_ = current_op_scope();
    capturing_ = true;
  }
  std::unique_ptr<CapturedWork> do_end_capture() override {
    std::unique_ptr<CapturedWork> work = inner_->end_capture();
    capturing_ = false;
    return std::make_unique<RecordingCapturedWork>(std::move(work), *inner_, rec_,
                                                   std::move(captured_));
  }
  void abort_capture() noexcept override {
    inner_->abort_capture();
    capturing_ = false;
    captured_.clear();
  }
  bool capturing() const override { return inner_->capturing(); }

  // ---- second stream and cache: forwarded (no traffic of their own) -------------------------
  void fork() override {
    inner_->fork();
    mark("fork");
  }
  void end_fork() override {
    inner_->end_fork();
    mark("end_fork");
  }
  bool forked() const override { return inner_->forked(); }
  void join() override {
    inner_->join();
    mark("join");
  }
  std::size_t l2_bytes() const override { return inner_->l2_bytes(); }
  void set_bconv_refined(bool on) override { inner_->set_bconv_refined(on); }

  // ---- sampling ---------------------------------------------------------------------------
  void do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                         PolyRef out) override {
    run(
        "sample_uniform", [&] { return traffic_model::write_only(out); },
        [&] { inner_->sample_uniform(seed, stream_id, out); });
  }
  MemoryReport memory_report() const override { return inner_->memory_report(); }
  void profiler_range(bool on) override { inner_->profiler_range(on); }

 private:
  // ntt (inverse false) and intt: one cost model for both directions.
  void transform(bool inverse, std::span<const PolyRef> polys, std::span<const u32> consts,
                 std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) {
    run(
        inverse ? "intt" : "ntt",
        [&] {
          return traffic_model::ntt(polys, !consts.empty(), ring_.log_n, !input_copy.empty());
        },
        [&] {
          if (inverse)
            inner_->intt(polys, consts, src, input_copy);
          else
            inner_->ntt(polys, consts, src, input_copy);
        });
  }
  // An element-wise op writing `out` from `inputs` operands with macs_per_word multiply-adds a
  // word (traffic_model::elementwise).
  template <typename OpFn>
  void run_elementwise(const char* name, PolyRef out, u32 inputs, u32 macs_per_word, OpFn&& op) {
    run(
        name, [&] { return traffic_model::elementwise(out, inputs, macs_per_word); }, op);
  }
  // Forwards `op`; when recording, adds `cost()` (and in profiling mode the op's wall time
  // between two synchronizations) to the recorder after the op returned without throwing.
  // While capturing, the op only joins the capture (recorded at each replay).
  template <typename CostFn, typename OpFn>
  void run(const char* name, CostFn&& cost, OpFn&& op) {
    if (capturing_) {
      op();
      captured_.push_back(
          CapturedOp{relative_scope(current_op_scope(), capture_base_), name, cost()});
      return;
    }
    if (!rec_->enabled()) {
      op();
      return;
    }
    const TrafficCost c = cost();
    double us = 0;
    if (rec_->profiling()) {
      inner_->synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      op();
      inner_->synchronize();
      us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    } else {
      op();
    }
    rec_->record(name, c, us);
  }

  // A stream marker (after the inner backend accepted the call), captured like an op.
  void mark(const char* name) {
    if (capturing_) {
      captured_.push_back(
          CapturedOp{relative_scope(current_op_scope(), capture_base_), name, TrafficCost{}, true});
    } else if (rec_->enabled()) {
      rec_->mark(name);
    }
  }

  std::unique_ptr<Backend> inner_;
  std::shared_ptr<TrafficRecorder> rec_;
  bool capturing_ = false;
  std::string capture_base_;
  std::vector<CapturedOp> captured_;
};

}  // namespace

std::unique_ptr<Backend> make_recording_backend(std::unique_ptr<Backend> inner,
                                                std::shared_ptr<TrafficRecorder> recorder) {
  if (!inner) throw ParameterError("make_recording_backend: the inner backend is null");
  if (!recorder) throw ParameterError("make_recording_backend: the TrafficRecorder is null");
  return std::make_unique<RecordingBackend>(std::move(inner), std::move(recorder));
}

Backend& unwrap_recording_backend(Backend& be) {
  Backend* p = &be;
  while (auto* r = dynamic_cast<RecordingBackend*>(p))
    p = &r->inner();
  return *p;
}

}  // namespace theo

namespace theo {

std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> record_traffic(
    std::shared_ptr<TrafficRecorder> recorder) {
  if (!recorder) throw ParameterError("record_traffic: the recorder is null");
  return [recorder = std::move(recorder)](std::unique_ptr<Backend> inner) {
    return make_recording_backend(std::move(inner), recorder);
  };
}

}  // namespace theo
