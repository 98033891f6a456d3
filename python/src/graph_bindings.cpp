// Context.capture and Graph (include/theo/ckks/graph.h, docs/graphs.md): a Python function of
// evaluator calls captured once and replayed, on the CPU as recorded backend calls and on the GPU
// as one CUDA Graph. The function's return value (a Ciphertext, a tuple or list of them, or None)
// is the graph's outputs: the same Python objects after every replay, rewritten in place.

#include <nanobind/stl/function.h>

#include "bindings.h"

namespace theopy {

namespace {

// What the captured function made: kept by the C++ Graph's function (which the eager ablation
// calls again at each replay) and by the Python Graph.
struct Captured {
  nb::object fn;
  nb::object result = nb::none();   // what fn returned the first time (None until then)
  std::vector<nb::object> outputs;  // its Ciphertexts, in order
  bool done = false;
};

std::vector<nb::object> ciphertexts_of(nb::handle r) {
  std::vector<nb::object> out;
  if (r.is_none()) return out;
  if (nb::isinstance<WCiphertext>(r)) {
    out.push_back(nb::borrow(r));
    return out;
  }
  if (nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r)) {
    for (nb::handle item : r) {
      if (!nb::isinstance<WCiphertext>(item))
        throw nb::type_error(
            "Context.capture: the function must return a Ciphertext, a tuple or list of "
            "Ciphertexts, or None (got a sequence holding a non-Ciphertext)");
      out.push_back(nb::borrow(item));
    }
    return out;
  }
  throw nb::type_error(
      ("Context.capture: the function must return a Ciphertext, a tuple or list of Ciphertexts, "
       "or None (got " +
       nb::cast<std::string>(nb::str(r.type().attr("__name__"))) + ")")
          .c_str());
}

// Runs fn: the first time its result becomes the outputs; later (graphs off: replay() runs the
// function again) the new results' words move into the same output objects.
void run_captured(Captured& c) {
  nb::gil_scoped_acquire gil;
  nb::object r = c.fn();
  std::vector<nb::object> cts = ciphertexts_of(r);
  if (!c.done) {
    c.result = r;
    c.outputs = std::move(cts);
    c.done = true;
    return;
  }
  if (cts.size() != c.outputs.size())
    throw theo::ParameterError("Graph.replay: the function returned " + std::to_string(cts.size()) +
                               " ciphertexts, at capture " + std::to_string(c.outputs.size()));
  for (std::size_t i = 0; i < cts.size(); ++i) {
    WCiphertext& dst = nb::cast<WCiphertext&>(c.outputs[i]);
    WCiphertext& src = nb::cast<WCiphertext&>(cts[i]);
    if (&dst == &src) continue;
    dst.ct = std::move(src.ct);
    dst.real = src.real;
  }
}

struct WGraph {
  SessionPtr s;
  std::shared_ptr<Captured> captured;
  theo::Graph g;
  nb::tuple inputs;  // declared operands (run() writes its arguments into them)
};

// set_input for one wrapper type W (its value in w.*kValue); false when input is not a W.
template <typename W, auto kValue>
bool set_input_as(WGraph& g, nb::handle input, nb::handle value, const char* type) {
  if (!nb::isinstance<W>(input)) return false;
  if (!nb::isinstance<W>(value)) {
    throw nb::type_error(
        (std::string("Graph.set_input: a ") + type + " input takes a " + type + " value").c_str());
  }
  W& in = nb::cast<W&>(input);
  const W& v = nb::cast<const W&>(value);
  run_void([&] { g.g.set_input(in.*kValue, v.*kValue); });
  in.real = v.real;
  return true;
}

void set_input(WGraph& g, nb::handle input, nb::handle value) {
  if (set_input_as<WCiphertext, &WCiphertext::ct>(g, input, value, "Ciphertext")) return;
  if (set_input_as<WPlaintext, &WPlaintext::pt>(g, input, value, "Plaintext")) return;
  throw nb::type_error("Graph.set_input: the input must be a Ciphertext or a Plaintext");
}

// A Graph of fn with declared `inputs`, made by `capture` (Context::capture or
// CaptureSequence::capture) from the C++ function that runs fn; `who` names the caller in errors.
template <class Capture>
WGraph make_graph(const SessionPtr& s, nb::object fn, nb::object inputs, const char* who,
                  Capture&& capture) {
  if (!PyCallable_Check(fn.ptr()))
    throw nb::type_error((std::string(who) + ": fn must be callable").c_str());
  nb::tuple declared;
  if (!inputs.is_none()) {
    declared = nb::tuple(inputs);
    for (nb::handle h : declared) {
      const bool ok = (nb::isinstance<WCiphertext>(h) && nb::cast<const WCiphertext&>(h).s == s) ||
                      (nb::isinstance<WPlaintext>(h) && nb::cast<const WPlaintext&>(h).s == s);
      if (!ok)
        throw theo::ContextError(std::string(who) +
                                 ": every declared input must be a Ciphertext or Plaintext of "
                                 "this context");
    }
  }
  auto cap = std::make_shared<Captured>();
  cap->fn = fn;
  // The backend records while fn runs (GIL held: fn is Python); each evaluator call inside
  // releases and retakes the GIL as it does eagerly.
  // With graphs off the function runs only at each replay (as in C++): the outputs are
  // then None until the first replay.
  theo::Graph g = capture([cap] { run_captured(*cap); });
  return WGraph{s, std::move(cap), std::move(g), std::move(declared)};
}

// A CaptureSequence and the session that keeps its Context alive.
struct WCaptureSequence {
  SessionPtr s;
  theo::CaptureSequence seq;
  std::size_t size() const { return seq.size(); }
  std::size_t workspace_bytes() const { return seq.workspace_bytes(); }
  std::size_t free_bytes() const { return seq.free_bytes(); }
};

}  // namespace

