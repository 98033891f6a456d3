#pragma once
// The ring's device tables of one CUDA backend: the moduli and every form of the NTT twiddles the
// kernels read (RingTables, kernels.h), built on the host and uploaded once, plus N^-1 per prime
// for the constants the inverse transform folds in. Immutable after construction.

#include <memory>
#include <vector>

#include "backend/cuda/device.h"
#include "backend/cuda/kernels.h"
#include "theo/ring/backend.h"

namespace theo::cuda {

class DeviceTables {
 public:
  // Throws BackendError when a prime's table has a zero twiddle (the row kernels rebuild w from
  // w' assuming w != 0).
  DeviceTables(const RingParams& ring, const std::vector<Modulus>& moduli,
               const std::shared_ptr<Device>& dev);

  const RingTables& ring() const { return tables_; }
  const Modulus* mods() const { return mods_.get(); }
  // N^-1 mod q of prime `id` in Montgomery form.
  u32 n_inv_mont(PrimeId id) const { return n_inv_mont_[id]; }

 private:
  DeviceArray<Modulus> mods_;
  DeviceArray<i32> fwd_, inv_;
  DeviceArray<uint2> fwd_s_, inv_s_;
  DeviceArray<u32> fwd_wp_, inv_wp_;
  DeviceArray<i32> fwd_rowf_, inv_rowf_;
  RingTables tables_;
  std::vector<u32> n_inv_mont_;
};

}  // namespace theo::cuda
