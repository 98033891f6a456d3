// HELR (theo/workloads/helr.h): the plaintext reference, the schedule, the checks and the parts
// both layouts share (helr_form.h); the layouts are helr_han.cpp and helr_sparse.cpp.

#include "theo/workloads/helr.h"

#include <bit>
#include <cmath>
#include <string>

#include "helr_form.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"

namespace theo {

namespace {

void require_pow2(u32 v, const char* what) {
  if (v == 0 || !std::has_single_bit(v)) {
    throw ParameterError(std::string("Helr: ") + what + " = " + std::to_string(v) +
                         " is not a power of two");
  }
}

// The sigmoid polynomial the configuration asks for (shared by the reference and the circuit).
MonomialSeries helr_sigmoid(const HelrConfig& cfg) {
  if (cfg.sigmoid_degree == 0 || cfg.sigmoid_degree > 15) {
    throw ParameterError("Helr: sigmoid_degree " + std::to_string(cfg.sigmoid_degree) +
                         " (3, 5 or 7; at most 15)");
  }
  return sigmoid_least_squares(cfg.sigmoid_degree, cfg.sigmoid_bound);
}

}  // namespace

const char* to_string(HelrLayout layout) {
  return layout == HelrLayout::kHan2019 ? "han2019" : "sparse-weights";
}

HelrLayout helr_layout_from_string(std::string_view name) {
  if (name == "han2019") return HelrLayout::kHan2019;
  if (name == "sparse-weights") return HelrLayout::kSparseWeights;
  throw ParameterError("Helr: layout '" + std::string(name) +
                       "' (han2019: Han et al.'s layout; sparse-weights: the fast variant)");
}

namespace detail {

void check_helr_data(std::span<const double> x, std::span<const std::uint8_t> labels, u32 rows,
                     u32 features, const char* who) {
  if (x.size() != static_cast<std::size_t>(rows) * features) {
    throw ParameterError(std::string(who) + ": x has " + std::to_string(x.size()) +
                         " values, expected " + std::to_string(rows) + " x " +
                         std::to_string(features));
  }
  if (labels.size() != rows) {
    throw ParameterError(std::string(who) + ": " + std::to_string(labels.size()) + " labels for " +
                         std::to_string(rows) + " samples");
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      throw ParameterError(std::string(who) + ": x[" + std::to_string(i / features) + "][" +
                           std::to_string(i % features) + "] is not finite");
    }
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 1) {
      throw ParameterError(std::string(who) + ": label " + std::to_string(i) + " is " +
                           std::to_string(labels[i]) + " (0 or 1)");
    }
  }
}

HelrForm::HelrForm(std::shared_ptr<const Context> ctx, const HelrConfig& cfg)
    : ctx_(ctx ? std::move(ctx) : throw ContextError("Helr: the Context is null")),
      cfg_(cfg),
      encoder_(ctx_),
      ev_(ctx_),
      sequence_(ctx_) {
  require_pow2(cfg.features, "features");
  require_pow2(cfg.batch, "batch");
  if (cfg.features < 4) throw ParameterError("Helr: features must be at least 4");
  if (cfg.iterations == 0) throw ParameterError("Helr: iterations = 0");
  if (!(cfg.learning_rate > 0) || !std::isfinite(cfg.learning_rate)) {
    throw ParameterError("Helr: learning_rate must be a positive number");
  }
  if (cfg.reduction_radix != 2 && cfg.reduction_radix != 4 && cfg.reduction_radix != 8) {
    throw ParameterError("Helr: reduction_radix " + std::to_string(cfg.reduction_radix) +
                         " (2, 4 or 8)");
  }
  if (!(cfg.bootstrap_scale > 0) || !(cfg.bootstrap_scale <= 1)) {
    throw ParameterError("Helr: bootstrap_scale must be in (0, 1]");
  }
  sigma_ = helr_sigmoid(cfg);
  eta_ = helr_eta_schedule(cfg.iterations);
}

HelrForm::~HelrForm() = default;

void HelrForm::generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress) {
  auto keys = std::make_unique<BootstrappingKeys>(boot_->generate_keys(keygen, sk, progress));
  std::vector<u32> elements;
  for (const int r : rotations()) {
    const u32 g = galois_element_for_rotation(r, ctx_->log_n());
    if (g != 1 && !keys->galois.contains(g)) elements.push_back(g);
  }
  keygen.add_galois_keys(sk, elements, keys->galois);
  keys_ = std::move(keys);
}

