#pragma once
// What identifies the device a backend runs on, for keying measurements made on it (the
// key-switch tuning table, theo/plan/tuning_table.h): a table measured on one GPU, driver or L2
// size must not configure another.

#include <cstddef>
#include <string>

namespace theo {

class Backend;

struct DeviceFacts {
  std::string kind;          // "cuda" or "cpu"
  std::string name;          // e.g. "NVIDIA H100 80GB HBM3"; the CPU model for the CPU backend
  int sm_count = 0;          // streaming multiprocessors; hardware threads for the CPU backend
  std::size_t l2_bytes = 0;  // the cache key-switch planning fills (Backend::l2_bytes())
  std::string driver;        // e.g. "cuda driver 12040, runtime 12060"; empty for the CPU
  std::string compute_capability;  // e.g. "9.0"; empty for the CPU
  bool operator==(const DeviceFacts&) const = default;
};

// The host CPU's model name (/proc/cpuinfo), "unknown cpu" where it says none.
std::string cpu_model_name();

// The facts of the device `backend` runs on, read at run time (CUDA: the current device's
// properties and the driver version).
DeviceFacts describe_device(const Backend& backend);

}  // namespace theo
