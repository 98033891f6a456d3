// Bindings of the module functions (presets, cuda_available, ...), Parameters and Context.

#include <filesystem>

#include "bindings.h"
#include "theo/backend/factory.h"
#include "theo/common/environment.h"

namespace theopy {

namespace {

std::filesystem::path g_preset_dir;

}  // namespace

const std::filesystem::path& preset_dir() {
  return g_preset_dir;
}

void bind_context(nb::module_& m) {
  g_preset_dir = theo::Environment::read().preset_dir;
  m.def(
      "presets", [] { return theo::preset_names(preset_dir()); },
      "Names of the bundled parameter presets (e.g. 'bootparam_40') and of the JSON files in "
      "THEO_PRESET_DIR as it was when theodosian was imported; load one with "
      "Parameters.preset(name).");
  m.def("cuda_available", &theo::cuda_available,
        "True when this build has the CUDA backend and a usable GPU is present.");
  m.def("max_log2_pq_128", &theo::max_log2_pq_128, "log_n"_a,
        "Largest log2(PQ) that keeps 128-bit security for a ternary secret at N = 2^log_n "
        "(HomomorphicEncryption.org table; 0 when N is too small to be secure).");

  // ---- Parameters ---------------------------------------------------------------------------
  nb::class_<theo::ParameterSet>(
      m, "Parameters",
      "A CKKS parameter set (the JSON fields of the anchor parameter files): ring degree, scale, "
      "the prime lists and the level layout. Create one with Parameters.preset(name), "
      "Parameters.from_file(path), Parameters.from_json(text) or Parameters.generate(...). "
      "Fields may be edited; the set is validated when a Context is created.")
      .def_static(
          "preset", [](const std::string& name) { return theo::load_preset(name, preset_dir()); },
          "name"_a,
          "Loads a bundled preset by name (see theodosian.presets()), THEO_PRESET_DIR's first. "
          "Raises ParameterError for an unknown name.")
      .def_static(
          "from_file",
          [](const std::filesystem::path& path) { return theo::load_parameter_file(path); },
          "path"_a, nb::sig("def from_file(path: str | os.PathLike[str]) -> Parameters"),
          "Loads a parameter file (JSON). Raises ParameterError naming the offending field.")
      .def_static("from_json", &theo::parse_parameters, "text"_a, "name"_a = "",
                  "Parses parameters from a JSON string. Raises ParameterError naming the "
                  "offending field.")
      .def_static(
          "generate",
          [](u32 log_n, u32 log_scale, u32 levels, u32 boot_levels, u32 log_boot_scale,
             u32 log_base, u32 alpha, u32 dense_hamming_weight, u32 sparse_hamming_weight,
             u32 num_cts_levels, u32 num_stc_levels) {
            theo::PrimeSystemSpec spec;
            spec.log_n = log_n;
            spec.log_scale = log_scale;
            spec.levels = levels;
            spec.boot_levels = boot_levels;
            spec.log_boot_scale = log_boot_scale;
            spec.log_base = log_base;
            spec.alpha = alpha;
            spec.dense_hamming_weight = dense_hamming_weight;
            spec.sparse_hamming_weight = sparse_hamming_weight;
            spec.num_cts_levels = num_cts_levels;
            spec.num_stc_levels = num_stc_levels;
            nb::gil_scoped_release release;
            return theo::generate_prime_system(spec);
          },
          "log_n"_a = 16, "log_scale"_a = 40, "levels"_a = 10, "boot_levels"_a = 0,
          "log_boot_scale"_a = 0, "log_base"_a = 0, "alpha"_a = 0, "dense_hamming_weight"_a = 0,
          "sparse_hamming_weight"_a = 0, "num_cts_levels"_a = 0, "num_stc_levels"_a = 0,
          "Generates a 25-30 prime system (main primes ~2^30, terminal primes ~2^25, rational "
          "rescaling) for N = 2^log_n, scale 2^log_scale (30..50) and `levels` levels above level "
          "0 (0 for the other arguments picks the library default). Raises ParameterError when "
          "the request cannot be met. Small N or many levels are below 128-bit security: such a "
          "set needs Context(..., allow_insecure=True).")
      .def("to_json", &theo::to_json, "Serializes the set as JSON (the parameter-file format).")
      .def(
          "save",
          [](const theo::ParameterSet& p, const std::filesystem::path& path) {
            nb::object f = nb::module_::import_("builtins").attr("open")(path, "w");
            f.attr("write")(theo::to_json(p));
            f.attr("close")();
          },
          "path"_a, nb::sig("def save(self, path: str | os.PathLike[str]) -> None"),
          "Writes the set to a JSON parameter file.")
      .def(
          "validate", [](const theo::ParameterSet& p) { theo::validate(p); },
          "Checks the structure (primes, level layout, ...); raises ParameterError naming the "
          "field. Does not check security.")
      .def(
          "check_security",
          [](const theo::ParameterSet& p, bool allow_insecure) {
            theo::check_security(p, allow_insecure);
          },
          "allow_insecure"_a = false,
          "Raises SecurityError (saying by how many bits log2(PQ) is over the bound) unless the "
          "set meets 128-bit security or allow_insecure is True.")
      .def_prop_ro(
          "is_secure",
          [](const theo::ParameterSet& p) {
            const double bound = theo::max_log2_pq_128(p.log_degree);
            return bound > 0 && p.log2_pq() <= bound;
          },
          "True when log2(PQ) is within the 128-bit bound for N (ternary secret).")
      .def_rw("name", &theo::ParameterSet::name, "Preset or file name (informational).")
      .def_rw("comment", &theo::ParameterSet::comment, "Free text (informational).")
      .def_rw("log_degree", &theo::ParameterSet::log_degree, "log2 of the ring degree N.")
      .def_prop_ro(
          "log_n", [](const theo::ParameterSet& p) { return p.log_degree; },
          "log2 of the ring degree N (same as log_degree).")
      .def_prop_ro("n", &theo::ParameterSet::n, "The ring degree N.")
      .def_prop_ro(
          "slots", [](const theo::ParameterSet& p) { return p.n() / 2; },
          "The maximum number of slots, N/2.")
      .def_rw("log_default_scale", &theo::ParameterSet::log_default_scale,
              "log2 of the default scale Delta_0.")
      .def_rw("boot", &theo::ParameterSet::boot, "True for a bootstrappable set.")
      .def_rw("dense_hamming_weight", &theo::ParameterSet::dense_hamming_weight,
              "Hamming weight of the main secret (0: N/2).")
      .def_rw("sparse_hamming_weight", &theo::ParameterSet::sparse_hamming_weight,
              "Hamming weight of the sparse bootstrapping secret (0: none).")
      .def_rw("num_cts_levels", &theo::ParameterSet::num_cts_levels,
              "Levels of CoeffToSlot (bootstrapping).")
      .def_rw("num_stc_levels", &theo::ParameterSet::num_stc_levels,
              "Levels of SlotToCoeff (bootstrapping).")
      .def_rw("terminal_primes", &theo::ParameterSet::terminal_primes,
              "Terminal primes tau_i (~2^25).")
      .def_rw("main_primes", &theo::ParameterSet::main_primes, "Main primes q_i (~2^30).")
      .def_rw("auxiliary_primes", &theo::ParameterSet::auxiliary_primes,
              "Auxiliary (key-switching) primes p_i.")
      .def_rw("default_encryption_level", &theo::ParameterSet::default_encryption_level,
              "Level at which fresh ciphertexts are encrypted by default.")
      .def_rw("level_config", &theo::ParameterSet::level_config,
              "Per level [main prime count, terminal prime count].")
      .def_prop_ro("max_level", &theo::ParameterSet::max_level, "The highest level.")
      .def_prop_ro("alpha", &theo::ParameterSet::alpha, "Number of auxiliary primes.")
      .def_prop_ro("dnum", &theo::ParameterSet::dnum, "Number of key-switching digits.")
      .def_prop_ro("max_limbs", &theo::ParameterSet::max_limbs, "Limbs of Q_max.")
      .def_prop_ro("word_bits", &theo::ParameterSet::word_bits,
                   "32 when every prime is < 2^31 (this library's word size), else 64.")
      .def("limbs_at", &theo::ParameterSet::limbs_at, "level"_a, "Limbs of a level's modulus.")
      .def("log2_q", &theo::ParameterSet::log2_q, "level"_a, "log2 of a level's modulus Q_l.")
      .def_prop_ro("log2_pq", &theo::ParameterSet::log2_pq, "log2 of P * Q_max (all primes).")
      .def("level_log2_scales", &theo::level_log2_scales,
           "log2 of the default scale of every level 0..default_encryption_level.")
      .def(
          "__eq__",
          [](const theo::ParameterSet& a, nb::handle b) {
            return nb::isinstance<theo::ParameterSet>(b) &&
                   a == nb::cast<const theo::ParameterSet&>(b);
          },
          "other"_a.none(), "Field-wise equality.")
      .def(
          "__copy__", [](const theo::ParameterSet& p) { return p; }, "A copy.")
      .def(
          "__deepcopy__", [](const theo::ParameterSet& p, nb::handle) { return p; }, "memo"_a,
          "A copy.")
      .def("__repr__", [](const theo::ParameterSet& p) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "Parameters(name=%s, N=2^%u, log_scale=%u, max_level=%u, alpha=%u, "
                      "log2(PQ)=%.1f)",
                      p.name.empty() ? "''" : p.name.c_str(), p.log_degree, p.log_default_scale,
                      p.level_config.empty() ? 0u : p.max_level(), p.alpha(),
                      p.main_primes.empty() ? 0.0 : p.log2_pq());
        return std::string(buf);
      });

  // ---- Context -------------------------------------------------------------------------------
  nb::class_<WContext> context(
      m, "Context",
      "A CKKS context: one parameter set, one backend (CPU or CUDA) and all precomputed tables. "
      "Immutable and safe to share between threads. It also holds the evaluation keys used by "
      "the Ciphertext operators (context.relin_key, context.galois_keys).");
  context
      .def(
          "__init__",
          [](WContext* self, nb::handle params, const std::string& backend, bool allow_insecure,
             unsigned threads, double scale_tolerance, bool trace, bool graphs) {
            theo::ParameterSet p = params_from(params);
            theo::ContextOptions opt;
            opt.backend = parse_backend(backend);
            opt.allow_insecure = allow_insecure;
            opt.threads = threads;
            opt.scale_tolerance = scale_tolerance;
            opt.graphs = graphs;
            std::shared_ptr<theo::TrafficRecorder> rec;
            if (trace) {
              rec = std::make_shared<theo::TrafficRecorder>(
                  theo::TrafficRecorderOptions{.profile = false, .keep_records = true});
              rec->set_enabled(false);
              opt.wrap_backend = theo::record_traffic(rec);
            }
            SessionPtr s;
            {
              nb::gil_scoped_release release;
              s = std::make_shared<Session>(theo::Context::create(p, opt));
            }
            s->recorder = std::move(rec);
            register_context(s);
            new (self) WContext{std::move(s)};
          },
          "params"_a, nb::kw_only(), "backend"_a = "auto", "allow_insecure"_a = false,
          "threads"_a = 0u, "scale_tolerance"_a = 0x1p-30, "trace"_a = false, "graphs"_a = true,
          nb::sig("def __init__(self, params: Parameters | str | os.PathLike[str], *, "
                  "backend: str = 'auto', allow_insecure: bool = False, threads: int = 0, "
                  "scale_tolerance: float = 9.313225746154785e-10, trace: bool = False, "
                  "graphs: bool = True) -> None"),
          "Creates a context. params: a Parameters, a preset name or a path to a JSON parameter "
          "file. backend: 'auto' (THEO_BACKEND, else CUDA when available, else CPU), 'cpu' or "
          "'cuda'. allow_insecure: load sets below 128-bit security (tests and experiments "
          "only; otherwise SecurityError). threads: CPU backend threads (0: all cores). "
          "scale_tolerance: two scales are equal when |a/b - 1| <= this. trace: wrap the backend "
          "with an op recorder, so theodosian.sim.tracing.record can trace runs on this context. "
          "graphs: False turns Context.capture off (replays then run the function op by op, "
          "with the same words; the ablation baseline).")
      .def_prop_ro(
          "params", [](const WContext& c) { return c.s->ctx->params(); },
          "A copy of the parameter set.")
      .def_prop_ro(
          "backend", [](const WContext& c) { return c.s->ctx->backend().name(); },
          "The backend's description, e.g. 'cpu (2 threads)' or 'cuda (NVIDIA H200)'.")
      .def_prop_ro(
          "backend_kind",
          [](const WContext& c) {
            return std::string(c.s->ctx->backend().kind() == theo::BackendKind::kCuda ? "cuda"
                                                                                      : "cpu");
          },
          "'cpu' or 'cuda'.")
      .def_prop_ro(
          "n", [](const WContext& c) { return c.s->ctx->n(); }, "The ring degree N.")
      .def_prop_ro(
          "log_n", [](const WContext& c) { return c.s->ctx->log_n(); }, "log2 N.")
      .def_prop_ro(
          "slots", [](const WContext& c) { return c.s->ctx->max_slots(); },
          "The maximum number of slots, N/2.")
      .def_prop_ro(
          "max_level", [](const WContext& c) { return c.s->ctx->max_level(); },
          "The highest level.")
      .def_prop_ro(
          "default_encryption_level",
          [](const WContext& c) { return c.s->ctx->default_encryption_level(); },
          "Level of fresh encryptions when none is given.")
      .def_prop_ro(
          "alpha", [](const WContext& c) { return c.s->ctx->alpha(); },
          "Number of auxiliary (key-switching) primes.")
      .def_prop_ro(
          "dnum", [](const WContext& c) { return c.s->ctx->dnum(); },
          "Number of key-switching digits.")
      .def_prop_ro(
          "id", [](const WContext& c) { return c.s->ctx->id(); },
          "Process-unique id stamped on every object made with this context.")
      .def(
          "default_scale",
          [](const WContext& c, u32 level) {
            return static_cast<double>(c.s->ctx->default_scale(level));
          },
          "level"_a, "The default scale Delta_l of a level (LevelError if it does not exist).")
      .def(
          "log2_q", [](const WContext& c, u32 level) { return c.s->ctx->level(level).log2_q; },
          "level"_a, "log2 of the modulus Q_l of a level.")
      .def(
          "galois_element",
          [](const WContext& c, theo::i64 r) {
            return theo::galois_element_for_rotation(r, c.s->ctx->log_n());
          },
          "rotation"_a, "The Galois element 5^r mod 2N of a left rotation by r slots.")
      .def_prop_ro(
          "conjugation_element",
          [](const WContext& c) { return theo::galois_element_for_conjugation(c.s->ctx->log_n()); },
          "The Galois element 2N - 1 of complex conjugation.")
      .def_prop_rw(
          "relin_key",
          [](const WContext& c) -> std::optional<WRelinKey> {
            if (!c.s->relin_key) return std::nullopt;
            return WRelinKey{c.s, c.s->relin_key};
          },
          [](WContext& c, const WRelinKey* k) { c.s->relin_key = k ? k->k : nullptr; },
          nb::for_setter(nb::arg("key").none()),
          "The relinearization key used by `ciphertext * ciphertext` and by Evaluators that "
          "have none of their own (None: not set).")
      .def_prop_rw(
          "galois_keys",
          [](const WContext& c) -> std::optional<WGaloisKeys> {
            if (!c.s->galois_keys) return std::nullopt;
            return WGaloisKeys{c.s, std::const_pointer_cast<theo::GaloisKeys>(c.s->galois_keys)};
          },
          [](WContext& c, const WGaloisKeys* k) { c.s->galois_keys = k ? k->k : nullptr; },
          nb::for_setter(nb::arg("keys").none()),
          "The Galois keys used by `ct << r`, `ct >> r`, Ciphertext.rotate/conjugate and by "
          "Evaluators that have none of their own (None: not set).")
      .def(
          "deserialize",
          [](const WContext& c, nb::bytes data) { return deserialize_ciphertext(c.s, data); },
          "data"_a,
          "Reads a ciphertext written by Ciphertext.serialize(). ParameterError on malformed "
          "data, ContextError when it was written by a context with other primes.")
      .def(
          "__eq__",
          [](const WContext& a, nb::handle b) {
            return nb::isinstance<WContext>(b) && nb::cast<const WContext&>(b).s == a.s;
          },
          "other"_a.none(), "True for the same context.")
      .def(
          "__hash__", [](const WContext& c) { return c.s->ctx->id(); }, "Hash of the id.")
      .def("__repr__", [](const WContext& c) {
        const auto& ctx = *c.s->ctx;
        return "Context(" +
               (ctx.params().name.empty() ? std::string("<unnamed>") : ctx.params().name) +
               ", N=2^" + std::to_string(ctx.log_n()) +
               ", max_level=" + std::to_string(ctx.max_level()) + ", backend='" +
               ctx.backend().name() + "')";
      });
  bind_trace(context);
  bind_graph(m, context);
  def_encode(context, "Encodes slot values (see Encoder.encode).");
}

}  // namespace theopy
