#pragma once
// What the HELR tests share (test_workloads_helr.cpp, test_helr_replay.cpp): the reduced
// bootstrapping set, MNIST 3 vs 8 at 14 x 14 (python/theodosian/data/mnist14_3v8.bin), random
// mini-batches of distinct images, one iteration's encrypted batch, and the weights' precision
// against the plaintext reference.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ckks/ckks_test_util.h"
#include "theo/workloads/digits.h"
#include "theo/workloads/helr.h"

namespace theo::test {

// An insecure N = 2^12 bootstrapping set with bootparam_40's levels.
inline ParameterSet helr_boot_params() {
  return generated_boot_params(12, 16, 12, 4, 3);
}

struct HelrData {
  std::vector<double> x;  // samples x F
  std::vector<std::uint8_t> labels;
};

// The committed MNIST 3 vs 8 images (label 1: an 8), `features` features each.
inline HelrData mnist_3_vs_8(u32 features) {
  const Digits d =
      load_digits(std::string(THEO_SOURCE_DIR) + "/python/theodosian/data/mnist14_3v8.bin");
  HelrData out;
  std::vector<u32> idx;
  for (u32 i = 0; i < d.count(); ++i) {
    idx.push_back(i);
    out.labels.push_back(d.labels[i] == 8 ? 1 : 0);
  }
  out.x = digit_features(d, idx, features);
  return out;
}

// `iterations` mini-batches of `batch` distinct indices below n each, from a fresh seed (printed).
inline std::vector<u32> random_batches(u32 n, u32 batch, u32 iterations) {
  const u64 seed = std::random_device{}();
  std::printf("batch sampling seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<u32> all(n), batches;
  for (u32 i = 0; i < n; ++i)
    all[i] = i;
  for (u32 t = 0; t < iterations; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    batches.insert(batches.end(), all.begin(), all.begin() + batch);
  }
  return batches;
}

// Iteration t's mini-batch (the images batches[t B .. t B + B - 1], B = cfg.batch), encrypted.
inline Helr::Batch encrypt_iteration(const Helr& helr, Encryptor& enc, const HelrData& data,
                                     const HelrConfig& cfg, const std::vector<u32>& batches,
                                     u32 t) {
  std::vector<double> bx;
  std::vector<std::uint8_t> by;
  for (u32 k = 0; k < cfg.batch; ++k) {
    const u32 i = batches[t * cfg.batch + k];
    bx.insert(bx.end(), data.x.begin() + static_cast<std::ptrdiff_t>(i) * cfg.features,
              data.x.begin() + static_cast<std::ptrdiff_t>(i + 1) * cfg.features);
    by.push_back(data.labels[i]);
  }
  return helr.encrypt_batch(enc, bx, by, t);
}

// The decrypted weights of state s against the plaintext reference: -log2 of their largest error
// relative to max |ref|, which `scale` gets.
inline double weight_bits(const Helr& helr, const Decryptor& dec, const Helr::State& s,
                          const std::vector<double>& ref, double& scale) {
  const std::vector<double> w = helr.decrypt_weights(dec, s);
  double err = 0;
  scale = 0;
  for (std::size_t j = 0; j < ref.size(); ++j) {
    err = std::max(err, std::abs(w[j] - ref[j]));
    scale = std::max(scale, std::abs(ref[j]));
  }
  return -std::log2(err / scale);
}

}  // namespace theo::test
