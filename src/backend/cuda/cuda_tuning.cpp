// The CUDA backend's tunables: a backend made with a Tuning (environment overrides for unmodified
// programs applied), clamped to the device it runs on, and retuned by benchmark sweeps.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "backend/cuda/cuda_backend_impl.h"

namespace theo::cuda {

namespace {
std::atomic<bool> g_programmatic_launch{false};
}  // namespace

bool programmatic_launch() {
  return g_programmatic_launch.load(std::memory_order_relaxed);
}
void set_programmatic_launch(bool on) {
  g_programmatic_launch.store(on, std::memory_order_relaxed);
}

namespace {
// A tuning field from an environment variable of decimal digits, if set.
void tuning_from_env(const char* name, u32& field) {
  if (const char* e = std::getenv(name); e != nullptr && *e >= '0' && *e <= '9')
    field = static_cast<u32>(std::atoi(e));
}
}  // namespace

std::unique_ptr<Backend> make_backend(const RingParams& ring, const Tuning& tuning) {
  // THEO_PDL=0 turns programmatic launch off for unmodified programs (ablation runs), as
  // THEO_GRAPHS=0 does for graphs; THEO_NTT_* set NttConfig fields for before / after runs
  // (THEO_NTT_ROW_OTF=0: every row twiddle from the table). set_tuning still decides afterwards.
  Tuning t = tuning;
  if (const char* e = std::getenv("THEO_PDL"); e != nullptr && std::string(e) == "0")
    t.programmatic_launch = 0;
  tuning_from_env("THEO_NTT_ROW_OTF", t.ntt.row_otf);
  tuning_from_env("THEO_NTT_ROWS_RESIDENT", t.ntt.rows_resident);
  tuning_from_env("THEO_NTT_ROWS_PERSISTENT_TILES", t.ntt.rows_persistent_tiles);
  tuning_from_env("THEO_NTT_COLS_WIDE", t.ntt.cols_wide);
  return std::make_unique<CudaBackend>(ring, t);
}

void set_tuning(Backend& be, const Tuning& tuning) {
  as_cuda(be).set_tuning(tuning);
}

void CudaBackend::set_tuning(const Tuning& t) {
  tuning_ = t;
  clamp_tuning();
}

void CudaBackend::clamp_tuning() {
  const std::size_t max_words = dev_->props().smem_per_block / sizeof(u32);
  u32 max_log = 0;
  while ((std::size_t{2} << max_log) <= max_words)
    ++max_log;
  tuning_.ntt.tile_log = std::min(tuning_.ntt.tile_log, max_log);
  tuning_.ntt.threads = std::clamp(tuning_.ntt.threads, 32u, 1024u);
  tuning_.elementwise_threads = std::clamp(tuning_.elementwise_threads, 32u, 1024u);
  if (dev_->props().cc_major < 9) tuning_.programmatic_launch = 0;
  set_programmatic_launch(tuning_.programmatic_launch != 0);
}

}  // namespace theo::cuda