void bind_graph(nb::module_& m, nb::class_<WContext>& context) {
  nb::class_<WGraph>(
      m, "Graph",
      "Evaluator calls captured once by Context.capture and replayed (docs/graphs.md). Operands "
      "are bound by identity: each replay reads their current contents, so new data goes in "
      "with set_input (or run), which writes into the same objects. Levels, scales and slot "
      "counts are fixed at capture.")
      .def(
          "replay",
          [](WGraph& g) {
            nb::gil_scoped_release release;
            g.g.replay();
          },
          "Runs the captured work once more (asynchronously on the GPU, like any op; results are "
          "read by decrypt or serialize). The outputs are rewritten.")
      .def("set_input", &set_input, "input"_a, "value"_a,
           "Writes value's words into `input`, a Ciphertext or Plaintext the function read, so "
           "that the next replay computes on value. Same level, scale (and size) as input: "
           "LevelError / ScaleError otherwise.")
      .def(
          "run",
          [](WGraph& g, nb::args values) {
            if (g.inputs.size() == 0)
              throw theo::ParameterError(
                  "Graph.run: the graph has no declared inputs (Context.capture(fn, inputs=...)); "
                  "use set_input and replay");
            if (values.size() != g.inputs.size())
              throw theo::ParameterError("Graph.run: " + std::to_string(values.size()) +
                                         " values for " + std::to_string(g.inputs.size()) +
                                         " declared inputs");
            for (std::size_t i = 0; i < values.size(); ++i)
              set_input(g, g.inputs[i], values[i]);
            {
              nb::gil_scoped_release release;
              g.g.replay();
            }
            return g.captured->result;
          },
          "values"_a,
          "set_input(inputs[i], values[i]) for every declared input, then replay(); returns the "
          "outputs (the same objects every time: copy one with Evaluator.clone to keep it across "
          "runs).")
      .def_prop_ro(
          "outputs", [](const WGraph& g) { return g.captured->result; },
          "What the captured function returned (Ciphertexts rewritten by every replay; they "
          "hold values only after the first replay, and with graphs off they exist only from "
          "then on).")
      .def_prop_ro(
          "inputs", [](const WGraph& g) { return g.inputs; },
          "The operands declared at capture (run() writes into them).")
      .def_prop_ro(
          "captured", [](const WGraph& g) { return g.g.captured(); },
          "False when the context has graphs off: replay() then calls the function again, op by "
          "op, with the same words.")
      .def_prop_ro(
          "kernel_count", [](const WGraph& g) { return g.g.kernel_count(); },
          "Kernels one replay launches (GPU: kernel nodes; CPU: recorded backend calls).")
      .def_prop_ro(
          "node_count", [](const WGraph& g) { return g.g.node_count(); },
          "All nodes of the graph, copies included: the launches the same work makes op by op.");

  nb::class_<WCaptureSequence>(
      m, "CaptureSequence",
      "Graphs captured one after another that share their scratch memory (Context."
      "capture_sequence; docs/graphs.md): a chain of graphs, such as the layers of a network, "
      "then holds about one graph's temporaries instead of all of them. Replay its graphs in "
      "capture order and read the last one's outputs before replaying an earlier one again: an "
      "output may lie in memory that earlier graphs of the sequence use as scratch.")
      .def(
          "capture",
          [](WCaptureSequence& q, nb::object fn, nb::object inputs) {
            return make_graph(
                q.s, std::move(fn), std::move(inputs), "CaptureSequence.capture",
                [&q](std::function<void()> f) { return q.seq.capture(std::move(f)); });
          },
          "fn"_a, "inputs"_a = nb::none(),
          "Context.capture, sharing scratch with the sequence's other graphs. Raises "
          "BackendError inside another capture.")
      .def("__len__", &WCaptureSequence::size)
      .def_prop_ro("workspace_bytes", &WCaptureSequence::workspace_bytes,
                   "Backend memory the sequence's graphs hold (outputs and shared scratch); 0 "
                   "with graphs off.")
      .def_prop_ro("free_bytes", &WCaptureSequence::free_bytes,
                   "Of which scratch that the next capture may take.");

  context.def(
      "capture_sequence",
      [](const WContext& c) {
        return WCaptureSequence{c.s, theo::CaptureSequence(c.s->ctx)};
      },
      "A new CaptureSequence of this context: graphs captured through it share their scratch "
      "memory.");

  context.def(
      "capture",
      [](const WContext& c, nb::object fn, nb::object inputs) {
        return make_graph(
            c.s, std::move(fn), std::move(inputs), "Context.capture",
            [&c](std::function<void()> f) { return c.s->ctx->capture(std::move(f)); });
      },
      "fn"_a, "inputs"_a = nb::none(),
      "Captures the evaluator calls fn() makes into a Graph without running them "
      "(docs/graphs.md). fn takes no arguments and returns a Ciphertext, a tuple or list of "
      "Ciphertexts, or None: the graph's outputs, rewritten by every replay. `inputs`: the "
      "Ciphertexts / Plaintexts fn reads that Graph.run(*values) replaces. Encoding, "
      "encryption, decryption and serialization inside fn raise BackendError (they need the "
      "host); an operand reassigned inside fn (a += b) becomes an output instead. Raises what "
      "fn raises, and the context stays usable.");
}

}  // namespace theopy