void HelrForm::use_keys(std::shared_ptr<const BootstrappingKeys> keys) {
  if (!keys) throw MissingKeyError("Helr::use_keys: the keys are null");
  if (keys->relin.context_id() != ctx_->id() || keys->galois.context_id() != ctx_->id())
    throw ContextError("Helr::use_keys: the keys belong to another Context");
  std::vector<int> needed = rotations();
  for (const int r : boot_->rotations())
    needed.push_back(r);
  for (const int r : needed) {
    const u32 g = galois_element_for_rotation(r, ctx_->log_n());
    if (g != 1 && !keys->galois.contains(g))
      throw MissingKeyError("Helr::use_keys: no key for the rotation by " + std::to_string(r));
  }
  if (!keys->galois.contains(galois_element_for_conjugation(ctx_->log_n())))
    throw MissingKeyError("Helr::use_keys: no conjugation key");
  keys_ = std::move(keys);
}

Plaintext HelrForm::constant(double value, u32 level) const {
  const std::vector<double> v(slots_, value);
  return encoder_.encode(v, level);
}

void HelrForm::canonical_scale(Ciphertext& ct) const {
  const long double want = ctx_->default_scale(ct.level());
  if (std::abs(static_cast<double>(ct.scale() / want - 1)) <= ctx_->scale_tolerance())
    ct.set_scale(want);
}

Ciphertext HelrForm::bootstrap(const Ciphertext& ct) const {
  return boot_->bootstrap(ct, *keys_);
}

void HelrForm::Clock::lap(double HelrPhaseTimes::*field) {
  if (!times_) return;
  ctx_.backend().synchronize();
  const auto now = std::chrono::steady_clock::now();
  times_->*field += std::chrono::duration<double, std::milli>(now - start_).count();
  start_ = now;
}

void HelrForm::load(const Graph& g, std::vector<Ciphertext>& dst,
                    const std::vector<Ciphertext>& src, const char* what) const {
  if (dst.size() != src.size()) {
    throw ParameterError(std::string("Helr: ") + std::to_string(src.size()) + " " + what +
                         " ciphertexts for " + std::to_string(dst.size()) + " captured operands");
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    try {
      g.set_input(dst[i], src[i]);
    } catch (const Error& e) {
      throw ParameterError(std::string("Helr: ") + what + " ciphertext " + std::to_string(i) +
                           " does not fit the captured iteration (scale " +
                           std::to_string(static_cast<double>(src[i].scale())) + " vs " +
                           std::to_string(static_cast<double>(dst[i].scale())) + "): " + e.what());
    }
  }
}

void HelrForm::load(const Graph& g, const std::vector<Plaintext*>& dst,
                    const std::vector<const Plaintext*>& src) const {
  if (dst.size() != src.size()) {
    throw ParameterError("Helr: " + std::to_string(src.size()) + " constants for " +
                         std::to_string(dst.size()) + " captured operands");
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    try {
      g.set_input(*dst[i], *src[i]);
    } catch (const Error& e) {
      throw ParameterError("Helr: constant " + std::to_string(i) +
                           " does not fit the captured iteration: " + e.what());
    }
  }
}

std::vector<Ciphertext> HelrForm::clone_all(const std::vector<Ciphertext>& cts) const {
  std::vector<Ciphertext> out;
  out.reserve(cts.size());
  for (const Ciphertext& c : cts)
    out.push_back(ev_.clone(c));
  return out;
}

}  // namespace detail

std::vector<double> helr_eta_schedule(u32 iterations) {
  std::vector<double> eta(iterations);
  double a0 = 0.01, a1 = (1 + std::sqrt(1 + 4 * a0 * a0)) / 2;
  for (u32 t = 0; t < iterations; ++t) {
    eta[t] = (1 - a0) / a1;
    a0 = a1;
    a1 = (1 + std::sqrt(1 + 4 * a0 * a0)) / 2;
  }
  return eta;
}

std::vector<std::vector<double>> helr_reference_train(const HelrConfig& cfg,
                                                      std::span<const double> x,
                                                      std::span<const std::uint8_t> labels,
                                                      std::span<const u32> batches) {
  const u32 f = cfg.features, b = cfg.batch;
  if (labels.empty() || x.size() % f != 0) {
    throw ParameterError("helr_reference_train: x is not samples x " + std::to_string(f));
  }
  const u32 n = static_cast<u32>(labels.size());
  detail::check_helr_data(x, labels, n, f, "helr_reference_train");
  if (batches.size() != static_cast<std::size_t>(cfg.iterations) * b) {
    throw ParameterError("helr_reference_train: " + std::to_string(batches.size()) +
                         " batch indices for " + std::to_string(cfg.iterations) + " x " +
                         std::to_string(b));
  }
  const MonomialSeries p = helr_sigmoid(cfg);
  const std::vector<double> eta = helr_eta_schedule(cfg.iterations);
  const double gamma = cfg.learning_rate / b;
  std::vector<double> w(f, 0), v(f, 0);
  std::vector<std::vector<double>> out;
  for (u32 t = 0; t < cfg.iterations; ++t) {
    std::vector<double> g(f, 0);
    for (u32 k = 0; k < b; ++k) {
      const u32 i = batches[static_cast<std::size_t>(t) * b + k];
      if (i >= n) throw ParameterError("helr_reference_train: a batch index is out of range");
      const double y = labels[i] ? 1.0 : -1.0;
      double ip = 0;
      for (u32 j = 0; j < f; ++j)
        ip += y * x[static_cast<std::size_t>(i) * f + j] * v[j];
      const double s = p(-ip);
      for (u32 j = 0; j < f; ++j)
        g[j] += s * y * x[static_cast<std::size_t>(i) * f + j];
    }
    for (u32 j = 0; j < f; ++j) {
      const double w_new = v[j] + gamma * g[j];
      v[j] = (1 - eta[t]) * w_new + eta[t] * w[j];
      w[j] = w_new;
    }
    out.push_back(w);
  }
  return out;
}

