#include "theo/ring/basis.h"

namespace theo {

std::string to_string(const Basis& b) {
  std::string s = "{";
  for (u32 i = 0; i < b.size; ++i) {
    if (i) s += ',';
    s += std::to_string(static_cast<unsigned>(b.ids[i]));
  }
  s += '}';
  return s;
}

}  // namespace theo
