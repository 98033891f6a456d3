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
// the iteration-dependent constants multiply the state off the critical path, and gamma rides
// in a mask that is applied anyway.
//
// Two layouts (docs/workloads.md has the tables):
//   * kHan2019, the paper's form (what Theodosian's and Cheddar's ms/it measure): the mini-batch
//     in C = F B / (N/2) full-slot ciphertexts of B rows x W = N/(2B) features (real slots),
//     the weights w and q replicated over the B rows in C ciphertexts each; inner products by
//     products summed over the C blocks and rotate-and-sum over the W columns, the sigmoid at
//     each row's first column, replicated over the row, the gradient by products and
//     rotate-and-sum over the B rows. Before a bootstrapping the 2C weight ciphertexts are packed
//     into one full-slot ciphertext (block b in the rows = b mod 2C) and bootstrapped at full
//     slots; the unpacking's masks ride in the products that follow (the next inner product's data
//     side and the update), so it costs no level: depth 2 + depth(p) per iteration (4 for
//     degree 3), 3 iterations per bootstrapping on bootparam_40.
//   * kSparseWeights, the library's fast variant: complex slots carry two features, the mini-batch
//     is encrypted in a rows layout (inner products) and a columns layout (gradient) whose merged
//     reductions are cheap, and the state [w | q] is packed into one sparse ciphertext of F slots
//     for a cheap sparse bootstrapping every third iteration (depth 4 per iteration).
//
// Graphs (HelrConfig::graphs, docs/graphs.md): each iteration's phases are captured once per
// distinct shape (levels, bootstrapping before it) and replayed, with the iteration's batch,
// state and schedule constants written into the captured operands first; the words are those of
// eager execution.
//
// Client and server: encrypt_batch / initial_state / decrypt_weights need the client's keys;
// iterate() uses only the evaluation keys that generate_keys() stores in this object. One Helr
// trains one model at a time (iterate() counts bootstrappings and keeps the captured graphs: not
// for concurrent calls).

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "theo/circuits/activation_fit.h"
#include "theo/circuits/bootstrapper.h"
#include "theo/circuits/level_planner.h"
#include "theo/ckks/encryptor.h"
#include "theo/ckks/evaluator.h"
#include "theo/ckks/key_generator.h"

namespace theo {

enum class HelrLayout {
  kSparseWeights,  // the fast variant ("sparse-weights")
  kHan2019,        // Han et al.'s layout ("han2019")
};
// "sparse-weights" / "han2019".
const char* to_string(HelrLayout layout);
// The inverse of to_string; ParameterError naming the accepted names.
HelrLayout helr_layout_from_string(std::string_view name);

struct HelrConfig {
  HelrLayout layout = HelrLayout::kSparseWeights;
  u32 features = 256;  // F: padded feature count incl. the bias column (power of two, >= 4)
  u32 batch = 1024;    // B: mini-batch size (power of two)
  u32 iterations = 32;
  u32 sigmoid_degree = 3;    // 3, 5 or 7 (HELR's fits)
  double sigmoid_bound = 8;  // the fit's range [-bound, bound] for z . v
  // gamma = learning_rate / batch. 0.2 suits features in [0, 1] with ~200 pixels (digits 3 vs 8:
  // 99% held-out accuracy in 32 iterations, inner products within about +-9).
  double learning_rate = 0.2;
  // Rotate-and-sum steps: 2, or 4 / 8 with double-hoisted steps (fewer ModUps and ModDowns, more
  // rotation keys). Sparse weights: the steps after the merges and of the sigmoid replication;
  // Han: the column sums and the replication (the row sums of the C gradient ciphertexts run as
  // radix-2 steps batched over the C ciphertexts).
  u32 reduction_radix = 2;
  // The state is multiplied by this before each bootstrapping and divided after (inside masks,
  // no level): keeps its slots well inside the bootstrapping's input range.
  double bootstrap_scale = 0.25;
  // Replay each iteration's phases from graphs captured once per iteration shape (false: op by
  // op). Same words either way.
  bool graphs = true;
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

// The phases of an iteration by name, each with its time in HelrPhaseTimes: the one list the
// reports (Python's times dict, the benchmark's records) walk.
struct HelrPhase {
  const char* name;
  double HelrPhaseTimes::*ms;
};
inline constexpr HelrPhase kHelrPhases[] = {
    {"bootstrap", &HelrPhaseTimes::bootstrap_ms},         {"unpack", &HelrPhaseTimes::unpack_ms},
    {"inner_product", &HelrPhaseTimes::inner_product_ms}, {"sigmoid", &HelrPhaseTimes::sigmoid_ms},
    {"gradient", &HelrPhaseTimes::gradient_ms},           {"update", &HelrPhaseTimes::update_ms}};

namespace detail {
class HelrForm;  // one layout's circuit (src/workloads/helr_form.h)
}

class Helr {
 public:
  struct Batch {
    u32 iteration = 0;
    // The mini-batch as the inner products read it and as the gradient reads it: Han, the same C
    // ciphertexts at two levels; sparse weights, the rows and the columns layouts.
    std::vector<Ciphertext> inner, gradient;
  };
  struct State {
    u32 iteration = 0;             // iterations done
    std::vector<Ciphertext> w, q;  // C ciphertexts each (Han), one each (sparse weights)
    Ciphertext packed;             // sparse weights: [w | q] just before a bootstrapping
  };

