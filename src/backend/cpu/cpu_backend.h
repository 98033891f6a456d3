#pragma once
// The CPU reference backend. Readable kernels, parallel over limbs (and polys x limbs); every
// other backend is tested against it word for word.

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/capture_arena.h"
#include "backend/cpu/host_allocator.h"
#include "backend/fork_state.h"
#include "common/thread_pool.h"
#include "theo/ring/backend.h"
#include "theo/ring/ntt_tables.h"

namespace theo::cpu {

// A recorded call's own copy of a span argument (the caller's storage is gone by replay time).
template <typename T>
std::vector<T> owned(std::span<const T> s) {
  return {s.begin(), s.end()};
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(const RingParams& ring, unsigned threads);

  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string name() const override;

  std::shared_ptr<Allocator> allocator() override;
  bool capturing() const override { return capture_ != nullptr; }
  void abort_capture() noexcept override;
  // One stream: a fork's branch simply runs in issue order (the protocol is still checked).
  void fork() override { fork_.fork(); }
  void end_fork() override { fork_.end_fork(); }
  void join() override { fork_.join(); }
  bool forked() const override { return fork_.open(); }
  std::size_t l2_bytes() const override { return 0; }
  // Live and peak bytes of the host allocator (the arenas' and workspaces' blocks included).
  MemoryReport memory_report() const override;
  std::shared_ptr<CaptureWorkspace> make_capture_workspace() override;

 protected:
  void do_upload(const u32* host, PolyRef dst) override;
  void do_download(ConstPolyRef src, u32* host) override;
  void do_copy(ConstPolyRef src, PolyRef dst) override;
  void do_fill_zero(PolyRef dst) override;
  void do_synchronize() override {}

  // Capture records each op's call (with copies of its span arguments) after the public op
  // checked its arguments, and a replay makes the same calls again (cpu_capture.cpp).
  void do_begin_capture(std::shared_ptr<CaptureWorkspace> workspace) override;
  std::unique_ptr<CapturedWork> do_end_capture() override;

  void do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
              std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override;
  void do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
               std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) override;
  void do_ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                             std::span<const ConstPolyRef> a, u32 first,
                             std::span<const u32> s) override;

  std::shared_ptr<const BConvPlan> do_make_bconv(const Basis& src, const Basis& dst,
                                                 bool exact) override;
  void do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override;
  void do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) override;

  void do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override;
  void do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out) override;
  void do_neg(ConstPolyRef a, PolyRef out) override;
  void do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) override;
  void do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) override;
  void do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override;
  void do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) override;
  void do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                         PolyRef out) override;
  void do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                         PolyRef out) override;
  void do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                 PolyRef d1, PolyRef d2) override;
  void do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                         PolyRef out) override;
  void do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                               std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                               PolyRef out0, PolyRef out1, ConstPolyRef add0) override;
  void do_key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                   std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) override;
  void do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) override;

  void do_automorphism(ConstPolyRef in, u32 k, PolyRef out) override;
  void do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks, PolyRef out,
                           bool accumulate) override;

  void do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                         PolyRef out) override;  // cpu_sampler.cpp

 private:
  // Built on first use: a ring may list many primes that a given run never transforms.
  const NttTable& ntt_table(PrimeId id);
  // src[i] of out[i] = in[src[i]] for phi_k on NTT-domain data.
  std::vector<u32> automorphism_map(u32 k) const;
  // key_mult over all limbs, the digits read through `map` (null: identity).
  void key_mult_rows(std::span<const ConstPolyRef> digits, const u32* map,
                     std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                     PolyRef out0, PolyRef out1);
  // One NTT job per limb of every poly, so a batch of small polys still spreads over all threads
  // (cpu_ntt.cpp).
  struct LimbJob {
    u32* data = nullptr;        // transformed in place
    const u32* src = nullptr;   // read first (== data in place)
    u32* input_copy = nullptr;  // receives the src words (nullable)
    const NttTable* table = nullptr;
    const u32* c = nullptr;    // pre / post constant (nullable)
    const u32* sub = nullptr;  // ntt_sub_mul_scalar: data = (sub - NTT) * s (nullable)
    u32 s = 0;
  };
  std::vector<LimbJob> ntt_jobs(std::span<const PolyRef> polys, std::span<const u32> consts,
                                std::span<const ConstPolyRef> src,
                                std::span<const PolyRef> input_copy);
  void run_transform(const std::vector<LimbJob>& jobs, bool inverse);
  // do_ntt (inverse false) and do_intt (true): the jobs, run now or deferred while capturing.
  void transform(std::span<const PolyRef> polys, std::span<const u32> consts,
                 std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy,
                 bool inverse);
  // do_add and do_sub: out = Op(a, b, q) word by word (cpu_elementwise.cpp).
  template <u32 (*Op)(u32, u32, u32)>
  void binary_mod(ConstPolyRef a, ConstPolyRef b, PolyRef out);
  // do_add_batch and do_sub_batch: the op One on every (a[k], b[k], out[k]) (cpu_elementwise.cpp).
  template <void (CpuBackend::*One)(ConstPolyRef, ConstPolyRef, PolyRef)>
  void binary_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                    std::span<const PolyRef> out);
  // While capturing: keeps `call` (which repeats the op's do_ call, owning its arguments) for
  // the replays instead of running the op, and returns true.
  template <typename Call>
  bool deferred(Call&& call) {
    if (!capture_) return false;
    capture_->calls.emplace_back(std::forward<Call>(call));
    return true;
  }
  // fn(limb) for every limb, in parallel.
  void for_limbs(u32 limbs, const std::function<void(u32)>& fn);
  // out_l[c] = word(c) for every limb l (in parallel) and word c, word = per_limb(l): the limb's
  // constants and pointers made once, the word loop bounded by a local n so stores cannot alias
  // it. Inputs may alias out (each word is read before it is written).
  template <typename PerLimb>
  void map_words(PolyRef out, PerLimb&& per_limb) {
    for_limbs(out.limbs(), [&](u32 l) {
      const u32 n = out.n;
      u32* z = out.limb(l);
      const auto word = per_limb(l);
      for (u32 c = 0; c < n; ++c)
        z[c] = word(c);
    });
  }

  struct Capture {
    std::shared_ptr<CaptureArena> arena;
    std::vector<std::function<void()>> calls;
  };
  std::shared_ptr<HostAllocator> alloc_;
  std::unique_ptr<Capture> capture_;
  ForkState fork_;
  ThreadPool pool_;
  std::vector<u32> brev_;  // bit reversal over log_n bits
  std::unique_ptr<std::once_flag[]> table_once_;
  std::vector<std::unique_ptr<NttTable>> tables_;
};

}  // namespace theo::cpu
