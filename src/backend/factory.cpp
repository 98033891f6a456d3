// make_backend and make_default_backend (theo/backend/factory.h): the one place that picks an
// implementation of the Backend interface.

#include "theo/backend/factory.h"

#include <string>

#include "theo/errors.h"

#ifdef THEO_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace theo {

#ifdef THEO_HAVE_CUDA

std::unique_ptr<Backend> make_cuda_backend(const RingParams& ring,
                                           const KernelTuningOverrides& overrides) {
  if (!cuda_available()) throw BackendError("make_cuda_backend: no usable CUDA GPU");
  // The overrides come from the ExecutionPolicy (THEO_PDL, THEO_NTT_* at Context creation) for
  // before / after runs of one binary; cuda::set_tuning still decides afterwards.
  cuda::Tuning t;
  if (!overrides.programmatic_launch) t.programmatic_launch = 0;
  if (overrides.ntt_row_otf) t.ntt.row_otf = *overrides.ntt_row_otf;
  if (overrides.ntt_rows_resident) t.ntt.rows_resident = *overrides.ntt_rows_resident;
  if (overrides.ntt_rows_persistent_tiles)
    t.ntt.rows_persistent_tiles = *overrides.ntt_rows_persistent_tiles;
  if (overrides.ntt_cols_wide) t.ntt.cols_wide = *overrides.ntt_cols_wide;
  return cuda::make_backend(ring, t);
}

bool cuda_available() {
  return cuda::device_available();
}

#else

std::unique_ptr<Backend> make_cuda_backend(const RingParams&, const KernelTuningOverrides&) {
  throw BackendError("make_cuda_backend: this build of theodosian has no CUDA backend");
}

bool cuda_available() {
  return false;
}

#endif

KernelTuningOverrides KernelTuningOverrides::from(const Environment& env) {
  KernelTuningOverrides t;
  t.programmatic_launch = env.programmatic_launch;
  t.ntt_row_otf = env.ntt_row_otf;
  t.ntt_rows_resident = env.ntt_rows_resident;
  t.ntt_rows_persistent_tiles = env.ntt_rows_persistent_tiles;
  t.ntt_cols_wide = env.ntt_cols_wide;
  return t;
}

std::unique_ptr<Backend> make_backend(const RingParams& ring, const BackendRequest& request) {
  switch (request.choice) {
    case BackendChoice::kCpu:
      return make_cpu_backend(ring, request.threads);
    case BackendChoice::kCuda:
      return make_cuda_backend(ring, request.tuning);
    case BackendChoice::kAuto:
      break;
  }
  const std::string& choice = request.auto_choice;
  if (choice == "cpu") return make_cpu_backend(ring, request.threads);
  if (choice == "cuda") return make_cuda_backend(ring, request.tuning);
  if (!choice.empty())
    throw ParameterError("THEO_BACKEND = '" + choice + "': expected 'cpu' or 'cuda'");
  return cuda_available() ? make_cuda_backend(ring, request.tuning)
                          : make_cpu_backend(ring, request.threads);
}

std::unique_ptr<Backend> make_default_backend(const RingParams& ring) {
  const Environment env = Environment::read();
  BackendRequest request;
  request.auto_choice = env.backend;
  request.tuning = KernelTuningOverrides::from(env);
  return make_backend(ring, request);
}

}  // namespace theo
