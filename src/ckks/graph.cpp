// Context::capture and Graph (theo/ckks/graph.h): the scheme-level face of the backend's capture
// hooks (Backend::begin_capture / end_capture).

#include "theo/ckks/graph.h"

#include <string>
#include <utility>

#include "backend/capture_arena.h"
#include "theo/errors.h"

namespace theo {

namespace {

// The backend's work for fn, recorded with scratch from `workspace` (null: its own).
std::unique_ptr<CapturedWork> record(Backend& be, const std::function<void()>& fn,
                                     std::shared_ptr<CaptureWorkspace> workspace) {
  be.begin_capture(std::move(workspace));
  try {
    fn();
  } catch (...) {
    be.abort_capture();
    throw;
  }
  return be.end_capture();
}

}  // namespace

Graph Context::capture(std::function<void()> fn) const {
  if (!fn) throw ParameterError("Context::capture: the function is empty");
  if (!policy_.graphs()) return Graph(shared_from_this(), nullptr, std::move(fn));
  return Graph(shared_from_this(), record(backend(), fn, nullptr), nullptr);
}

CaptureSequence::CaptureSequence(ContextPtr ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw ContextError("CaptureSequence: the Context is null");
}

Graph CaptureSequence::capture(std::function<void()> fn) {
  if (!ctx_) throw ContextError("CaptureSequence::capture: the sequence is empty (default-made)");
  if (!fn) throw ParameterError("CaptureSequence::capture: the function is empty");
  if (!ctx_->policy().graphs()) {
    ++size_;
    return Graph(ctx_, nullptr, std::move(fn));
  }
  Backend& be = ctx_->backend();
  if (be.capturing())
    throw BackendError(
        "CaptureSequence::capture: the backend is already capturing (the captures of a sequence "
        "follow each other; capture inside another capture is not possible)");
  if (!workspace_) workspace_ = be.make_capture_workspace();
  Graph g(ctx_, record(be, fn, workspace_), nullptr);
  ++size_;
  return g;
}

std::size_t CaptureSequence::workspace_bytes() const {
  return workspace_ ? workspace_->bytes() : 0;
}

std::size_t CaptureSequence::free_bytes() const {
  return workspace_ ? workspace_->free_bytes() : 0;
}

Graph::Graph(ContextPtr ctx, std::unique_ptr<CapturedWork> work, std::function<void()> eager)
    : ctx_(std::move(ctx)), work_(std::move(work)), eager_(std::move(eager)) {}

Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

void Graph::replay() {
  if (!ctx_) throw ContextError("Graph::replay: the graph is empty (default-made or moved from)");
  if (work_) {
    work_->replay();
    return;
  }
  // Same rule as captured work, so that the ablation behaves alike.
  if (ctx_->backend().capturing())
    throw BackendError(
        "replay of captured work is not allowed while capturing (capture the whole sequence "
        "instead)");
  eager_();
}

namespace {

// What both set_input overloads check before the shapes: a graph, and operands of its Context;
// `what` names the operand type in the messages ("" or " plaintext").
template <class T>
void check_operands(const ContextPtr& ctx, const T& input, const T& value, const char* what) {
  if (!ctx) throw ContextError("Graph::set_input: the graph is empty (default-made or moved from)");
  if (input.empty())
    throw ContextError(std::string("Graph::set_input: input") + what + " is empty");
  if (value.empty())
    throw ContextError(std::string("Graph::set_input: value") + what + " is empty");
  if (input.context_id() != ctx->id() || value.context_id() != ctx->id())
    throw ContextError("Graph::set_input: input and value must belong to the graph's Context");
}

// What both check after the shapes: the scale the captured ops were fixed for, and no capture
// running; the backend to copy with.
template <class T>
Backend& check_scale(const ContextPtr& ctx, const T& input, const T& value, const char* what) {
  if (input.scale() != value.scale())
    throw ScaleError(std::string("Graph::set_input: value") + what +
                     "'s scale differs from input's (the captured ops were fixed for input's "
                     "scale)");
  Backend& be = ctx->backend();
  if (be.capturing()) throw BackendError("Graph::set_input is not allowed while capturing");
  return be;
}

}  // namespace

void Graph::set_input(Ciphertext& input, const Ciphertext& value) const {
  check_operands(ctx_, input, value, "");
  if (input.level() != value.level() || input.size() != value.size())
    throw LevelError("Graph::set_input: value (level " + std::to_string(value.level()) + ", " +
                     std::to_string(value.size()) + " polys) differs from input (level " +
                     std::to_string(input.level()) + ", " + std::to_string(input.size()) +
                     " polys)");
  Backend& be = check_scale(ctx_, input, value, "");
  for (u32 i = 0; i < input.size(); ++i)
    be.copy(value.poly(i).cref(), input.poly(i).ref());
  input.set_slots(value.slots());
  if (value.seed())
    input.set_seed(*value.seed());
  else
    input.drop_seed();
}

void Graph::set_input(Plaintext& input, const Plaintext& value) const {
  check_operands(ctx_, input, value, " plaintext");
  if (input.level() != value.level())
    throw LevelError("Graph::set_input: value plaintext (level " + std::to_string(value.level()) +
                     ") differs from input (level " + std::to_string(input.level()) + ")");
  if (input.slots() != value.slots())
    throw ParameterError("Graph::set_input: value plaintext has " + std::to_string(value.slots()) +
                         " slots, input " + std::to_string(input.slots()));
  Backend& be = check_scale(ctx_, input, value, " plaintext");
  be.copy(value.poly().cref(), input.poly().ref());
}

std::size_t Graph::kernel_count() const {
  return work_ ? work_->kernel_count() : 0;
}

std::size_t Graph::node_count() const {
  return work_ ? work_->node_count() : 0;
}

std::size_t Graph::programmatic_edge_count() const {
  return work_ ? work_->programmatic_edge_count() : 0;
}

}  // namespace theo
