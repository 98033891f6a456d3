#pragma once
// HELR: binary logistic regression trained on encrypted data by Nesterov's accelerated gradient
// (Han, Hong, Cheon, Park, "Logistic regression on homomorphically encrypted data at scale",
// AAAI 2019), with the sigmoid replaced by its least-squares polynomial on [-bound, bound]
// (circuits/activation_fit.h) and bootstrapping placed by the level planner.
//
// The iteration, for a mini-batch of B samples z_k = y_k (x_k) (y = +-1; x padded to F features,
// one of them a constant 1 for the bias), learning rate gamma = learning_rate / B:
//   g   = sum_k p(-z_k . v) z_k             (p: the sigmoid polynomial)
//   w+  = v + gamma g,     v+ = (1 - eta) w+ + eta w        (eta: HELR's NAG schedule)
// The encrypted state is (w, q) with v = kappa q, kappa = 1 - eta of the previous iteration (1 at
// the start), so that both halves of the state take the same gradient term:
//   w+ = kappa q + gamma g,      q+ = kappa q + rho w + gamma g,     rho = eta / (1 - eta);
// the iteration-dependent constants then multiply the state (off the critical path) and the
// gradient needs only the constant gamma, which rides in a mask.
//
// Packing (better than the paper's, which keeps 2 x 8 weight ciphertexts of 32 features repeated
// 1024 times and reduces each of its 8 gradient ciphertexts with 10 rotations):
//   * complex slots carry two real features each (feature f and f + F/2), so the 1024 x 256
//     mini-batch fills C = 4 ciphertexts of 2^15 slots instead of 8;
//   * the mini-batch is encrypted twice, in the two layouts whose reductions are cheap: rows of
//     F/2 complex features per sample, conjugate-packed, for the inner products (Re(z' v) sums
//     the two halves), and columns of W = slots / B features for the gradient (samples on the
//     outer axis, so the sample sum comes out replicated in the weights' own layout);
//   * each of the two reductions over C ciphertexts is merged (circuits/rotate_sum.h):
//     (a) 4 * 2 + 3 + 5 rotations + 1 conjugation, (c) 4 * 2 + 3 + 8, instead of 4 * 7 and 4 * 8;
//   * the weights are tiled with period F/2 (what both products need, no expansion), and packed
//     with period F = [w | q] into one sparse-slot ciphertext (F complex slots) just before a
//     bootstrapping: one cheap sparse bootstrapping refreshes the whole state, and one rotation
//     and one level split it again.
// Depth per iteration: 2 (inner products) + depth(sigmoid) + 2 (gradient), 6 for degree 3; a
// bootstrapped state (13 levels on bootparam_40, 1 for the split) carries 2 iterations.
//
// Client and server: encrypt_batch / initial_state / decrypt_weights need the client's keys;
// iterate() uses only the evaluation keys that generate_keys() stores in this object. One Helr
// trains one model at a time (iterate() counts bootstrappings: not for concurrent calls).

#include <memory>
#include <span>
#include <vector>

#include "theo/circuits/activation_fit.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/circuits/level_planner.h"
#include "theo/circuits/masked_polynomial.h"
#include "theo/circuits/rotate_sum.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/encryptor.h"
#include "theo/ckks/evaluator.h"
#include "theo/ckks/key_generator.h"