  // Validates the configuration against the parameters and plans the levels (LevelError when an
  // iteration is deeper than a bootstrapping provides): before any key or encryption work.
  // Encodes every mask and schedule constant once.
  Helr(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);
  ~Helr();

  const HelrConfig& config() const { return cfg_; }
  const LevelPlan& plan() const;
  u32 iteration_depth() const;
  u32 slots() const;                      // slots of the data and weight ciphertexts
  u32 ciphertexts() const;                // data ciphertexts per mini-batch layout (C)
  const MonomialSeries& sigmoid() const;  // p(t) ~ 1 / (1 + e^-t)
  const Bootstrapper& bootstrapper() const;
  std::vector<int> rotations() const;  // besides the bootstrapping's

  // Every evaluation key (bootstrapping's, the workload's rotations), stored here.
  void generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress = true);
  // The keys generate_keys() made (null before), and the server side's way in: keys made by
  // another Helr of the same Context and configuration, or loaded (circuits/bootstrapping_keys_io).
  // MissingKeyError naming the first rotation they lack; ContextError for another Context's keys.
  std::shared_ptr<const BootstrappingKeys> keys() const;
  void use_keys(std::shared_ptr<const BootstrappingKeys> keys);

  // Client: mini-batch `iteration` (x: B x F row-major, labels 0/1) in the layout's ciphertexts,
  // at the levels the plan gives that iteration. ParameterError for wrong shapes, non-finite
  // values or labels other than 0/1, before any encryption.
  Batch encrypt_batch(Encryptor& enc, std::span<const double> x,
                      std::span<const std::uint8_t> labels, u32 iteration) const;
  // Client: w = v = 0 at the default encryption level.
  State initial_state(Encryptor& enc) const;
  // Client: the F weights (w) of a state.
  std::vector<double> decrypt_weights(const Decryptor& dec, const State& s) const;

  // Server: one iteration (bootstrapping first when the plan says so). `times`: phase breakdown
  // (synchronizes the backend at each phase boundary).
  void iterate(State& s, const Batch& b, HelrPhaseTimes* times = nullptr) const;
  // Bootstrappings run so far (counted where they run, replays included).
  u32 bootstraps() const;
  // Graphs captured so far (one per phase of each distinct iteration shape) and the kernels
  // their replays launch for one iteration of each shape.
  u32 captured_graphs() const;
  std::size_t captured_kernels() const;

 private:
  HelrConfig cfg_;
  std::unique_ptr<detail::HelrForm> form_;
};

}  // namespace theo
