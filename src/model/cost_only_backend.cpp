// make_cost_only_backend (theo/model/cost_only_backend.h): a Backend whose ops compute nothing.

#include "theo/model/cost_only_backend.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "backend/fork_state.h"

namespace theo {

namespace {

// Address space that is never touched: each block gets addresses of its own (aligned like a
// device allocation), so ops still see distinct, non-overlapping operands. Counts live bytes.
class AddressSpace final : public Allocator {
 public:
  u32* allocate(std::size_t words) override {
    const std::size_t bytes = (std::max<std::size_t>(words, 1) * sizeof(u32) + 255) / 256 * 256;
    std::lock_guard lock(mu_);
    const std::uintptr_t at = next_;
    next_ += bytes;
    live_ += words * sizeof(u32);
    peak_ = std::max(peak_, live_);
    return reinterpret_cast<u32*>(at);  // NOLINT(performance-no-int-to-ptr): never dereferenced
  }
  void deallocate(u32*, std::size_t words) noexcept override {
    std::lock_guard lock(mu_);
    live_ -= words * sizeof(u32);
  }
  bool host_accessible() const override { return false; }
  MemoryReport report() const {
    std::lock_guard lock(mu_);
    return {.live_bytes = live_, .peak_bytes = peak_, .device_used = 0, .device_total = 0};
  }

 private:
  mutable std::mutex mu_;
  std::uintptr_t next_ = std::uintptr_t{1} << 44;
  std::size_t live_ = 0;
  std::size_t peak_ = 0;
};

// What a capture of ops that do nothing replays: nothing, as often as asked.
class NoWork final : public CapturedWork {
 public:
  explicit NoWork(std::size_t ops) : ops_(ops) {}
  void replay() override {}
  std::size_t kernel_count() const override { return ops_; }
  std::size_t node_count() const override { return ops_; }

 private:
  std::size_t ops_;
};

class CostOnlyBackend final : public Backend {
 public:
  CostOnlyBackend(const RingParams& ring, std::size_t l2_bytes)
      : Backend(ring), alloc_(std::make_shared<AddressSpace>()), l2_bytes_(l2_bytes) {}

  BackendKind kind() const override { return BackendKind::kCostOnly; }
  std::string name() const override {
    return "cost-only (no computation; planned for an L2 of " + std::to_string(l2_bytes_) +
           " bytes)";
  }

  std::shared_ptr<Allocator> allocator() override { return alloc_; }
  void do_upload(const u32*, PolyRef) override {}
  void do_download(ConstPolyRef src, u32* host) override {
    std::fill(host, host + src.words(), u32{0});
  }
  void do_copy(ConstPolyRef, PolyRef) override { op(); }
  void do_fill_zero(PolyRef) override { op(); }
  void do_synchronize() override {}

  void do_ntt(std::span<const PolyRef>, std::span<const u32>, std::span<const ConstPolyRef>,
              std::span<const PolyRef>) override {
    op();
  }
  void do_intt(std::span<const PolyRef>, std::span<const u32>, std::span<const ConstPolyRef>,
               std::span<const PolyRef>) override {
    op();
  }
  void do_ntt_sub_mul_scalar(std::span<const PolyRef>, std::span<const u32>,
                             std::span<const ConstPolyRef>, u32, std::span<const u32>) override {
    op();
  }

  std::shared_ptr<const BConvPlan> do_make_bconv(const Basis& src, const Basis& dst,
                                                 bool exact) override {
    return std::make_shared<BConvPlan>(make_bconv_table(ring(), src, dst, exact));
  }
  void do_bconv(const BConvPlan&, ConstPolyRef, PolyRef) override { op(); }
  void do_bconv_matmul(const BConvPlan&, ConstPolyRef, PolyRef) override { op(); }
  void do_bconv_matmul_batch(std::span<const BConvJob>) override { op(); }

