#pragma once
// Making a Backend (theo/ring/backend.h) of one of the implementations: the CPU reference
// (backend/cpu/) or the CUDA backend (backend/cuda/). The ring layer knows only the interface;
// this header is where the implementations are named.

#include <memory>
#include <optional>

#include "theo/common/environment.h"
#include "theo/ring/backend.h"

namespace theo {

enum class BackendChoice {
  kAuto,  // THEO_BACKEND (Environment::backend), else CUDA when available, else CPU
  kCpu,
  kCuda,
};

// Replacements for the CUDA backend's tuned kernel parameters (cuda::Tuning); unset fields keep
// the tuned value. Backends without such a parameter ignore it.
struct KernelTuningOverrides {
  bool programmatic_launch = true;  // false: plain stream order instead of dependent launch
  std::optional<u32> ntt_row_otf;
  std::optional<u32> ntt_rows_resident;
  std::optional<u32> ntt_rows_persistent_tiles;
  std::optional<u32> ntt_cols_wide;

  // The THEO_PDL / THEO_NTT_* variables of `env`.
  static KernelTuningOverrides from(const Environment& env);
};

// Everything a backend is made from besides the ring.
struct BackendRequest {
  BackendChoice choice = BackendChoice::kAuto;
  // kAuto only: THEO_BACKEND's value ("cpu", "cuda", or empty for the first available).
  std::string auto_choice;
  unsigned threads = 0;  // CPU backend threads (0: hardware concurrency)
  KernelTuningOverrides tuning;
};

// The backend `request` names; ParameterError for an unknown auto_choice, BackendError when CUDA
// is asked for and not usable.
std::unique_ptr<Backend> make_backend(const RingParams& ring, const BackendRequest& request);
// The CPU reference backend; threads = 0 picks the hardware concurrency.
std::unique_ptr<Backend> make_cpu_backend(const RingParams& ring, unsigned threads = 0);
// The CUDA backend on the current device with its tuned kernel parameters (and `tuning` on top);
// throws BackendError when built without CUDA or no GPU.
std::unique_ptr<Backend> make_cuda_backend(const RingParams& ring,
                                           const KernelTuningOverrides& tuning = {});
// True when this build has the CUDA backend and a usable GPU is present.
bool cuda_available();
// make_backend with kAuto and the environment as it is now: THEO_BACKEND=cpu|cuda overrides;
// otherwise CUDA when available, else CPU.
std::unique_ptr<Backend> make_default_backend(const RingParams& ring);

}  // namespace theo
