#pragma once
// Graph: a sequence of evaluator calls captured once and replayed (Theodosian §IV-C). CKKS ops
// have no data-dependent control flow, so the kernels a sequence launches are the same every time;
// on the GPU the sequence becomes one CUDA Graph, submitted by one launch instead of one launch
// per kernel (a bootstrapping is over a thousand kernels). On the CPU the backend records the same
// calls, so programs that capture behave alike on both backends.
//
//   Ciphertext out;
//   Graph g = ctx->capture([&] { out = ev.multiply_relin_rescale(a, b, relin); });
//   g.replay();  // out = a * b for a's and b's current contents
//
// Rules (docs/graphs.md):
//  * Nothing runs while capturing; the work runs at each replay(), asynchronously like any op.
//  * Operands are bound by address. Objects read inside (ciphertexts, plaintexts, keys, the
//    Bootstrapper, Evaluator tables) must outlive the Graph; each replay reads their current
//    contents. Objects created inside (outputs) keep their memory, which every replay rewrites.
//  * upload, download, synchronize, encode/decode, encrypt/decrypt and making plans need the host
//    and throw BackendError inside the function (the capture is then dropped).
//  * Read inputs, make outputs. An input reassigned inside the function (ct = ev.add(ct, x), and
//    every Evaluator::*_inplace call, which does exactly that) becomes an output computed from the
//    memory it had before the capture: the graph keeps that memory and reads it at every replay,
//    so replays do not accumulate, and set_input on it has no effect.
//  * One capture at a time per Context, and no other thread may use the Context meanwhile.

#include <cstddef>
#include <functional>
#include <memory>

#include "theo/ckks/ciphertext.h"
#include "theo/ckks/context.h"

namespace theo {

class Graph {
 public:
  Graph() = default;
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // Runs the captured work once more. Throws BackendError while the Context's backend is
  // capturing (nested replays are not recorded: capture the whole sequence instead).
  void replay();

  // Writes value's words into `input`, an operand of the captured work, so that the next replay
  // computes on value. Both must be of this graph's Context with the same level, size and scale
  // (the captured ops are fixed for them). Not allowed while capturing.
  void set_input(Ciphertext& input, const Ciphertext& value) const;
  // The same for a plaintext operand (a mask or a constant vector that changes between replays,
  // e.g. a schedule's per-step factor): same level and scale, and the same slot count.
  void set_input(Plaintext& input, const Plaintext& value) const;

  // False when graphs were disabled (ContextOptions::graphs = false, or ExecutionPolicy::graphs()
  // off): replay() then calls the function again, op by op (the ablation baseline).
  bool captured() const { return work_ != nullptr; }
  // Kernels one replay launches (CUDA: kernel nodes; CPU: recorded backend calls); 0 if not
  // captured.
  std::size_t kernel_count() const;
  // All nodes, memcpy and memset included (CUDA); recorded calls (CPU); 0 if not captured.
  std::size_t node_count() const;
  // Kernel-to-kernel edges with programmatic dependent launch (CUDA, sm_90+), 0 otherwise.
  std::size_t programmatic_edge_count() const;
  const ContextPtr& context() const { return ctx_; }

 private:
  friend class Context;
  Graph(ContextPtr ctx, std::unique_ptr<CapturedWork> work, std::function<void()> eager);

  ContextPtr ctx_;
  std::unique_ptr<CapturedWork> work_;
  std::function<void()> eager_;
};

}  // namespace theo