  void do_add(ConstPolyRef, ConstPolyRef, PolyRef) override { op(); }
  void do_sub(ConstPolyRef, ConstPolyRef, PolyRef) override { op(); }
  void do_add_batch(std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                    std::span<const PolyRef>) override {
    op();
  }
  void do_sub_batch(std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                    std::span<const PolyRef>) override {
    op();
  }
  void do_neg(ConstPolyRef, PolyRef) override { op(); }
  void do_mul(ConstPolyRef, ConstPolyRef, PolyRef) override { op(); }
  void do_mul_add(ConstPolyRef, ConstPolyRef, ConstPolyRef, PolyRef) override { op(); }
  void do_mul_scalar(ConstPolyRef, std::span<const u32>, PolyRef) override { op(); }
  void do_add_scalar(ConstPolyRef, std::span<const u32>, PolyRef) override { op(); }
  void do_mul_scalar_add(ConstPolyRef, std::span<const u32>, ConstPolyRef, PolyRef) override {
    op();
  }
  void do_sub_mul_scalar(ConstPolyRef, ConstPolyRef, std::span<const u32>, PolyRef) override {
    op();
  }
  void do_mul_scalar_sum(std::span<const ConstPolyRef>, std::span<const u32>, PolyRef) override {
    op();
  }
  void do_tensor(ConstPolyRef, ConstPolyRef, ConstPolyRef, ConstPolyRef, PolyRef, PolyRef,
                 PolyRef) override {
    op();
  }
  void do_tensor_scaled(ConstPolyRef, ConstPolyRef, ConstPolyRef, ConstPolyRef, PolyRef, PolyRef,
                        PolyRef, std::span<const u32>) override {
    op();
  }
  void do_key_mult(std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                   std::span<const ConstPolyRef>, PolyRef, PolyRef) override {
    op();
  }
  void do_key_mult_add_scaled(std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                              std::span<const ConstPolyRef>, PolyRef, PolyRef, ConstPolyRef,
                              ConstPolyRef, std::span<const u32>) override {
    op();
  }
  void do_key_mult_automorphed(std::span<const ConstPolyRef>, u32, std::span<const ConstPolyRef>,
                               std::span<const ConstPolyRef>, PolyRef, PolyRef,
                               ConstPolyRef) override {
    op();
  }
  void do_key_mult_rotations(std::span<const ConstPolyRef>, std::span<const u32>,
                             std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                             std::span<const PolyRef>, std::span<const PolyRef>,
                             ConstPolyRef) override {
    op();
  }
  void do_key_mult_sums(std::span<const ConstPolyRef>, std::span<const ConstPolyRef>,
                        std::span<const ConstPolyRef>, std::span<const PolyRef>,
                        std::span<const PolyRef>) override {
    op();
  }
  void do_mul_monomial(ConstPolyRef, i64, PolyRef) override { op(); }
  void do_automorphism(ConstPolyRef, u32, PolyRef) override { op(); }
  void do_automorphism_sum(std::span<const ConstPolyRef>, std::span<const u32>, PolyRef,
                           bool) override {
    op();
  }
  void do_sample_uniform(const std::array<std::uint8_t, 32>&, u64, PolyRef) override { op(); }

  void do_begin_capture(std::shared_ptr<CaptureWorkspace>) override {
    capturing_ = true;
    captured_ = 0;
  }
  std::unique_ptr<CapturedWork> do_end_capture() override {
    capturing_ = false;
    return std::make_unique<NoWork>(captured_);
  }
  void abort_capture() noexcept override { capturing_ = false; }
  bool capturing() const override { return capturing_; }

  void fork() override { fork_.fork(); }
  void end_fork() override { fork_.end_fork(); }
  void join() override { fork_.join(); }
  bool forked() const override { return fork_.open(); }

  std::size_t l2_bytes() const override { return l2_bytes_; }
  MemoryReport memory_report() const override { return alloc_->report(); }

 private:
  void op() {
    if (capturing_) ++captured_;
  }

  std::shared_ptr<AddressSpace> alloc_;
  std::size_t l2_bytes_;
  ForkState fork_;
  std::atomic<bool> capturing_{false};
  std::size_t captured_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cost_only_backend(const RingParams& ring, std::size_t l2_bytes) {
  return std::make_unique<CostOnlyBackend>(ring, l2_bytes);
}

}  // namespace theo