namespace theo {

struct HelrConfig {
  u32 features = 256;  // F: padded feature count incl. the bias column (power of two, >= 4)
  u32 batch = 1024;    // B: mini-batch size (power of two)
  u32 iterations = 32;
  u32 sigmoid_degree = 3;    // 3, 5 or 7 (HELR's fits)
  double sigmoid_bound = 8;  // the fit's range [-bound, bound] for z . v
  // gamma = learning_rate / batch. 0.2 suits features in [0, 1] with ~200 pixels (digits 3 vs 8:
  // 99% held-out accuracy in 32 iterations, inner products within about +-9).
  double learning_rate = 0.2;
  // Rotate-and-sum steps after the merges and of the sigmoid replication: 2, or 4 / 8 with
  // double-hoisted steps (fewer ModUps and ModDowns, more rotation keys).
  u32 reduction_radix = 2;
  // The state is multiplied by this before each bootstrapping and divided after (inside masks,
  // no level): keeps its slots well inside the bootstrapping's input range.
  double bootstrap_scale = 0.25;
};

// HELR's NAG schedule: alpha_0 = 0.01, alpha_(t+1) = (1 + sqrt(1 + 4 alpha_t^2)) / 2,
// eta_t = (1 - alpha_t) / alpha_(t+1).
std::vector<double> helr_eta_schedule(u32 iterations);

// Plaintext reference with the same polynomial, mini-batches and schedule: weights after each
// iteration (iterations x F). x: samples x F (row-major), labels 0/1, batches: iterations x B
// sample indices.
std::vector<std::vector<double>> helr_reference_train(const HelrConfig& cfg,
                                                      std::span<const double> x,
                                                      std::span<const std::uint8_t> labels,
                                                      std::span<const u32> batches);

// Accuracy of w on (x, labels): the share with (x . w > 0) == label.
double helr_accuracy(std::span<const double> w, std::span<const double> x,
                     std::span<const std::uint8_t> labels);

// Wall time of one encrypted iteration by phase (host clock with the backend synchronized at the
// phase boundaries), with the level each phase ran at.
struct HelrPhaseTimes {
  double bootstrap_ms = 0, unpack_ms = 0, inner_product_ms = 0, sigmoid_ms = 0, gradient_ms = 0,
         update_ms = 0;
  u32 bootstrap_limbs = 0, inner_product_limbs = 0, sigmoid_limbs = 0, gradient_limbs = 0;
  u32 key_switches = 0;  // relinearizations, rotations, conjugations in the iteration (w/o boot)
  double total_ms() const {
    return bootstrap_ms + unpack_ms + inner_product_ms + sigmoid_ms + gradient_ms + update_ms;
  }
};

class Helr {
 public:
  struct Batch {
    u32 iteration = 0;
    std::vector<Ciphertext> rows;     // the inner-product layout (conjugate-packed)
    std::vector<Ciphertext> columns;  // the gradient layout
  };
  struct State {
    u32 iteration = 0;  // iterations done
    Ciphertext w, q;    // tiled with period F/2 (empty while packed)
    Ciphertext packed;  // [w | q] with period F, just before a bootstrapping (else empty)
  };

  // Validates the configuration against the parameters and plans the levels (LevelError when an
  // iteration is deeper than a bootstrapping provides): before any key or encryption work.
  // Encodes every mask once.
  Helr(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);
  ~Helr();

  const HelrConfig& config() const { return cfg_; }
  const LevelPlan& plan() const { return plan_; }
  u32 iteration_depth() const { return iteration_depth_; }
  u32 slots() const { return slots_; }      // slots of the data and weight ciphertexts
  u32 ciphertexts() const { return cts_; }  // C, per layout
  const MonomialSeries& sigmoid() const { return sigma_; }  // p(t) ~ 1 / (1 + e^-t)
  const Bootstrapper& bootstrapper() const { return *boot_; }
  std::vector<int> rotations() const;  // besides the bootstrapping's

  // Every evaluation key (bootstrapping's, the workload's rotations), stored here.
  void generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress = true);

  // Client: mini-batch `iteration` (x: B x F row-major, labels 0/1) in both layouts, at the
  // levels the plan gives that iteration. ParameterError for wrong shapes, non-finite values or
  // labels other than 0/1, before any encryption.
  Batch encrypt_batch(Encryptor& enc, std::span<const double> x,
                      std::span<const std::uint8_t> labels, u32 iteration) const;
  // Client: w = v = 0 at the default encryption level.
  State initial_state(Encryptor& enc) const;
  // Client: the F weights (w) of a state.
  std::vector<double> decrypt_weights(const Decryptor& dec, const State& s) const;

  // Server: one iteration (bootstrapping first when the plan says so). `times`: phase breakdown
  // (synchronizes the backend at each phase boundary).
  void iterate(State& s, const Batch& b, HelrPhaseTimes* times = nullptr) const;
  u32 bootstraps() const { return planner_ ? planner_->bootstraps() : 0; }

 private:
  struct Impl;
  std::shared_ptr<const Context> ctx_;
  HelrConfig cfg_;
  MonomialSeries sigma_;
  u32 slots_ = 0, cts_ = 0, half_ = 0, width_ = 0, iteration_depth_ = 0;
  LevelPlan plan_;
  std::unique_ptr<Bootstrapper> boot_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<BootstrappingKeys> keys_;
  std::unique_ptr<LevelPlanner> planner_;
};

}  // namespace theo
