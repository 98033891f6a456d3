// theodosian._core: nanobind bindings of the CKKS API (include/theo/theodosian.h); the circuits
// layer (polynomials, linear transforms, bootstrapping) is bound in circuits_bindings.cpp.

#include "bindings.h"
#include "theo/backend/factory.h"

using namespace theopy;

NB_MODULE(_core, m) {
  m.doc() =
      "Compiled core of theodosian (CKKS homomorphic encryption). Import `theodosian` instead.";
  m.attr("__version__") = THEO_VERSION;
  register_exceptions(m);

  m.def("presets", &theo::preset_names,
        "Names of the bundled parameter presets (e.g. 'bootparam_40'); load one with "
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
          "preset", [](const std::string& name) { return theo::load_preset(name); }, "name"_a,
          "Loads a bundled preset by name (see theodosian.presets()). Raises ParameterError for "
          "an unknown name.")
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
      .def("validate", &theo::validate,
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
  nb::class_<WContext>(
      m, "Context",
      "A CKKS context: one parameter set, one backend (CPU or CUDA) and all precomputed tables. "
      "Immutable and safe to share between threads. It also holds the evaluation keys used by "
      "the Ciphertext operators (context.relin_key, context.galois_keys).")
      .def(
          "__init__",
          [](WContext* self, nb::handle params, const std::string& backend, bool allow_insecure,
             unsigned threads, double scale_tolerance) {
            theo::ParameterSet p = params_from(params);
            theo::ContextOptions opt;
            opt.backend = parse_backend(backend);
            opt.allow_insecure = allow_insecure;
            opt.threads = threads;
            opt.scale_tolerance = scale_tolerance;
            SessionPtr s;
            {
              nb::gil_scoped_release release;
              s = std::make_shared<Session>(theo::Context::create(p, opt));
            }
            new (self) WContext{std::move(s)};
          },
          "params"_a, nb::kw_only(), "backend"_a = "auto", "allow_insecure"_a = false,
          "threads"_a = 0u, "scale_tolerance"_a = 0x1p-30,
          nb::sig("def __init__(self, params: Parameters | str | os.PathLike[str], *, "
                  "backend: str = 'auto', allow_insecure: bool = False, threads: int = 0, "
                  "scale_tolerance: float = 9.313225746154785e-10) -> None"),
          "Creates a context. params: a Parameters, a preset name or a path to a JSON parameter "
          "file. backend: 'auto' (THEO_BACKEND, else CUDA when available, else CPU), 'cpu' or "
          "'cuda'. allow_insecure: load sets below 128-bit security (tests and experiments "
          "only; otherwise SecurityError). threads: CPU backend threads (0: all cores). "
          "scale_tolerance: two scales are equal when |a/b - 1| <= this.")
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
          "encode",
          [](const WContext& c, nb::handle values, std::optional<u32> level,
             std::optional<double> scale) { return encode_values(c.s, values, level, scale); },
          "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(),
          nb::sig("def encode(self, values: numpy.typing.ArrayLike, level: int | None = None, "
                  "scale: float | None = None) -> Plaintext"),
          "Encodes slot values (see Encoder.encode).")
      .def(
          "deserialize",
          [](const WContext& c, nb::bytes data) {
            std::vector<std::uint8_t> bytes(
                reinterpret_cast<const std::uint8_t*>(data.c_str()),
                reinterpret_cast<const std::uint8_t*>(data.c_str()) + data.size());
            return run_ct(c.s, false,
                          [&] { return theo::deserialize_ciphertext(c.s->ctx, bytes); });
          },
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

  // ---- Plaintext -----------------------------------------------------------------------------
  nb::class_<WPlaintext>(m, "Plaintext",
                         "An encoded (not encrypted) vector of slots: a polynomial in the NTT "
                         "domain at some level, with its scale. Made by Encoder.encode().")
      .def_prop_ro(
          "level", [](const WPlaintext& p) { return p.pt.level(); }, "The level.")
      .def_prop_rw(
          "scale", [](const WPlaintext& p) { return static_cast<double>(p.pt.scale()); },
          [](WPlaintext& p, double v) { p.pt.set_scale(static_cast<long double>(v)); },
          "The scale (as a float; the library tracks it in extended precision).")
      .def_prop_ro(
          "slots", [](const WPlaintext& p) { return p.pt.slots(); }, "Number of slots.")
      .def_prop_ro(
          "is_real", [](const WPlaintext& p) { return p.real; },
          "True when encoded from real values (decode() then returns float64).")
      .def_prop_ro(
          "context", [](const WPlaintext& p) { return WContext{p.s}; }, "The context.")
      .def(
          "decode",
          [](const WPlaintext& p, std::optional<bool> real) {
            return decode_to_numpy(*p.s, p.pt, real.value_or(p.real));
          },
          "real"_a = nb::none(),
          nb::sig("def decode(self, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decodes to a numpy array of `slots` values: float64 when real (default: is_real), "
          "else complex128.")
      .def(
          "copy",
          [](const WPlaintext& p) {
            return WPlaintext{p.s, p.s->evaluator.clone(p.pt), p.real};
          },
          "A deep copy.")
      .def(
          "__copy__",
          [](const WPlaintext& p) {
            return WPlaintext{p.s, p.s->evaluator.clone(p.pt), p.real};
          },
          "A deep copy.")
      .def(
          "__deepcopy__",
          [](const WPlaintext& p, nb::handle) {
            return WPlaintext{p.s, p.s->evaluator.clone(p.pt), p.real};
          },
          "memo"_a, "A deep copy.")
      .def("__repr__", [](const WPlaintext& p) {
        return "Plaintext(level=" + std::to_string(p.pt.level()) +
               ", scale=" + fmt_scale(p.pt.scale()) + ", slots=" + std::to_string(p.pt.slots()) +
               ")";
      });

  // ---- Ciphertext ----------------------------------------------------------------------------
  nb::class_<WCiphertext>(
      m, "Ciphertext",
      "An encrypted vector of slots at some level and scale. Operators: a + b, a - b, -a "
      "(b: Ciphertext, Plaintext, scalar or array); a * b multiplies and rescales once "
      "(Ciphertext operands are relinearized with context.relin_key), except a * int, which is "
      "exact and uses no level; a << r and a >> r rotate left/right with context.galois_keys. "
      "The Evaluator offers every operation without implicit steps.")
      .def_prop_ro(
          "level", [](const WCiphertext& c) { return c.ct.level(); }, "The level.")
      .def_prop_rw(
          "scale", [](const WCiphertext& c) { return static_cast<double>(c.ct.scale()); },
          [](WCiphertext& c, double v) { c.ct.set_scale(static_cast<long double>(v)); },
          "The scale (as a float; the library tracks it in extended precision). Setting it "
          "reinterprets the encrypted values.")
      .def_prop_ro(
          "slots", [](const WCiphertext& c) { return c.ct.slots(); }, "Number of slots.")
      .def_prop_ro(
          "size", [](const WCiphertext& c) { return c.ct.size(); },
          "Number of polynomials: 2, or 3 after a multiplication without relinearization.")
      .def_prop_ro(
          "is_seeded", [](const WCiphertext& c) { return c.ct.is_seeded(); },
          "True for a fresh secret-key ciphertext that serializes as (c0, seed).")
      .def_prop_rw(
          "is_real", [](const WCiphertext& c) { return c.real; },
          [](WCiphertext& c, bool v) { c.real = v; },
          "Hint that the slots hold real values: decryption then returns float64. Tracked "
          "through operations; may be set.")
      .def_prop_ro(
          "context", [](const WCiphertext& c) { return WContext{c.s}; }, "The context.")
      .def(
          "copy",
          [](const WCiphertext& c) {
            return WCiphertext{c.s, c.s->evaluator.clone(c.ct), c.real};
          },
          "A deep copy.")
      .def(
          "__copy__",
          [](const WCiphertext& c) {
            return WCiphertext{c.s, c.s->evaluator.clone(c.ct), c.real};
          },
          "A deep copy.")
      .def(
          "__deepcopy__",
          [](const WCiphertext& c, nb::handle) {
            return WCiphertext{c.s, c.s->evaluator.clone(c.ct), c.real};
          },
          "memo"_a, "A deep copy.")
      .def(
          "serialize",
          [](const WCiphertext& c) {
            std::vector<std::uint8_t> bytes;
            {
              nb::gil_scoped_release release;
              bytes = theo::serialize(*c.s->ctx, c.ct);
            }
            return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "The binary form (see Context.deserialize). A fresh secret-key ciphertext takes about "
          "half the space.")
      .def(
          "__bytes__",
          [](const WCiphertext& c) {
            std::vector<std::uint8_t> bytes;
            {
              nb::gil_scoped_release release;
              bytes = theo::serialize(*c.s->ctx, c.ct);
            }
            return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "Same as serialize().")
      .def_static(
          "deserialize",
          [](const WContext& c, nb::bytes data) {
            std::vector<std::uint8_t> bytes(
                reinterpret_cast<const std::uint8_t*>(data.c_str()),
                reinterpret_cast<const std::uint8_t*>(data.c_str()) + data.size());
            return run_ct(c.s, false,
                          [&] { return theo::deserialize_ciphertext(c.s->ctx, bytes); });
          },
          "context"_a, "data"_a, "Reads a ciphertext written by serialize().")
      .def(
          "rotate", [](const WCiphertext& c, int r) { return ct_rotate(c, r); }, "steps"_a,
          "Left rotation by `steps` slots (negative: right) with context.galois_keys.")
      .def(
          "conjugate",
          [](const WCiphertext& c) {
            auto gk = pick_galois(c.s, nullptr, nullptr, "conjugate");
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.conjugate(c.ct, *gk); });
          },
          "Complex conjugation of every slot with context.galois_keys.")
      .def(
          "rescale",
          [](const WCiphertext& c) {
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.rescale(c.ct); });
          },
          "Rescales to level - 1 (LevelError at level 0).")
      .def(
          "relinearize",
          [](const WCiphertext& c) {
            auto rlk = pick_relin(c.s, nullptr, nullptr, "relinearize");
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.relinearize(c.ct, *rlk); });
          },
          "Relinearizes a 3-polynomial ciphertext with context.relin_key.")
      .def(
          "level_down",
          [](const WCiphertext& c, u32 level, std::optional<double> target_scale) {
            std::optional<long double> ts;
            if (target_scale) ts = static_cast<long double>(*target_scale);
            return run_ct(c.s, c.real, [&] { return c.s->evaluator.level_down(c.ct, level, ts); });
          },
          "level"_a, "target_scale"_a = nb::none(),
          "Moves to a lower level keeping the value (scale Delta_level unless target_scale).")
      .def(
          "square",
          [](const WCiphertext& c) {
            auto rlk = pick_relin(c.s, nullptr, nullptr, "square");
            return run_ct(c.s, c.real, [&] {
              theo::Ciphertext t = c.s->evaluator.square(c.ct, *rlk);
              c.s->evaluator.rescale_inplace(t);
              return t;
            });
          },
          "Squares, relinearizes (context.relin_key) and rescales.")
      .def(
          "__add__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kAdd); },
          "other"_a.none(), nb::sig("def __add__(self, other: object) -> Ciphertext"), "a + b.")
      .def(
          "__radd__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kAdd); },
          "other"_a.none(), nb::sig("def __radd__(self, other: object) -> Ciphertext"), "b + a.")
      .def(
          "__sub__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kSub); },
          "other"_a.none(), nb::sig("def __sub__(self, other: object) -> Ciphertext"), "a - b.")
      .def(
          "__rsub__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kRSub); },
          "other"_a.none(), nb::sig("def __rsub__(self, other: object) -> Ciphertext"), "b - a.")
      .def(
          "__mul__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kMul); },
          "other"_a.none(), nb::sig("def __mul__(self, other: object) -> Ciphertext"),
          "a * b, rescaled once (a * int: exact, no level used).")
      .def(
          "__rmul__", [](WCiphertext& a, nb::handle b) { return ct_binary(a, b, Op::kMul); },
          "other"_a.none(), nb::sig("def __rmul__(self, other: object) -> Ciphertext"),
          "b * a, rescaled once (int * a: exact, no level used).")
      .def(
          "__iadd__",
          [](nb::handle self, nb::handle b) -> nb::object {
            auto& a = nb::cast<WCiphertext&>(self);
            if (nb::isinstance<WCiphertext>(b)) {
              auto& o = nb::cast<WCiphertext&>(b);
              run_void([&] { a.s->evaluator.add_inplace(a.ct, o.ct); });
              a.real = a.real && o.real;
              return nb::borrow(self);
            }
            return ct_binary(a, b, Op::kAdd);
          },
          "other"_a.none(), nb::sig("def __iadd__(self, other: object) -> Ciphertext"),
          "a += b (in place for a Ciphertext b).")
      .def(
          "__isub__",
          [](nb::handle self, nb::handle b) -> nb::object {
            auto& a = nb::cast<WCiphertext&>(self);
            if (nb::isinstance<WCiphertext>(b)) {
              auto& o = nb::cast<WCiphertext&>(b);
              run_void([&] { a.s->evaluator.sub_inplace(a.ct, o.ct); });
              a.real = a.real && o.real;
              return nb::borrow(self);
            }
            return ct_binary(a, b, Op::kSub);
          },
          "other"_a.none(), nb::sig("def __isub__(self, other: object) -> Ciphertext"),
          "a -= b (in place for a Ciphertext b).")
      .def(
          "__neg__",
          [](const WCiphertext& a) {
            return run_ct(a.s, a.real, [&] { return a.s->evaluator.negate(a.ct); });
          },
          "-a.")
      .def(
          "__lshift__", [](const WCiphertext& a, int r) { return ct_rotate(a, r); }, "steps"_a,
          "Left rotation by `steps` slots (context.galois_keys).")
      .def(
          "__rshift__", [](const WCiphertext& a, int r) { return ct_rotate(a, -r); }, "steps"_a,
          "Right rotation by `steps` slots (context.galois_keys).")
      .def("__repr__",
           [](const WCiphertext& c) {
             return "Ciphertext(level=" + std::to_string(c.ct.level()) +
                    ", scale=" + fmt_scale(c.ct.scale()) +
                    ", slots=" + std::to_string(c.ct.slots()) +
                    ", size=" + std::to_string(c.ct.size()) + ")";
           })
      // numpy defers to our reflected operators instead of broadcasting over the ciphertext.
      .attr("__array_ufunc__") = nb::none();

  // ---- keys ----------------------------------------------------------------------------------
  nb::class_<WSecretKey>(m, "SecretKey",
                         "A ternary secret key (keep it private). Made by KeyGenerator.")
      .def_prop_ro(
          "hamming_weight", [](const WSecretKey& k) { return k.k->hamming_weight(); },
          "Number of nonzero coefficients.")
      .def_prop_ro(
          "context", [](const WSecretKey& k) { return WContext{k.s}; }, "The context.")
      .def(
          "coefficients",
          [](const WSecretKey& k) {
            std::vector<theo::i32> c = k.k->coefficients();
            return to_numpy(std::move(c));
          },
          nb::sig("def coefficients(self) -> numpy.typing.NDArray[numpy.int32]"),
          "The coefficients in {-1, 0, 1} as an int32 array (a copy).")
      .def("__repr__", [](const WSecretKey& k) {
        return "SecretKey(hamming_weight=" + std::to_string(k.k->hamming_weight()) + ")";
      });
  nb::class_<WPublicKey>(m, "PublicKey", "A public encryption key. Made by KeyGenerator.")
      .def_prop_ro(
          "context", [](const WPublicKey& k) { return WContext{k.s}; }, "The context.")
      .def("__repr__", [](const WPublicKey&) { return std::string("PublicKey()"); });
  nb::class_<WRelinKey>(m, "RelinKey",
                        "A relinearization key (s^2 -> s). Made by KeyGenerator.relin_key().")
      .def_prop_ro(
          "context", [](const WRelinKey& k) { return WContext{k.s}; }, "The context.")
      .def_prop_ro(
          "dnum", [](const WRelinKey& k) { return k.k->key().dnum(); },
          "Number of key-switching digits.")
      .def("__repr__", [](const WRelinKey& k) {
        return "RelinKey(dnum=" + std::to_string(k.k->key().dnum()) + ")";
      });
  nb::class_<WGaloisKeys>(m, "GaloisKeys",
                          "Keys for rotations and conjugation, one per Galois element. Made by "
                          "KeyGenerator.galois_keys().")
      .def_prop_ro(
          "context", [](const WGaloisKeys& k) { return WContext{k.s}; }, "The context.")
      .def_prop_ro(
          "galois_elements", [](const WGaloisKeys& k) { return k.k->galois_elements(); },
          "The Galois elements that have a key.")
      .def(
          "has_rotation",
          [](const WGaloisKeys& k, theo::i64 r) {
            const u32 g = theo::galois_element_for_rotation(r, k.s->ctx->log_n());
            return g == 1 || k.k->contains(g);
          },
          "steps"_a, "True when a left rotation by `steps` slots has a key.")
      .def_prop_ro(
          "has_conjugation",
          [](const WGaloisKeys& k) {
            return k.k->contains(theo::galois_element_for_conjugation(k.s->ctx->log_n()));
          },
          "True when conjugation has a key.")
      .def(
          "__contains__", [](const WGaloisKeys& k, u32 g) { return k.k->contains(g); },
          "galois_element"_a, "True when the Galois element has a key.")
      .def(
          "__len__", [](const WGaloisKeys& k) { return k.k->galois_elements().size(); },
          "Number of keys.")
      .def("__repr__", [](const WGaloisKeys& k) {
        return "GaloisKeys(" + std::to_string(k.k->galois_elements().size()) + " keys)";
      });

  // ---- KeyGenerator --------------------------------------------------------------------------
  nb::class_<WKeyGenerator>(
      m, "KeyGenerator",
      "Generates secret, public, relinearization and Galois keys. Seeded from the OS unless a "
      "seed is given (a seed makes every key, in the same call order, bit-identical across "
      "runs and backends; for tests only).")
      .def(
          "__init__",
          [](WKeyGenerator* self, const WContext& ctx, nb::handle seed) {
            std::unique_ptr<theo::KeyGenerator> kg;
            if (seed.is_none()) {
              kg = std::make_unique<theo::KeyGenerator>(ctx.s->ctx);
            } else {
              kg = std::make_unique<theo::KeyGenerator>(ctx.s->ctx, to_seed(seed, "KeyGenerator"));
            }
            new (self) WKeyGenerator{ctx.s, std::move(kg), {}};
          },
          "context"_a, "seed"_a = nb::none(),
          nb::sig("def __init__(self, context: Context, seed: bytes | int | None = None) -> None"),
          "A key generator for `context`; seed: 32 bytes or an int (deterministic keys), None: "
          "from the OS.")
      .def(
          "secret_key",
          [](WKeyGenerator& self) {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(self.mu);
            return WSecretKey{self.s,
                              std::make_shared<theo::SecretKey>(self.kg->create_secret_key())};
          },
          "A dense ternary secret key (hamming weight from the parameters, N/2 by default).")
      .def(
          "sparse_secret_key",
          [](WKeyGenerator& self) {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(self.mu);
            return WSecretKey{
                self.s, std::make_shared<theo::SecretKey>(self.kg->create_sparse_secret_key())};
          },
          "A sparse secret key (sparse_hamming_weight; ParameterError when the set has none).")
      .def(
          "secret_key_with_weight",
          [](WKeyGenerator& self, u32 h) {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(self.mu);
            return WSecretKey{self.s, std::make_shared<theo::SecretKey>(
                                          self.kg->create_secret_key_with_weight(h))};
          },
          "hamming_weight"_a, "A ternary secret key with the given hamming weight.")
      .def(
          "public_key",
          [](WKeyGenerator& self, const WSecretKey& sk) {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(self.mu);
            return WPublicKey{self.s,
                              std::make_shared<theo::PublicKey>(self.kg->create_public_key(*sk.k))};
          },
          "secret_key"_a, "The public key of a secret key.")
      .def(
          "relin_key",
          [](WKeyGenerator& self, const WSecretKey& sk) {
            nb::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(self.mu);
            return WRelinKey{self.s,
                             std::make_shared<theo::RelinKey>(self.kg->create_relin_key(*sk.k))};
          },
          "secret_key"_a, "The relinearization key (s^2 -> s).")
      .def(
          "galois_keys",
          [](WKeyGenerator& self, const WSecretKey& sk, std::vector<int> rotations,
             bool conjugation, std::optional<bool> progress) {
            const u32 log_n = self.s->ctx->log_n();
            std::vector<u32> elements;
            for (const int r : rotations)
              elements.push_back(theo::galois_element_for_rotation(r, log_n));
            if (conjugation) elements.push_back(theo::galois_element_for_conjugation(log_n));
            auto keys = std::make_shared<theo::GaloisKeys>();
            {
              nb::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mu);
              // An empty set stamped with the context (validates the secret key).
              *keys = self.kg->create_galois_keys(*sk.k, std::span<const int>{}, false);
            }
            add_galois_elements(self, sk, elements, *keys, progress);
            return WGaloisKeys{self.s, std::move(keys)};
          },
          "secret_key"_a, "rotations"_a = std::vector<int>{}, "conjugation"_a = false,
          "progress"_a = nb::none(),
          "Keys for left rotations by each r in `rotations` (any sign, taken mod N/2) and, when "
          "conjugation is True, for conjugation. progress: show a progress bar (tqdm when "
          "installed, else a simple stderr bar); None: when there are 8 keys or more and stderr "
          "is a terminal. Ctrl-C interrupts between keys.")
      .def(
          "add_galois_keys",
          [](WKeyGenerator& self, const WSecretKey& sk, WGaloisKeys& keys,
             std::vector<int> rotations, std::vector<u32> galois_elements, bool conjugation,
             std::optional<bool> progress) {
            const u32 log_n = self.s->ctx->log_n();
            std::vector<u32> elements = galois_elements;
            for (const int r : rotations)
              elements.push_back(theo::galois_element_for_rotation(r, log_n));
            if (conjugation) elements.push_back(theo::galois_element_for_conjugation(log_n));
            add_galois_elements(self, sk, elements, *keys.k, progress);
          },
          "secret_key"_a, "keys"_a, "rotations"_a = std::vector<int>{},
          "galois_elements"_a = std::vector<u32>{}, "conjugation"_a = false,
          "progress"_a = nb::none(),
          "Adds keys for more rotations / Galois elements / conjugation to an existing "
          "GaloisKeys (do not use the keys from other threads meanwhile).");

  // ---- Encoder -------------------------------------------------------------------------------
  nb::class_<WEncoder>(
      m, "Encoder",
      "CKKS encoding through the canonical embedding: numpy float64/complex128 vectors <-> "
      "Plaintexts. n values are padded to the next power of two (at most N/2 slots).")
      .def(
          "__init__", [](WEncoder* self, const WContext& ctx) { new (self) WEncoder{ctx.s}; },
          "context"_a, "An encoder for `context`.")
      .def(
          "encode",
          [](const WEncoder& e, nb::handle values, std::optional<u32> level,
             std::optional<double> scale) { return encode_values(e.s, values, level, scale); },
          "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(),
          nb::sig("def encode(self, values: numpy.typing.ArrayLike, level: int | None = None, "
                  "scale: float | None = None) -> Plaintext"),
          "Encodes a 1-D array-like of real or complex values at `level` (default: the "
          "context's default encryption level) and `scale` (default: the level's Delta). "
          "float64/complex128 contiguous arrays are read in place.")
      .def(
          "decode",
          [](const WEncoder& e, const WPlaintext& pt, std::optional<bool> real) {
            return decode_to_numpy(*e.s, pt.pt, real.value_or(pt.real));
          },
          "plaintext"_a, "real"_a = nb::none(),
          nb::sig("def decode(self, plaintext: Plaintext, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decodes to float64 (real) or complex128 values (default: plaintext.is_real).");

  // ---- Encryptor / Decryptor -----------------------------------------------------------------
  nb::class_<WEncryptor>(
      m, "Encryptor",
      "Encrypts with a public key, or with a secret key (secret-key ciphertexts serialize at "
      "half the size). Unseeded instances draw randomness from the OS.")
      .def(
          "__init__",
          [](WEncryptor* self, const WContext& ctx, nb::handle key, nb::handle seed) {
            std::optional<theo::Prng::Seed> sd;
            if (!seed.is_none()) sd = to_seed(seed, "Encryptor");
            std::shared_ptr<const theo::PublicKey> pk;
            std::shared_ptr<const theo::SecretKey> sk;
            std::unique_ptr<theo::Encryptor> enc;
            if (nb::isinstance<WPublicKey>(key)) {
              pk = nb::cast<const WPublicKey&>(key).k;
              enc = sd ? std::make_unique<theo::Encryptor>(ctx.s->ctx, *pk, *sd)
                       : std::make_unique<theo::Encryptor>(ctx.s->ctx, *pk);
            } else if (nb::isinstance<WSecretKey>(key)) {
              sk = nb::cast<const WSecretKey&>(key).k;
              enc = sd ? std::make_unique<theo::Encryptor>(ctx.s->ctx, *sk, *sd)
                       : std::make_unique<theo::Encryptor>(ctx.s->ctx, *sk);
            } else {
              throw nb::type_error("Encryptor: key must be a PublicKey or a SecretKey");
            }
            new (self) WEncryptor{ctx.s, std::move(pk), std::move(sk), std::move(enc), {}};
          },
          "context"_a, "key"_a, "seed"_a = nb::none(),
          nb::sig("def __init__(self, context: Context, key: PublicKey | SecretKey, "
                  "seed: bytes | int | None = None) -> None"),
          "An encryptor with a public key or a secret key; seed: deterministic encryption "
          "(tests only).")
      .def_prop_ro(
          "is_secret_key_mode", [](const WEncryptor& e) { return e.sk != nullptr; },
          "True when encrypting with the secret key.")
      .def(
          "encrypt",
          [](WEncryptor& e, nb::handle values, std::optional<u32> level,
             std::optional<double> scale) {
            if (nb::isinstance<WPlaintext>(values)) {
              if (level || scale) {
                throw theo::ParameterError(
                    "encrypt: level and scale apply to values, not to a Plaintext (it is "
                    "encrypted at its own level and scale)");
              }
              auto& p = nb::cast<WPlaintext&>(values);
              return run_ct(e.s, p.real, [&] {
                std::lock_guard<std::mutex> lock(e.mu);
                return e.enc->encrypt(p.pt);
              });
            }
            WPlaintext p = encode_values(e.s, values, level, scale);
            return run_ct(e.s, p.real, [&] {
              std::lock_guard<std::mutex> lock(e.mu);
              return e.enc->encrypt(p.pt);
            });
          },
          "values"_a, "level"_a = nb::none(), "scale"_a = nb::none(),
          nb::sig("def encrypt(self, values: Plaintext | numpy.typing.ArrayLike, "
                  "level: int | None = None, scale: float | None = None) -> Ciphertext"),
          "Encrypts a Plaintext (at its level and scale) or encodes and encrypts slot values at "
          "`level` (default: the default encryption level) and `scale` (default: Delta_level).")
      .def(
          "encrypt_zero",
          [](WEncryptor& e, std::optional<u32> level) {
            const u32 lvl = level.value_or(e.s->ctx->default_encryption_level());
            return run_ct(e.s, true, [&] {
              std::lock_guard<std::mutex> lock(e.mu);
              return e.enc->encrypt_zero(lvl);
            });
          },
          "level"_a = nb::none(), "An encryption of zero at `level` (scale Delta_level).");

  nb::class_<WDecryptor>(m, "Decryptor", "Decrypts with the secret key.")
      .def(
          "__init__",
          [](WDecryptor* self, const WContext& ctx, const WSecretKey& sk) {
            new (self)
                WDecryptor{ctx.s, sk.k, std::make_unique<theo::Decryptor>(ctx.s->ctx, *sk.k)};
          },
          "context"_a, "secret_key"_a, "A decryptor for `context` with `secret_key`.")
      .def(
          "decrypt",
          [](const WDecryptor& d, const WCiphertext& c, std::optional<bool> real) {
            theo::Plaintext pt;
            {
              nb::gil_scoped_release release;
              pt = d.dec->decrypt(c.ct);
            }
            return decode_to_numpy(*d.s, pt, real.value_or(c.real));
          },
          "ciphertext"_a, "real"_a = nb::none(),
          nb::sig("def decrypt(self, ciphertext: Ciphertext, real: bool | None = None) -> "
                  "numpy.typing.NDArray[numpy.float64] | numpy.typing.NDArray[numpy.complex128]"),
          "Decrypts and decodes: a numpy array of ciphertext.slots values, float64 when real "
          "(default: ciphertext.is_real), else complex128.")
      .def(
          "decrypt_plaintext",
          [](const WDecryptor& d, const WCiphertext& c) {
            theo::Plaintext pt;
            {
              nb::gil_scoped_release release;
              pt = d.dec->decrypt(c.ct);
            }
            return WPlaintext{d.s, std::move(pt), c.real};
          },
          "ciphertext"_a, "Decrypts to a Plaintext (c0 + c1 s (+ c2 s^2)) without decoding.");

  // ---- Evaluator -----------------------------------------------------------------------------
  using Ev = WEvaluator;
  using Ct = WCiphertext;
  using Pt = WPlaintext;
  auto rk_arg = [] { return nb::arg("relin_key").none() = nb::none(); };
  auto gk_arg = [] { return nb::arg("galois_keys").none() = nb::none(); };
  auto ls = [](std::optional<double> v) -> std::optional<long double> {
    if (v) return static_cast<long double>(*v);
    return std::nullopt;
  };

  nb::class_<WEvaluator>(
      m, "Evaluator",
      "Homomorphic operations. Stateless apart from its default keys: one instance may be used "
      "from several threads (the GIL is released during each operation). Inputs are validated "
      "first (ContextError, ScaleError, LevelError, MissingKeyError) and are left unchanged by "
      "a failed call. Operands at different levels are brought to the lower level. Keys: the "
      "argument when given, else the Evaluator's, else the Context's (context.relin_key, "
      "context.galois_keys).")
      .def(
          "__init__",
          [](Ev* self, const WContext& ctx, const WRelinKey* rk, const WGaloisKeys* gk) {
            new (self) Ev{ctx.s, rk ? rk->k : nullptr, gk ? gk->k : nullptr};
          },
          "context"_a, rk_arg(), gk_arg(), "An evaluator for `context` with optional default keys.")
      .def_prop_ro(
          "context", [](const Ev& e) { return WContext{e.s}; }, "The context.")
      .def(
          "clone",
          [](const Ev& e, const Ct& a) {
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.clone(a.ct); });
          },
          "ciphertext"_a, "A deep copy.")
      // additive
      .def(
          "add",
          [](const Ev& e, const Ct& a, const Ct& b) {
            return run_ct(e.s, a.real && b.real, [&] { return e.s->evaluator.add(a.ct, b.ct); });
          },
          "a"_a, "b"_a, "a + b.")
      .def(
          "sub",
          [](const Ev& e, const Ct& a, const Ct& b) {
            return run_ct(e.s, a.real && b.real, [&] { return e.s->evaluator.sub(a.ct, b.ct); });
          },
          "a"_a, "b"_a, "a - b.")
      .def(
          "add_inplace",
          [](const Ev& e, Ct& a, const Ct& b) {
            run_void([&] { e.s->evaluator.add_inplace(a.ct, b.ct); });
            a.real = a.real && b.real;
          },
          "a"_a, "b"_a, "a += b.")
      .def(
          "sub_inplace",
          [](const Ev& e, Ct& a, const Ct& b) {
            run_void([&] { e.s->evaluator.sub_inplace(a.ct, b.ct); });
            a.real = a.real && b.real;
          },
          "a"_a, "b"_a, "a -= b.")
      .def(
          "add_plain",
          [](const Ev& e, const Ct& a, const Pt& b) {
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.add_plain(a.ct, b.pt); });
          },
          "a"_a, "b"_a, "a + plaintext (scales must match).")
      .def(
          "sub_plain",
          [](const Ev& e, const Ct& a, const Pt& b) {
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.sub_plain(a.ct, b.pt); });
          },
          "a"_a, "b"_a, "a - plaintext (scales must match).")
      .def(
          "add_plain_inplace",
          [](const Ev& e, Ct& a, const Pt& b) {
            run_void([&] { e.s->evaluator.add_plain_inplace(a.ct, b.pt); });
            a.real = a.real && b.real;
          },
          "a"_a, "b"_a, "a += plaintext.")
      .def(
          "sub_plain_inplace",
          [](const Ev& e, Ct& a, const Pt& b) {
            run_void([&] { e.s->evaluator.sub_plain_inplace(a.ct, b.pt); });
            a.real = a.real && b.real;
          },
          "a"_a, "b"_a, "a -= plaintext.")
      .def(
          "add_const",
          [](const Ev& e, const Ct& a, Cplx c) {
            return run_ct(e.s, a.real && c.imag() == 0.0,
                          [&] { return e.s->evaluator.add_const(a.ct, c); });
          },
          "a"_a, "c"_a, "Adds the constant c to every slot (no level used).")
      .def(
          "add_const_inplace",
          [](const Ev& e, Ct& a, Cplx c) {
            run_void([&] { e.s->evaluator.add_const_inplace(a.ct, c); });
            a.real = a.real && c.imag() == 0.0;
          },
          "a"_a, "c"_a, "Adds the constant c to every slot in place.")
      .def(
          "negate",
          [](const Ev& e, const Ct& a) {
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.negate(a.ct); });
          },
          "a"_a, "-a.")
      .def(
          "negate_inplace",
          [](const Ev& e, Ct& a) { run_void([&] { e.s->evaluator.negate_inplace(a.ct); }); }, "a"_a,
          "a = -a.")
      // multiplicative
      .def(
          "multiply",
          [](const Ev& e, const Ct& a, const Ct& b, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "multiply");
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.multiply(a.ct, b.ct, *k); });
          },
          "a"_a, "b"_a, rk_arg(),
          "a * b, relinearized, not rescaled (the scale is the product of the scales).")
      .def(
          "multiply_without_relin",
          [](const Ev& e, const Ct& a, const Ct& b) {
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.multiply(a.ct, b.ct); });
          },
          "a"_a, "b"_a,
          "The tensor product a * b without relinearization: a 3-polynomial ciphertext "
          "(decryptable; relinearize() brings it back to 2).")
      .def(
          "square",
          [](const Ev& e, const Ct& a, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "square");
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.square(a.ct, *k); });
          },
          "a"_a, rk_arg(), "a * a, relinearized, not rescaled.")
      .def(
          "relinearize",
          [](const Ev& e, const Ct& a, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "relinearize");
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.relinearize(a.ct, *k); });
          },
          "a"_a, rk_arg(), "3 polynomials -> 2 (key switching of the s^2 part).")
      .def(
          "relinearize_inplace",
          [](const Ev& e, Ct& a, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "relinearize_inplace");
            run_void([&] { e.s->evaluator.relinearize_inplace(a.ct, *k); });
          },
          "a"_a, rk_arg(), "Relinearizes in place.")
      .def(
          "multiply_relin_rescale",
          [](const Ev& e, const Ct& a, const Ct& b, const WRelinKey* rk) {
            auto k = pick_relin(e.s, &e, rk, "multiply_relin_rescale");
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.multiply_relin_rescale(a.ct, b.ct, *k); });
          },
          "a"_a, "b"_a, rk_arg(),
          "Multiply, relinearize and rescale in one call (the result lands on Delta_{l-1}).")
      .def(
          "multiply_plain",
          [](const Ev& e, const Ct& a, const Pt& b) {
            return run_ct(e.s, a.real && b.real,
                          [&] { return e.s->evaluator.multiply_plain(a.ct, b.pt); });
          },
          "a"_a, "b"_a, "a * plaintext, not rescaled.")
      .def(
          "multiply_plain_inplace",
          [](const Ev& e, Ct& a, const Pt& b) {
            run_void([&] { e.s->evaluator.multiply_plain_inplace(a.ct, b.pt); });
            a.real = a.real && b.real;
          },
          "a"_a, "b"_a, "a *= plaintext, not rescaled.")
      .def(
          "multiply_const",
          [ls](const Ev& e, const Ct& a, Cplx c, std::optional<double> const_scale) {
            const auto cs = ls(const_scale);
            return run_ct(e.s, a.real && c.imag() == 0.0,
                          [&] { return e.s->evaluator.multiply_const(a.ct, c, cs); });
          },
          "a"_a, "c"_a, "const_scale"_a = nb::none(),
          "Multiplies every slot by c, encoded at const_scale (default Delta_level), which "
          "multiplies the result's scale; not rescaled.")
      .def(
          "multiply_const_inplace",
          [ls](const Ev& e, Ct& a, Cplx c, std::optional<double> const_scale) {
            const auto cs = ls(const_scale);
            run_void([&] { e.s->evaluator.multiply_const_inplace(a.ct, c, cs); });
            a.real = a.real && c.imag() == 0.0;
          },
          "a"_a, "c"_a, "const_scale"_a = nb::none(), "multiply_const in place.")
      .def(
          "multiply_integer",
          [](const Ev& e, const Ct& a, theo::i64 k) {
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.multiply_integer(a.ct, k); });
          },
          "a"_a, "k"_a, "Multiplies by an integer exactly (scale and level unchanged).")
      .def(
          "multiply_monomial",
          [](const Ev& e, const Ct& a, theo::i64 k) {
            return run_ct(e.s, false, [&] { return e.s->evaluator.multiply_monomial(a.ct, k); });
          },
          "a"_a, "k"_a,
          "Multiplies by the monomial X^k (X^N = -1); X^(N/2) multiplies every slot by i.")
      // levels
      .def(
          "rescale",
          [](const Ev& e, const Ct& a) {
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.rescale(a.ct); });
          },
          "a"_a, "Rational rescale to level - 1 (LevelError at level 0).")
      .def(
          "rescale_inplace",
          [](const Ev& e, Ct& a) { run_void([&] { e.s->evaluator.rescale_inplace(a.ct); }); },
          "a"_a, "Rescales in place.")
      .def(
          "level_down",
          [ls](const Ev& e, const Ct& a, u32 level, std::optional<double> target_scale) {
            const auto ts = ls(target_scale);
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.level_down(a.ct, level, ts); });
          },
          "a"_a, "level"_a, "target_scale"_a = nb::none(),
          "Moves to a lower level keeping the value; the scale lands at Delta_level (or "
          "target_scale).")
      .def(
          "level_down_inplace",
          [ls](const Ev& e, Ct& a, u32 level, std::optional<double> target_scale) {
            const auto ts = ls(target_scale);
            run_void([&] { e.s->evaluator.level_down_inplace(a.ct, level, ts); });
          },
          "a"_a, "level"_a, "target_scale"_a = nb::none(), "level_down in place.")
      // automorphisms
      .def(
          "rotate",
          [](const Ev& e, const Ct& a, int r, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "rotate");
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.rotate(a.ct, r, *k); });
          },
          "a"_a, "steps"_a, gk_arg(), "Left rotation by `steps` slots (negative: right).")
      .def(
          "rotate_inplace",
          [](const Ev& e, Ct& a, int r, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "rotate_inplace");
            run_void([&] { e.s->evaluator.rotate_inplace(a.ct, r, *k); });
          },
          "a"_a, "steps"_a, gk_arg(), "Rotates in place.")
      .def(
          "conjugate",
          [](const Ev& e, const Ct& a, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "conjugate");
            return run_ct(e.s, a.real, [&] { return e.s->evaluator.conjugate(a.ct, *k); });
          },
          "a"_a, gk_arg(), "Complex conjugation of every slot.")
      .def(
          "rotate_hoisted",
          [](const Ev& e, const Ct& a, std::vector<int> rotations, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "rotate_hoisted");
            std::vector<theo::Ciphertext> outs;
            {
              nb::gil_scoped_release release;
              outs = e.s->evaluator.rotate_hoisted(a.ct, rotations, *k);
            }
            std::vector<WCiphertext> res;
            res.reserve(outs.size());
            for (auto& o : outs)
              res.push_back(WCiphertext{e.s, std::move(o), a.real});
            return res;
          },
          "a"_a, "rotations"_a, gk_arg(),
          "Several rotations of one ciphertext sharing one ModUp (hoisting); one result per "
          "rotation, in order.")
      .def(
          "apply_galois",
          [](const Ev& e, const Ct& a, u32 g, const WGaloisKeys* gk) {
            auto k = pick_galois(e.s, &e, gk, "apply_galois");
            return run_ct(e.s, false, [&] { return e.s->evaluator.apply_galois(a.ct, g, *k); });
          },
          "a"_a, "galois_element"_a, gk_arg(),
          "The automorphism X -> X^g for an odd Galois element g that has a key.");

  bind_circuits(m);
  bind_workloads(m);
}
