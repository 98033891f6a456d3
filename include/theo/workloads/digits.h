#pragma once
// Handwritten digits for the workloads: the data file written by scripts/make-digits14 from
// scikit-learn's bundled digits (1797 images of 8 x 8, resized to 14 x 14 bilinearly, pixels
// 0..255); the file is committed (python/theodosian/data/digits14.bin) so nothing is downloaded
// and programs without Python read the same images.
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
