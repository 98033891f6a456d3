#pragma once
// The machinery both HELR layouts share (include/theo/workloads/helr.h): the interface Helr
// dispatches to, the members every form has (configuration, sigmoid, schedule, level plan,
// bootstrapper, keys), the phase clock, and the captured iterations.
//
// An iteration is a list of phases, each a function of an Io object: it reads the Io's inputs
// (the state, the batch and the iteration's constants, through pointers) and the outputs of the
// phases before it, and assigns its own outputs. Eagerly the pointers point at the caller's
// objects. As graphs, one Unit per iteration shape owns clones of the inputs, points its Io at
// them, and captures each phase once; an iteration then writes its state, batch and constants
// into the Unit's clones (Graph::set_input) and replays the phases, whose outputs (the graphs'
// own memory) the next phase's graph reads where the capture found them.
//
// Every phase of every Unit is captured into one CaptureSequence: an iteration replays its Unit's
// phases in order and copies the outputs into the next state before another iteration replays
// anything, so the graphs share their scratch (a bootstrapping's temporaries, the largest).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "theo/ckks/encoder.h"
#include "theo/ckks/graph.h"
#include "theo/ring/op_scope.h"
#include "theo/workloads/helr.h"

namespace theo::detail {

class HelrForm {
 public:
  HelrForm(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);
  virtual ~HelrForm();

  virtual std::vector<int> rotations() const = 0;
  virtual Helr::Batch encrypt_batch(Encryptor& enc, std::span<const double> x,
                                    std::span<const std::uint8_t> labels, u32 iteration) const = 0;
  virtual Helr::State initial_state(Encryptor& enc) const = 0;
  virtual std::vector<double> decrypt_weights(const Decryptor& dec, const Helr::State& s) const = 0;
  // One iteration; `s` is at plan().steps[s.iteration] (checked by Helr::iterate).
  virtual void iterate(Helr::State& s, const Helr::Batch& b, HelrPhaseTimes* times) = 0;
  virtual u32 ciphertexts() const = 0;

  void generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress);
  void use_keys(std::shared_ptr<const BootstrappingKeys> keys);
  const std::shared_ptr<const BootstrappingKeys>& keys() const { return keys_; }

  const HelrConfig& config() const { return cfg_; }
  const Context& context() const { return *ctx_; }
  const LevelPlan& plan() const { return plan_; }
  u32 iteration_depth() const { return iteration_depth_; }
  u32 slots() const { return slots_; }
  const MonomialSeries& sigmoid() const { return sigma_; }
  const Bootstrapper& bootstrapper() const { return *boot_; }
  bool has_keys() const { return keys_ != nullptr; }
  u32 bootstraps() const { return bootstraps_; }
  u32 captured_graphs() const { return captured_graphs_; }
  // Backend memory the captured iterations hold (outputs and shared scratch).
  std::size_t graph_bytes() const { return sequence_.workspace_bytes(); }
  std::size_t captured_kernels() const { return captured_kernels_; }

 protected:
  double kappa(u32 t) const { return t == 0 ? 1.0 : 1 - eta_[t - 1]; }
  double rho(u32 t) const { return eta_[t] / (1 - eta_[t]); }
  double gamma() const { return cfg_.learning_rate / cfg_.batch; }
  bool bootstrap_before(u32 t) const {
    return t < cfg_.iterations && plan_.steps[t].bootstrap_before;
  }
  // A plaintext with every slot = value, at `level` (a schedule factor that graphs replace).
  Plaintext constant(double value, u32 level) const;
  // The state an iteration leaves carries the default scale of its level: its scale drifts from it
  // by ~2^-40 (relative) along the chain of rescales since the last bootstrapping, far below the
  // scheme's noise, and without this relabelling two iterations of one shape could differ in
  // scale, which a captured iteration cannot take (Graph::set_input). Scales further off are left
  // alone (Graph::set_input then names the operand).
  void canonical_scale(Ciphertext& ct) const;
  // Counts and runs one bootstrapping of ct with this form's bootstrapper and keys.
  Ciphertext bootstrap(const Ciphertext& ct) const;
  void count_bootstrap() { ++bootstraps_; }

