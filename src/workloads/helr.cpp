#include "theo/workloads/helr.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include "theo/ckks/evaluator_batch.h"
#include "theo/errors.h"
#include "theo/ring/automorphism.h"
#include "theo/ring/op_scope.h"

namespace theo {

namespace {

using Cx = std::complex<double>;
using Clock = std::chrono::steady_clock;

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

void check_data(std::span<const double> x, std::span<const std::uint8_t> labels, u32 rows,
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

}  // namespace

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
  check_data(x, labels, n, f, "helr_reference_train");
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

// ---- the encrypted workload ---------------------------------------------------------------------

struct Helr::Impl {
  Impl(std::shared_ptr<const Context> c) : encoder(c), ev(c) {}
  Encoder encoder;
  Evaluator ev;
  std::vector<double> eta;
  std::vector<std::unique_ptr<MergedReduction>> inner;  // per iteration (its kappa in the mask)
  std::map<std::pair<u32, double>, std::unique_ptr<MergedReduction>> gradient;  // (level, value)
  std::vector<std::unique_ptr<MaskedPolynomial>> sigmoid;                       // per iteration
  std::map<u32, Plaintext> second_half;  // level -> 1 on the second half of each period F
  Plaintext split_first, split_second;   // after bootstrapping: 1 / bootstrap_scale on a half

  Plaintext half_mask(u32 n, u32 half, u32 level, bool first, double value) const {
    std::vector<Cx> v(n, 0);
    for (u32 p = 0; p < n; ++p)
      if ((p % (2 * half) < half) == first) v[p] = value;
    return encoder.encode(v, level);
  }

