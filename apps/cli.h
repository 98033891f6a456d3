#pragma once
// Command-line values of the tools (apps/ and bench/): a number, where the whole argument must be a
// decimal that fits 32 bits, and a list.

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// The items of a list separated by `sep`, empty ones dropped ("a,,b": a and b).
inline std::vector<std::string> split_list(const std::string& s, char sep = ',') {
  std::vector<std::string> items;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace theo::apps
