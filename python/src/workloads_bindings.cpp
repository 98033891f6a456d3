// theodosian._core, encrypted-ML building blocks and workloads: least-squares activation fits,
// the level planner's static plans, and HELR training (include/theo/circuits/level_planner.h,
// activation_fit.h, include/theo/workloads/helr.h).

#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "theo/circuits/activation_fit.h"
#include "theo/circuits/level_planner.h"
#include "theo/workloads/helr.h"

namespace theopy {
namespace {

using F64Array = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using U8Array = nb::ndarray<const std::uint8_t, nb::c_contig, nb::device::cpu>;
using U32Array = nb::ndarray<const std::uint32_t, nb::c_contig, nb::device::cpu>;

struct WHelr {
  SessionPtr s;
  std::unique_ptr<theo::Helr> h;
};
// Held by pointer: the ciphertext vectors are move-only.
struct WHelrState {
  SessionPtr s;
  std::unique_ptr<theo::Helr::State> st;
};
struct WHelrBatch {
  SessionPtr s;
  std::unique_ptr<theo::Helr::Batch> b;
};

theo::HelrConfig make_config(u32 features, u32 batch, u32 iterations, u32 degree, double bound,
                             double lr) {
  theo::HelrConfig c;
  c.features = features;
  c.batch = batch;
  c.iterations = iterations;
  c.sigmoid_degree = degree;
  c.sigmoid_bound = bound;
  c.learning_rate = lr;
  return c;
}

nb::dict plan_to_dict(const theo::LevelPlan& p) {
  nb::list steps;
  for (const auto& e : p.steps) {
    nb::dict d;
    d["name"] = e.name;
    d["depth"] = e.depth;
    d["bootstrap_before"] = e.bootstrap_before;
    d["level_in"] = e.level_in;
    d["level_out"] = e.level_out;
    steps.append(d);
  }
  nb::dict out;
  out["steps"] = steps;
  out["bootstraps"] = p.bootstraps;
  out["start_level"] = p.start_level;
  out["refreshed_level"] = p.refreshed_level;
  out["text"] = p.describe();
  return out;
}

}  // namespace

void bind_workloads(nb::module_& m) {
  m.def(
      "sigmoid_least_squares",
      [](u32 degree, double bound) { return theo::sigmoid_least_squares(degree, bound).coeffs; },
      "degree"_a, "bound"_a,
      "Monomial coefficients c_0..c_d of the least-squares fit of 1/(1+e^-x) on [-bound, bound] "
      "(HELR's sigmoid approximations).");
  m.def(
      "least_squares_fit",
      [](const std::function<double(double)>& f, double a, double b, u32 degree) {
        return theo::least_squares_fit(f, a, b, degree).coeffs;
      },
      "f"_a, "a"_a, "b"_a, "degree"_a,
      "Monomial coefficients of the continuous least-squares fit of f on [a, b].");
  m.def(
      "plan_levels",
      [](const std::vector<std::pair<std::string, u32>>& steps, u32 start_level,
         u32 refreshed_level, bool can_bootstrap) {
        std::vector<theo::LevelStep> s;
        for (const auto& [name, depth] : steps)
          s.push_back({name, depth});
        const theo::LevelBudget b = can_bootstrap ? theo::LevelBudget(refreshed_level)
                                                  : theo::LevelBudget::without_bootstrapping();
        return plan_to_dict(b.plan(s, start_level));
      },
      "steps"_a, "start_level"_a, "refreshed_level"_a, "can_bootstrap"_a = true,
      "Static level plan of (name, depth) steps: where bootstrapping goes and how many. Raises "
      "LevelError for a step deeper than a bootstrapping provides.");
  m.def("helr_eta_schedule", &theo::helr_eta_schedule, "iterations"_a,
        "HELR's Nesterov schedule eta_t.");

  nb::class_<WHelrState>(m, "HelrState", "Encrypted HELR weights (opaque).")
      .def_prop_ro("iteration", [](const WHelrState& s) { return s.st->iteration; });
  nb::class_<WHelrBatch>(m, "HelrBatch", "An encrypted HELR mini-batch (opaque).")
      .def_prop_ro("iteration", [](const WHelrBatch& b) { return b.b->iteration; });

  nb::class_<WHelr>(m, "Helr",
                    "HELR logistic-regression training on encrypted mini-batches (Nesterov, "
                    "least-squares sigmoid, bootstrapping placed by the level planner). layout: "
                    "'han2019' (Han et al.'s: full-slot data and weight ciphertexts, "
                    "rotate-and-sum, full-slot bootstrapping) or 'sparse-weights' (the faster "
                    "variant: complex packing, one sparse bootstrapping of the packed weights). "
                    "graphs: replay each iteration shape from captured graphs (the same words as "
                    "op by op).")
      .def(
          "__init__",
          [](WHelr* self, const WContext& ctx, u32 features, u32 batch, u32 iterations,
             u32 sigmoid_degree, double sigmoid_bound, double learning_rate,
             const std::string& layout, bool graphs, u32 reduction_radix) {
            theo::HelrConfig c = make_config(features, batch, iterations, sigmoid_degree,
                                             sigmoid_bound, learning_rate);
            c.layout = theo::helr_layout_from_string(layout);
            c.graphs = graphs;
            c.reduction_radix = reduction_radix;
            new (self) WHelr{ctx.s, std::make_unique<theo::Helr>(ctx.s->ctx, c)};
          },
          "context"_a, "features"_a = 256, "batch"_a = 1024, "iterations"_a = 32,
          "sigmoid_degree"_a = 3, "sigmoid_bound"_a = 8.0, "learning_rate"_a = 0.2,
          "layout"_a = "sparse-weights", "graphs"_a = true, "reduction_radix"_a = 2u)
      .def_prop_ro(
          "layout",
          [](const WHelr& h) { return std::string(theo::to_string(h.h->config().layout)); })
      .def_prop_ro("graphs", [](const WHelr& h) { return h.h->config().graphs; })
      .def_prop_ro(
          "ciphertexts", [](const WHelr& h) { return h.h->ciphertexts(); },
          "Data ciphertexts per mini-batch layout.")
      .def_prop_ro("iteration_depth", [](const WHelr& h) { return h.h->iteration_depth(); })
      .def_prop_ro(
          "captured_graphs", [](const WHelr& h) { return h.h->captured_graphs(); },
          "Graphs captured so far (one per phase of each iteration shape).")
      .def_prop_ro("plan", [](const WHelr& h) { return plan_to_dict(h.h->plan()); })
      .def_prop_ro("sigmoid", [](const WHelr& h) { return h.h->sigmoid().coeffs; })
      .def_prop_ro("bootstraps", [](const WHelr& h) { return h.h->bootstraps(); })
      .def_prop_ro("slots", [](const WHelr& h) { return h.h->slots(); })
      .def(
          "generate_keys",
          [](WHelr& h, WKeyGenerator& kg, const WSecretKey& sk, bool progress) {
            std::lock_guard<std::mutex> lock(kg.mu);
            nb::gil_scoped_release release;
            h.h->generate_keys(*kg.kg, *sk.k, progress);
          },
          "keygen"_a, "secret_key"_a, "progress"_a = true)
      .def_prop_ro(
          "keys",
          [](const WHelr& h) -> std::optional<WBootstrappingKeys> {
            auto k = h.h->keys();
            if (!k) return std::nullopt;
            return WBootstrappingKeys{h.s, std::move(k)};
          },
          "The evaluation keys generate_keys() made (None before): BootstrappingKeys with the "
          "workload's rotations, for use_keys() of another Helr (the server side).")
      .def(
          "use_keys", [](WHelr& h, const WBootstrappingKeys& k) { h.h->use_keys(k.k); }, "keys"_a,
          "Uses evaluation keys made elsewhere (another Helr's keys, or loaded). MissingKeyError "
          "naming a rotation they lack.")
      .def(
          "initial_state",
          [](const WHelr& h, WEncryptor& enc) {
            std::lock_guard<std::mutex> lock(enc.mu);
            return WHelrState{h.s,
                              std::make_unique<theo::Helr::State>(h.h->initial_state(*enc.enc))};
          },
          "encryptor"_a)
      .def(
          "encrypt_batch",
          [](const WHelr& h, WEncryptor& enc, F64Array x, U8Array labels, u32 iteration) {
            std::lock_guard<std::mutex> lock(enc.mu);
            const std::span<const double> xs(x.data(), x.size());
            const std::span<const std::uint8_t> ys(labels.data(), labels.size());
            nb::gil_scoped_release release;
            return WHelrBatch{h.s, std::make_unique<theo::Helr::Batch>(
                                       h.h->encrypt_batch(*enc.enc, xs, ys, iteration))};
          },
          "encryptor"_a, "x"_a, "labels"_a, "iteration"_a,
          "x: float64 (batch, features); labels: uint8 0/1 (batch,).")
      .def(
          "iterate",
          [](const WHelr& h, WHelrState& s, const WHelrBatch& b, bool times) -> nb::object {
            theo::HelrPhaseTimes pt;
            {
              nb::gil_scoped_release release;
              h.h->iterate(*s.st, *b.b, times ? &pt : nullptr);
            }
            if (!times) return nb::none();
            nb::dict d;
            for (const theo::HelrPhase& p : theo::kHelrPhases)
              d[(std::string(p.name) + "_ms").c_str()] = pt.*p.ms;
            d["total_ms"] = pt.total_ms();
            d["key_switches"] = pt.key_switches;
            return d;
          },
          "state"_a, "batch"_a, "times"_a = false,
          "One training iteration (bootstrapping first where the plan says). times=True: "
          "synchronizes at each phase boundary and returns the phase times in ms (a dict).")
      .def(
          "decrypt_weights",
          [](const WHelr& h, const WDecryptor& dec, const WHelrState& s) {
            return h.h->decrypt_weights(*dec.dec, *s.st);
          },
          "decryptor"_a, "state"_a);

  m.def(
      "helr_reference_train",
      [](F64Array x, U8Array labels, U32Array batches, u32 features, u32 batch, u32 iterations,
         u32 sigmoid_degree, double sigmoid_bound, double learning_rate) {
        return theo::helr_reference_train(
            make_config(features, batch, iterations, sigmoid_degree, sigmoid_bound, learning_rate),
            std::span<const double>(x.data(), x.size()),
            std::span<const std::uint8_t>(labels.data(), labels.size()),
            std::span<const u32>(batches.data(), batches.size()));
      },
      "x"_a, "labels"_a, "batches"_a, "features"_a = 256, "batch"_a = 1024, "iterations"_a = 32,
      "sigmoid_degree"_a = 3, "sigmoid_bound"_a = 8.0, "learning_rate"_a = 0.2,
      "Plaintext HELR (same polynomial, batches and schedule): weights after each iteration.");
}

}  // namespace theopy