  // Phase times: `lap(field)` synchronizes and adds the time since the previous lap.
  class Clock {
   public:
    Clock(const Context& ctx, HelrPhaseTimes* times) : ctx_(ctx), times_(times) {
      start_ = std::chrono::steady_clock::now();
    }
    void lap(double HelrPhaseTimes::*field);

   private:
    const Context& ctx_;
    HelrPhaseTimes* times_;
    std::chrono::steady_clock::time_point start_;
  };

  // One phase of an iteration over the form's Io type.
  template <class Io>
  struct Phase {
    const char* scope;             // OpScope name ("Bootstrap", "InnerProduct", ...)
    std::function<void(Io&)> run;  // reads the Io's inputs and earlier outputs, sets its own
    double HelrPhaseTimes::*ms;    // where its time goes
  };

  // Runs the phases eagerly, or replays their graphs (capturing them first on this Unit).
  template <class Io>
  void run_eager(const std::vector<Phase<Io>>& phases, Io& io, Clock& clock) const;
  template <class Io>
  void capture(const std::vector<Phase<Io>>& phases, Io& io, std::vector<Graph>& graphs);
  template <class Io>
  static void replay(const std::vector<Phase<Io>>& phases, std::vector<Graph>& graphs,
                     Clock& clock);
  // Writes values into a captured unit's operands (same shapes).
  void load(const Graph& g, std::vector<Ciphertext>& dst, const std::vector<Ciphertext>& src,
            const char* what) const;
  void load(const Graph& g, const std::vector<Plaintext*>& dst,
            const std::vector<const Plaintext*>& src) const;
  std::vector<Ciphertext> clone_all(const std::vector<Ciphertext>& cts) const;

  std::shared_ptr<const Context> ctx_;
  HelrConfig cfg_;
  MonomialSeries sigma_;
  Encoder encoder_;
  Evaluator ev_;
  std::vector<double> eta_;
  u32 slots_ = 0, iteration_depth_ = 0;
  LevelPlan plan_;
  std::unique_ptr<Bootstrapper> boot_;
  std::shared_ptr<const BootstrappingKeys> keys_;
  CaptureSequence sequence_;  // every Unit's phases

 private:
  u32 bootstraps_ = 0;
  u32 captured_graphs_ = 0;
  std::size_t captured_kernels_ = 0;
};

template <class Io>
void HelrForm::run_eager(const std::vector<Phase<Io>>& phases, Io& io, Clock& clock) const {
  for (const Phase<Io>& p : phases) {
    {
      const OpScope scope(p.scope);
      p.run(io);
    }
    clock.lap(p.ms);
  }
}

template <class Io>
void HelrForm::capture(const std::vector<Phase<Io>>& phases, Io& io, std::vector<Graph>& graphs) {
  for (const Phase<Io>& p : phases) {
    // By value: with graphs off (ExecutionPolicy), every replay calls this function again.
    graphs.push_back(sequence_.capture([&io, run = p.run, name = p.scope] {
      const OpScope scope(name);
      run(io);
    }));
    ++captured_graphs_;
    captured_kernels_ += graphs.back().kernel_count();
  }
}

template <class Io>
void HelrForm::replay(const std::vector<Phase<Io>>& phases, std::vector<Graph>& graphs,
                      Clock& clock) {
  for (std::size_t i = 0; i < phases.size(); ++i) {
    graphs[i].replay();
    clock.lap(phases[i].ms);
  }
}

// The layouts (helr_han.cpp, helr_sparse.cpp).
std::unique_ptr<HelrForm> make_helr_han(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);
std::unique_ptr<HelrForm> make_helr_sparse(std::shared_ptr<const Context> ctx,
                                           const HelrConfig& cfg);

// Shared input checks (helr.cpp).
void check_helr_data(std::span<const double> x, std::span<const std::uint8_t> labels, u32 rows,
                     u32 features, const char* who);

}  // namespace theo::detail
