// describe_device (theo/backend/device_facts.h).

#include "theo/backend/device_facts.h"

#include <fstream>
#include <string>
#include <thread>

#include "theo/ring/backend.h"

#ifdef THEO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace theo {

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "unknown cpu";
}

DeviceFacts describe_device(const Backend& backend) {
  DeviceFacts f;
  f.l2_bytes = backend.l2_bytes();
  if (backend.kind() == BackendKind::kCpu) {
    f.kind = "cpu";
    f.name = cpu_model_name();
    f.sm_count = static_cast<int>(std::thread::hardware_concurrency());
    return f;
  }
  f.kind = "cuda";
  // Backend::name() is "cuda (<device name>)".
  const std::string full = backend.name();
  const auto open = full.find('('), close = full.rfind(')');
  f.name = open != std::string::npos && close != std::string::npos && close > open
               ? full.substr(open + 1, close - open - 1)
               : full;
#ifdef THEO_HAVE_CUDA
  int device = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&p, device) == cudaSuccess) {
    f.sm_count = p.multiProcessorCount;
    f.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  f.driver = "cuda driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
#endif
  return f;
}

}  // namespace theo
