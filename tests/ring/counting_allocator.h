#pragma once
// An Allocator for the tests of the capture arenas (test_capture_workspace, test_fork_memory):
// distinct host blocks, and a count of those not yet given back, so a test sees who returns what.

#include <cstddef>
#include <memory>
#include <vector>

#include "theo/ring/poly.h"

namespace theo::test {

class CountingAllocator final : public Allocator {
 public:
  u32* allocate(std::size_t words) override {
    blocks_.push_back(std::make_unique<u32[]>(words));
    ++live_;
    return blocks_.back().get();
  }
  void deallocate(u32*, std::size_t) noexcept override { --live_; }
  bool host_accessible() const override { return true; }
  int live() const { return live_; }

 private:
  std::vector<std::unique_ptr<u32[]>> blocks_;
  int live_ = 0;
};

}  // namespace theo::test
