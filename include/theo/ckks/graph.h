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
//
// A chain of graphs (the layers of a network, the phases of an iteration) is captured through one
// CaptureSequence, so that the graphs share their scratch memory (below).

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
  friend class CaptureSequence;
  Graph(ContextPtr ctx, std::unique_ptr<CapturedWork> work, std::function<void()> eager);

  ContextPtr ctx_;
  std::unique_ptr<CapturedWork> work_;
  std::function<void()> eager_;
};

// CaptureSequence: graphs captured one after another that share one workspace for their scratch.
// Each graph alone keeps every block it ever used, so a chain of graphs (one per layer of a
// network) holds the sum of their temporaries. The graphs of one sequence replay one at a time on
// the backend's stream, so a temporary of one graph is dead once that graph's replay ends: the
// blocks a capture makes and frees go back to the workspace when it ends, and later captures of
// the sequence take them. The sequence then holds its outputs plus about the largest scratch of
// one graph.
//
//   CaptureSequence seq(ctx);
//   Graph g1 = seq.capture([&] { y = ev.multiply_relin_rescale(x, x, relin); });
//   Graph g2 = seq.capture([&] { z = ev.rotate(y, 1, galois); });  // may reuse g1's scratch
//   g1.replay();
//   g2.replay();
//
// Rules, beyond Graph's:
//  * An output of a graph (memory still held when its capture ends) is never another graph's
//    scratch, but it may lie in memory that graphs captured before it use as scratch: read or
//    copy it before replaying one of those again. Replaying the graphs in capture order, and
//    reading the last one's outputs before the next round, always does.
//  * Replays of a sequence's graphs must not overlap: on the GPU they are ordered on the
//    backend's one stream; on the CPU a replay while another thread replays a graph of the same
//    sequence throws BackendError.
//  * The memory of the sequence's graphs returns when the last of them and the sequence are gone
//    (each graph keeps the shared workspace alive), so a graph may read another's outputs even
//    after that one is destroyed.
//  * capture() throws BackendError while the backend is capturing (a sequence's captures follow
//    each other; they do not nest).
// With graphs off (ContextOptions::graphs = false) capture() returns graphs that run their
// function again at each replay, as Context::capture does.
class CaptureSequence {
 public:
  CaptureSequence() = default;  // empty: capture() throws ContextError
  explicit CaptureSequence(ContextPtr ctx);

  // Context::capture, sharing scratch with the sequence's other graphs.
  Graph capture(std::function<void()> fn);

  const ContextPtr& context() const { return ctx_; }
  // Graphs captured so far (with graphs off: functions taken).
  std::size_t size() const { return size_; }
  // Bytes of backend memory the sequence's graphs hold (outputs and scratch), and of its scratch
  // free for the next capture; 0 with graphs off or on a backend whose captures hold no memory.
  std::size_t workspace_bytes() const;
  std::size_t free_bytes() const;

 private:
  ContextPtr ctx_;
  std::shared_ptr<CaptureWorkspace> workspace_;
  std::size_t size_ = 0;
};

}  // namespace theo