double helr_accuracy(std::span<const double> w, std::span<const double> x,
                     std::span<const std::uint8_t> labels) {
  const std::size_t f = w.size();
  if (f == 0 || x.size() != labels.size() * f) {
    throw ParameterError("helr_accuracy: x is not samples x " + std::to_string(f));
  }
  std::size_t right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    double ip = 0;
    for (std::size_t j = 0; j < f; ++j)
      ip += x[i * f + j] * w[j];
    right += ((ip > 0) == (labels[i] == 1)) ? 1 : 0;
  }
  return static_cast<double>(right) / static_cast<double>(labels.size());
}

// ---- the facade ---------------------------------------------------------------------------------

Helr::Helr(std::shared_ptr<const Context> ctx, const HelrConfig& cfg) : cfg_(cfg) {
  form_ = cfg.layout == HelrLayout::kHan2019 ? detail::make_helr_han(std::move(ctx), cfg)
                                             : detail::make_helr_sparse(std::move(ctx), cfg);
}

Helr::~Helr() = default;

const LevelPlan& Helr::plan() const {
  return form_->plan();
}
u32 Helr::iteration_depth() const {
  return form_->iteration_depth();
}
u32 Helr::slots() const {
  return form_->slots();
}
u32 Helr::ciphertexts() const {
  return form_->ciphertexts();
}
const MonomialSeries& Helr::sigmoid() const {
  return form_->sigmoid();
}
const Bootstrapper& Helr::bootstrapper() const {
  return form_->bootstrapper();
}
std::vector<int> Helr::rotations() const {
  return form_->rotations();
}
u32 Helr::bootstraps() const {
  return form_->bootstraps();
}
u32 Helr::captured_graphs() const {
  return form_->captured_graphs();
}
std::size_t Helr::captured_kernels() const {
  return form_->captured_kernels();
}

void Helr::generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress) {
  form_->generate_keys(keygen, sk, progress);
}
std::shared_ptr<const BootstrappingKeys> Helr::keys() const {
  return form_->keys();
}
void Helr::use_keys(std::shared_ptr<const BootstrappingKeys> keys) {
  form_->use_keys(std::move(keys));
}

Helr::Batch Helr::encrypt_batch(Encryptor& enc, std::span<const double> x,
                                std::span<const std::uint8_t> labels, u32 iteration) const {
  detail::check_helr_data(x, labels, cfg_.batch, cfg_.features, "Helr::encrypt_batch");
  if (iteration >= cfg_.iterations) {
    throw ParameterError("Helr::encrypt_batch: iteration " + std::to_string(iteration) + " of " +
                         std::to_string(cfg_.iterations));
  }
  return form_->encrypt_batch(enc, x, labels, iteration);
}

Helr::State Helr::initial_state(Encryptor& enc) const {
  return form_->initial_state(enc);
}

std::vector<double> Helr::decrypt_weights(const Decryptor& dec, const State& s) const {
  return form_->decrypt_weights(dec, s);
}

void Helr::iterate(State& s, const Batch& b, HelrPhaseTimes* times) const {
  if (!form_->has_keys()) throw MissingKeyError("Helr::iterate: generate_keys() first");
  const u32 t = s.iteration;
  if (t >= cfg_.iterations) {
    throw ParameterError("Helr::iterate: all " + std::to_string(cfg_.iterations) +
                         " iterations are done");
  }
  const u32 c = form_->ciphertexts();
  if (b.iteration != t || b.inner.size() != c || b.gradient.size() != c) {
    throw ParameterError("Helr::iterate: the batch was encrypted for iteration " +
                         std::to_string(b.iteration) + ", the state is at " + std::to_string(t));
  }
  const OpScope scope("HELR");
  form_->iterate(s, b, times);
}

}  // namespace theo
