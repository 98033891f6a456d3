#include "theo/workloads/digits.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "theo/errors.h"

namespace theo {

namespace {

u32 read_u32(const std::vector<char>& b, std::size_t at) {
  u32 v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<std::uint8_t>(b[at + i]);
  return v;
}

}  // namespace

Digits load_digits(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParameterError("load_digits: cannot open '" + path + "'");
  const std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t kHeader = 8 + 4 * 4;
  if (b.size() < kHeader || std::memcmp(b.data(), "THEODIGI", 8) != 0) {
    throw ParameterError("load_digits: '" + path + "' is not a digits file (magic)");
  }
  if (read_u32(b, 8) != 1) {
    throw ParameterError("load_digits: '" + path + "' has version " +
                         std::to_string(read_u32(b, 8)) + ", expected 1");
  }
  Digits d;
  const u32 count = read_u32(b, 12);
  d.rows = read_u32(b, 16);
  d.cols = read_u32(b, 20);
  if (count == 0 || d.rows == 0 || d.cols == 0 || d.rows > 1024 || d.cols > 1024 ||
      count > (1u << 24)) {
    throw ParameterError("load_digits: '" + path + "' has an implausible shape");
  }
  const std::size_t pix = static_cast<std::size_t>(count) * d.rows * d.cols;
  if (b.size() != kHeader + count + pix) {
    throw ParameterError("load_digits: '" + path + "' has " + std::to_string(b.size()) +
                         " bytes, its header says " + std::to_string(kHeader + count + pix));
  }
  d.labels.assign(b.begin() + kHeader, b.begin() + kHeader + count);
  d.pixels.assign(b.begin() + kHeader + count, b.end());
  for (u32 i = 0; i < count; ++i) {
    if (d.labels[i] > 9) {
      throw ParameterError("load_digits: label " + std::to_string(i) + " is " +
                           std::to_string(d.labels[i]));
    }
  }
  return d;
}

std::vector<double> digit_features(const Digits& d, std::span<const u32> indices, u32 features) {
  const u32 px = d.rows * d.cols;
  if (features < px + 1) {
    throw ParameterError("digit_features: " + std::to_string(features) + " features for " +
                         std::to_string(px) + " pixels and the bias");
  }
  std::vector<double> out(indices.size() * static_cast<std::size_t>(features), 0);
  for (std::size_t r = 0; r < indices.size(); ++r) {
    const u32 i = indices[r];
    if (i >= d.count()) throw ParameterError("digit_features: an index is out of range");
    double* row = out.data() + r * features;
    row[0] = 1;
    for (u32 p = 0; p < px; ++p)
      row[1 + p] = d.pixels[static_cast<std::size_t>(i) * px + p] / 255.0;
  }
  return out;
}

}  // namespace theo
