#pragma once
// Command-line numbers of the apps: the whole argument must be a decimal that fits 32 bits.

#include <optional>
#include <stdexcept>
#include <string>

#include "theo/common.h"

namespace theo::apps {

inline std::optional<u32> parse_u32(const std::string& v) {
  try {
    std::size_t used = 0;
    const unsigned long x = std::stoul(v, &used);
    if (used == v.size() && x <= 0xffffffffUL) return static_cast<u32>(x);
  } catch (const std::logic_error&) {
  }
  return std::nullopt;
}

}  // namespace theo::apps