  double kappa(u32 t) const { return t == 0 ? 1.0 : 1 - eta[t - 1]; }
  double rho(u32 t) const { return eta[t] / (1 - eta[t]); }
};

Helr::Helr(std::shared_ptr<const Context> ctx, const HelrConfig& cfg)
    : ctx_(ctx ? std::move(ctx) : throw ContextError("Helr: the Context is null")), cfg_(cfg) {
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
  half_ = cfg.features / 2;
  const u32 max_slots = ctx_->max_slots();
  const u64 values = static_cast<u64>(half_) * cfg.batch;  // complex values per layout
  slots_ = static_cast<u32>(std::min<u64>(max_slots, values));
  cts_ = static_cast<u32>(values / slots_);
  width_ = slots_ / cfg.batch;  // columns layout: features per ciphertext (= row share R)
  if (width_ == 0) {
    throw ParameterError("Helr: a batch of " + std::to_string(cfg.batch) + " needs more than " +
                         std::to_string(max_slots) + " slots per ciphertext");
  }
  if (cfg.features > slots_) {
    throw ParameterError("Helr: " + std::to_string(cfg.features) +
                         " features do not fit the packed state in " + std::to_string(slots_) +
                         " slots (batch too small for this N)");
  }
  if (cts_ > half_) {
    throw ParameterError("Helr: the layout needs at most F/2 ciphertexts");
  }
  iteration_depth_ = 4 + static_cast<u32>(std::bit_width(cfg.sigmoid_degree));

  // Plan before any key or encryption work: a state bootstrapped to output_level() spends one
  // level on the split, then carries as many iterations as fit.
  BootstrapConfig bc;
  bc.slots = cfg.features;  // [w | q]: F complex slots
  boot_ = std::make_unique<Bootstrapper>(ctx_, bc);
  const LevelBudget budget = LevelBudget::of(*boot_, 1);
  std::vector<LevelStep> steps(cfg.iterations, LevelStep{"HELR iteration", iteration_depth_});
  plan_ = budget.plan(steps, ctx_->default_encryption_level());
  if (plan_.steps.front().bootstrap_before) {
    throw LevelError("Helr: the default encryption level " +
                     std::to_string(ctx_->default_encryption_level()) +
                     " is below one iteration's " + std::to_string(iteration_depth_) + " levels");
  }

  impl_ = std::make_unique<Impl>(ctx_);
  Impl& m = *impl_;
  m.eta = helr_eta_schedule(cfg.iterations);
  const u32 n = slots_, c_count = cts_, r = width_, f = half_;
  const u32 dsig = iteration_depth_ - 4;
  // (a) inner products: per row of f complex features, reduce to r slots per ciphertext, merge C.
  std::vector<int> pre_a, post_a, shifts_a;
  for (u32 s = f / 2; s >= r && s > 0; s /= 2)
    pre_a.push_back(static_cast<int>(s));
  for (u32 s = r / 2; s >= 1; s /= 2)
    post_a.push_back(static_cast<int>(s));
  for (u32 c = 0; c < c_count; ++c)
    shifts_a.push_back(-static_cast<int>(r * c));
  // (c) gradient: per ciphertext windows of C samples, masked with gamma at samples = 0 mod C.
  std::vector<int> pre_c, post_c, shifts_c;
  for (u32 s = 1; s < c_count; s *= 2)
    pre_c.push_back(static_cast<int>(r * s));
  for (u32 s = c_count * r; s < n; s *= 2)
    post_c.push_back(static_cast<int>(s));
  for (u32 c = 0; c < c_count; ++c)
    shifts_c.push_back(-static_cast<int>(r * c));
  const double gamma = cfg.learning_rate / cfg.batch;
  std::vector<Cx> sig_mask(n, 0);
  for (u32 p = 0; p < n; p += r)
    sig_mask[p] = 1;
  const MonomialSeries p_of_x = sigma_.composed_with_scale(-cfg.sigmoid_bound);
  for (u32 t = 0; t < cfg.iterations; ++t) {
    const u32 L = plan_.steps[t].level_in;
    // x = (kappa / (2 bound)) (ip + conj ip) = Re(z . v) / bound.
    std::vector<Cx> mask_a(n, 0);
    for (u32 p = 0; p < n; ++p)
      if (p % f < r) mask_a[p] = m.kappa(t) / (2 * cfg.sigmoid_bound);
    std::vector<std::vector<Cx>> masks_a(c_count, mask_a);
    m.inner.push_back(std::make_unique<MergedReduction>(m.encoder, L - 1, n, pre_a, masks_a,
                                                        shifts_a, post_a, cfg.reduction_radix));
    m.sigmoid.push_back(std::make_unique<MaskedPolynomial>(m.encoder, p_of_x, sig_mask, L - 2, n));
    const bool boot_next = t + 1 < cfg.iterations && plan_.steps[t + 1].bootstrap_before;
    const double value = boot_next ? gamma * cfg.bootstrap_scale : gamma;
    const auto key = std::make_pair(L - 3 - dsig, value);
    if (!m.gradient.count(key)) {
      std::vector<Cx> mask_c(n, 0);
      for (u32 p = 0; p < n; ++p)
        if ((p / r) % c_count == 0) mask_c[p] = value;
      std::vector<std::vector<Cx>> masks_c(c_count, mask_c);
      m.gradient.emplace(
          key, std::make_unique<MergedReduction>(m.encoder, L - 3 - dsig, n, pre_c, masks_c,
                                                 shifts_c, post_c, cfg.reduction_radix));
    }
    if (boot_next && !m.second_half.count(L - 1))
      m.second_half.emplace(L - 1, m.half_mask(n, f, L - 1, false, 1.0));
  }
  const u32 o = boot_->output_level();
  m.split_first = m.half_mask(n, f, o, true, 1 / cfg.bootstrap_scale);
  m.split_second = m.half_mask(n, f, o, false, 1 / cfg.bootstrap_scale);
}

Helr::~Helr() = default;

std::vector<int> Helr::rotations() const {
  std::vector<int> out;
  const Impl& m = *impl_;
  for (const auto& red : m.inner)
    for (const int r : red->rotations())
      out.push_back(r);
  for (const auto& [k, red] : m.gradient)
    for (const int r : red->rotations())
      out.push_back(r);
  for (const int r : rotate_sum_rotations(-1, width_, slots_, cfg_.reduction_radix))
    out.push_back(r);
  out.push_back(static_cast<int>(half_));  // the split after bootstrapping
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Helr::generate_keys(KeyGenerator& keygen, const SecretKey& sk, bool progress) {
  keys_ = std::make_unique<BootstrappingKeys>(boot_->generate_keys(keygen, sk, progress));
  std::vector<u32> elements;
  for (const int r : rotations()) {
    const u32 g = galois_element_for_rotation(r, ctx_->log_n());
    if (!keys_->galois.contains(g)) elements.push_back(g);
  }
  keygen.add_galois_keys(sk, elements, keys_->galois);
  planner_ = std::make_unique<LevelPlanner>(*boot_, *keys_);
}

Helr::Batch Helr::encrypt_batch(Encryptor& enc, std::span<const double> x,
                                std::span<const std::uint8_t> labels, u32 iteration) const {
  const u32 b = cfg_.batch, f = cfg_.features;
  check_data(x, labels, b, f, "Helr::encrypt_batch");
  if (iteration >= cfg_.iterations) {
    throw ParameterError("Helr::encrypt_batch: iteration " + std::to_string(iteration) + " of " +
                         std::to_string(cfg_.iterations));
  }
  const Impl& m = *impl_;
  const u32 n = slots_, h = half_, r = width_, cc = cts_;
  const u32 L = plan_.steps[iteration].level_in;
  const u32 Lc = L - 2 - (iteration_depth_ - 4);
  auto z = [&](u32 k, u32 j) {
    return (labels[k] ? 1.0 : -1.0) * x[static_cast<std::size_t>(k) * f + j];
  };
  Batch out;
  out.iteration = iteration;
  for (u32 c = 0; c < cc; ++c) {
    // Rows: block a of ciphertext c holds sample C a + c, conj(z_f + i z_(f+h)).
    std::vector<Cx> rows(n);
    for (u32 a = 0; a < n / h; ++a) {
      const u32 k = cc * a + c;
      for (u32 j = 0; j < h; ++j)
        rows[a * h + j] = Cx(z(k, j), -z(k, j + h));
    }
    out.rows.push_back(enc.encrypt(m.encoder.encode(rows, L)));
    // Columns: block k (width r) of ciphertext c holds features r c .. r c + r - 1 of sample k.
    std::vector<Cx> cols(n);
    for (u32 k = 0; k < b; ++k)
      for (u32 j = 0; j < r; ++j)
        cols[k * r + j] = Cx(z(k, r * c + j), z(k, r * c + j + h));
    out.columns.push_back(enc.encrypt(m.encoder.encode(cols, Lc)));
  }
  return out;
}

Helr::State Helr::initial_state(Encryptor& enc) const {
  State s;
  const std::vector<Cx> zeros(slots_, 0);
  const u32 L = ctx_->default_encryption_level();
  s.w = enc.encrypt(impl_->encoder.encode(zeros, L));
  s.q = enc.encrypt(impl_->encoder.encode(zeros, L));
  return s;
}

std::vector<double> Helr::decrypt_weights(const Decryptor& dec, const State& s) const {
  const Encoder& e = impl_->encoder;
  std::vector<double> w(cfg_.features);
  if (!s.packed.empty()) {
    const auto v = e.decode(dec.decrypt(s.packed));
    for (u32 j = 0; j < half_; ++j) {
      w[j] = v[j].real() / cfg_.bootstrap_scale;
      w[j + half_] = v[j].imag() / cfg_.bootstrap_scale;
    }
    return w;
  }
  const auto v = e.decode(dec.decrypt(s.w));
  for (u32 j = 0; j < half_; ++j) {
    w[j] = v[j].real();
    w[j + half_] = v[j].imag();
  }
  return w;
}

void Helr::iterate(State& s, const Batch& b, HelrPhaseTimes* times) const {
  if (!planner_) throw MissingKeyError("Helr::iterate: generate_keys() first");
  const u32 t = s.iteration;
  if (t >= cfg_.iterations) {
    throw ParameterError("Helr::iterate: all " + std::to_string(cfg_.iterations) +
                         " iterations are done");
  }
  if (b.iteration != t || b.rows.size() != cts_ || b.columns.size() != cts_) {
    throw ParameterError("Helr::iterate: the batch was encrypted for iteration " +
                         std::to_string(b.iteration) + ", the state is at " + std::to_string(t));
  }
  const Impl& m = *impl_;
  const Evaluator& ev = m.ev;
  const GaloisKeys& gk = keys_->galois;
  const RelinKey& rlk = keys_->relin;
  const u32 n = slots_, L = plan_.steps[t].level_in, dsig = iteration_depth_ - 4;
  auto now = Clock::now();
  auto lap = [&](double* ms) {
    if (!times) return;
    ctx_->backend().synchronize();
    const auto t1 = Clock::now();
    *ms += std::chrono::duration<double, std::milli>(t1 - now).count();
    now = t1;
  };

  const OpScope helr_scope("HELR");
  // Bootstrapping and split, where the plan put them.
  if (plan_.steps[t].bootstrap_before) {
    const OpScope scope("Bootstrap");
    if (s.packed.empty())
      throw LevelError("Helr::iterate: the state was not packed for bootstrapping");
    Ciphertext x = std::move(s.packed);
    x.set_slots(cfg_.features);
    Ciphertext fresh = planner_->bootstrap(x);
    fresh.set_slots(n);
    lap(times ? &times->bootstrap_ms : nullptr);
    if (times) times->bootstrap_limbs = ctx_->level(boot_->output_level()).limbs;
    const Ciphertext swapped = ev.rotate(fresh, static_cast<int>(half_), gk);
    const Plaintext& m1 = m.split_first;
    const Plaintext& m2 = m.split_second;
    const Ciphertext* cw[] = {&fresh, &swapped};
    const Plaintext* pw[] = {&m1, &m2};
    const Plaintext* pq[] = {&m2, &m1};
    s.w = ev.rescale(ev.multiply_plain_sum(cw, pw));
    s.q = ev.rescale(ev.multiply_plain_sum(cw, pq));
    lap(times ? &times->unpack_ms : nullptr);
  }
  if (s.q.level() != L) {
    throw LevelError("Helr::iterate: the state is at level " + std::to_string(s.q.level()) +
                     ", the plan expects " + std::to_string(L));
  }
  u32 switches = 0;
  // One scope per phase (each closed before the next opens, as the scope stack needs).
  auto phase = std::make_unique<OpScope>("InnerProduct");
  // (a) inner products: Re(z'_c . q), merged, scaled onto [-1, 1] by the mask.
  std::vector<const Ciphertext*> a_ptr, q_ptr;
  for (const Ciphertext& c : b.rows) {
    a_ptr.push_back(&c);
    q_ptr.push_back(&s.q);
  }
  std::vector<Ciphertext> prod = multiply_relin_rescale_batch(ev, a_ptr, q_ptr, rlk, cts_);
  std::vector<const Ciphertext*> prod_ptr;
  for (const Ciphertext& c : prod)
    prod_ptr.push_back(&c);
  const MergedReduction& inner = *m.inner[t];
  Ciphertext ip = inner.apply(ev, prod_ptr, gk);
  ev.add_inplace(ip, ev.conjugate(ip, gk));
  switches += cts_ + inner.key_switches() + 1;
  lap(times ? &times->inner_product_ms : nullptr);
  if (times) times->inner_product_limbs = ctx_->level(L - 1).limbs;

  // Sigmoid at the sample slots, replicated over each sample's block.
  phase.reset();
  phase = std::make_unique<OpScope>("Sigmoid");
  Ciphertext sig = m.sigmoid[t]->evaluate(ev, rlk, ip);
  sig = rotate_sum(ev, sig, -1, width_, gk, cfg_.reduction_radix);
  switches +=
      dsig + static_cast<u32>(rotate_sum_rotations(-1, width_, n, cfg_.reduction_radix).size());
  lap(times ? &times->sigmoid_ms : nullptr);
  if (times) times->sigmoid_limbs = ctx_->level(L - 2).limbs;

  // (c) gradient gamma g, replicated with period F/2 (the weights' layout).
  phase.reset();
  phase = std::make_unique<OpScope>("Gradient");
  std::vector<const Ciphertext*> z_ptr, s_ptr;
  for (const Ciphertext& c : b.columns) {
    z_ptr.push_back(&c);
    s_ptr.push_back(&sig);
  }
  std::vector<Ciphertext> gp = multiply_relin_rescale_batch(ev, z_ptr, s_ptr, rlk, cts_);
  std::vector<const Ciphertext*> gp_ptr;
  for (const Ciphertext& c : gp)
    gp_ptr.push_back(&c);
  const bool boot_next = t + 1 < cfg_.iterations && plan_.steps[t + 1].bootstrap_before;
  const double gamma = cfg_.learning_rate / cfg_.batch;
  const double value = boot_next ? gamma * cfg_.bootstrap_scale : gamma;
  const MergedReduction& grad = *m.gradient.at({L - 3 - dsig, value});
  Ciphertext g = grad.apply(ev, gp_ptr, gk);
  switches += cts_ + grad.key_switches();
  lap(times ? &times->gradient_ms : nullptr);
  if (times) times->gradient_limbs = ctx_->level(L - 3 - dsig).limbs;

  phase.reset();
  phase = std::make_unique<OpScope>("Update");
  // Update: w+ = kappa q + gamma g, q+ = kappa q + rho w + gamma g (or packed [w+ | q+] x scale).
  const double sc = boot_next ? cfg_.bootstrap_scale : 1.0;
  Ciphertext kq = ev.rescale(ev.multiply_const(s.q, m.kappa(t) * sc));
  Ciphertext rw = ev.rescale(ev.multiply_const(s.w, m.rho(t) * sc));
  if (boot_next) {
    Ciphertext second = ev.rescale(ev.multiply_plain(rw, m.second_half.at(rw.level())));
    Ciphertext packed = ev.add(kq, g);
    ev.add_inplace(packed, second);
    s.packed = std::move(packed);
    s.w = Ciphertext();
    s.q = Ciphertext();
  } else {
    Ciphertext w_new = ev.add(kq, g);
    Ciphertext q_new = ev.add(w_new, rw);
    s.w = std::move(w_new);
    s.q = std::move(q_new);
  }
  ++s.iteration;
  lap(times ? &times->update_ms : nullptr);
  if (times) times->key_switches = switches;
}

}  // namespace theo
