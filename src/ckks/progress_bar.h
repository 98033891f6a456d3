#pragma once
// "[label] [#####-----] 12/45  3.1 s" on one stderr line, redrawn in place: the progress of long
// key generations and of saving and loading large objects (counts of items, or bytes shown in MiB).

#include <chrono>
#include <cstdio>
#include <string>

#include "theo/common.h"

namespace theo::detail {

class ProgressBar {
 public:
  enum class Unit { kItems, kBytes };
  ProgressBar(std::string label, u64 total, bool on, Unit unit = Unit::kItems)
      : label_(std::move(label)), total_(total), on_(on), unit_(unit), start_(Clock::now()) {
    draw();
  }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void step(u64 n = 1) {
    done_ += n;
    draw();
  }
  ~ProgressBar() {
    if (on_) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  void draw() const {
    if (!on_) return;
    constexpr u64 kWidth = 30;
    const u64 fill = total_ ? (done_ >= total_ ? kWidth : done_ * kWidth / total_) : kWidth;
    char bar[kWidth + 1];
    for (u64 i = 0; i < kWidth; ++i)
      bar[i] = i < fill ? '#' : '-';
    bar[kWidth] = 0;
    const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    if (unit_ == Unit::kBytes) {
      std::fprintf(stderr, "\r[%s] [%s] %.1f/%.1f MiB  %.1f s", label_.c_str(), bar,
                   static_cast<double>(done_) / (1 << 20), static_cast<double>(total_) / (1 << 20),
                   secs);
    } else {
      std::fprintf(stderr, "\r[%s] [%s] %llu/%llu  %.1f s", label_.c_str(), bar,
                   static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_),
                   secs);
    }
    std::fflush(stderr);
  }
  std::string label_;
  u64 total_;
  u64 done_ = 0;
  bool on_;
  Unit unit_;
  Clock::time_point start_;
};

}  // namespace theo::detail
