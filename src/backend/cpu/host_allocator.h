#pragma once
// Host heap memory for the CPU backend, cache-line aligned so limbs start on a line.

#include "theo/ring/poly.h"

namespace theo::cpu {

class HostAllocator final : public Allocator {
 public:
  static constexpr std::size_t kAlignment = 64;
  u32* allocate(std::size_t words) override;
  void deallocate(u32* ptr, std::size_t words) noexcept override;
  bool host_accessible() const override { return true; }
};

}  // namespace theo::cpu
