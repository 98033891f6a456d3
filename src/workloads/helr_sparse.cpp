// HELR, the sparse-weights layout: the library's fast variant (theo/workloads/helr.h,
// docs/workloads.md).
//
// Packing (better than the paper's for this library, which keeps 2 x C weight ciphertexts of W
// features repeated B times and reduces each of its C gradient ciphertexts with log2 B rotations):
//   * complex slots carry two real features each (feature f and f + F/2), so the 1024 x 256
//     mini-batch fills C = 4 ciphertexts of 2^15 slots instead of 8;
//   * the mini-batch is encrypted twice, in the two layouts whose reductions are cheap: rows of
//     F/2 complex features per sample, conjugate-packed, for the inner products (Re(z' v) sums
//     the two halves), and columns of W = slots / B features for the gradient (samples on the
//     outer axis, so the sample sum comes out replicated in the weights' own layout);
//   * each of the two reductions over C ciphertexts is merged (circuits/rotate_sum.h):
//     (a) 4 * 2 + 3 + 5 rotations + 1 conjugation, (c) 4 * 2 + 3 + 8, instead of 4 * 7 and 4 * 8;
//   * the weights are tiled with period F/2 (what both products need, no expansion), and packed
//     with period F = [w | q] into one sparse-slot ciphertext (F complex slots) just before a
//     bootstrapping: one cheap sparse bootstrapping refreshes the whole state, and one rotation
//     and one level split it again.
// Depth per iteration: 2 (inner products) + depth(sigmoid) + 2 (gradient), 6 for degree 3; a
// bootstrapped state (13 levels on bootparam_40, 1 for the split) carries 2 iterations.
// The schedule constants that differ between iterations of one shape (kappa in the inner
// products' mask, kappa and rho of the update) are plaintexts, so that a captured iteration
// replays with another iteration's values (helr_form.h).

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <utility>

#include "helr_form.h"
#include "theo/circuits/masked_polynomial.h"
#include "theo/circuits/rotate_sum.h"
#include "theo/ckks/evaluator_batch.h"
#include "theo/errors.h"

namespace theo::detail {

namespace {

using Cx = std::complex<double>;

class HelrSparse final : public HelrForm {
 public:
  HelrSparse(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);

  std::vector<int> rotations() const override;
  Helr::Batch encrypt_batch(Encryptor& enc, std::span<const double> x,
                            std::span<const std::uint8_t> labels, u32 iteration) const override;
  Helr::State initial_state(Encryptor& enc) const override;
  std::vector<double> decrypt_weights(const Decryptor& dec, const Helr::State& s) const override;
  void iterate(Helr::State& s, const Helr::Batch& b, HelrPhaseTimes* times) override;
  u32 ciphertexts() const override { return cts_; }

 private:
  struct Consts {
    std::unique_ptr<MergedReduction> inner;  // kappa / (2 bound) in its mask
    Plaintext kappa, rho;                    // kappa, rho (x bootstrap_scale before a pack)
    std::vector<const Plaintext*> plaintexts() const;
    std::vector<Plaintext*> plaintexts();
  };
  struct Io {
    const Ciphertext* packed = nullptr;
    const std::vector<Ciphertext>*w = nullptr, *q = nullptr, *rows = nullptr, *cols = nullptr;
    const Consts* k = nullptr;
    Ciphertext fresh, w_split, q_split, ip, sig, g, w_out, q_out, packed_out;
  };
  struct Unit {
    Ciphertext packed;
    std::vector<Ciphertext> w, q, rows, cols;
    Consts k;
    Io io;
    std::vector<Graph> graphs;
  };
  struct Shape {
    u32 level = 0;
    bool refreshed = false, pack = false;
    u32 packed_level = 0;  // the packed state's level (the first bootstrapping's differs)
    auto operator<=>(const Shape&) const = default;
  };

  bool refreshed(u32 t) const { return plan_.steps[t].bootstrap_before; }
  bool packs(u32 t) const { return bootstrap_before(t + 1); }
  u32 dsig() const { return iteration_depth_ - 4; }
  Consts make_consts(u32 t) const;
  Plaintext half_mask(u32 level, bool first, double value) const;
  std::vector<Phase<Io>> phases(u32 t) const;
  u32 key_switches() const;

  void phase_bootstrap(Io& io) const;
  void phase_unpack(Io& io) const;
  void phase_inner(Io& io, bool fresh) const;
  void phase_sigmoid(Io& io, u32 level) const;
  void phase_gradient(Io& io, u32 level, bool pack) const;
  void phase_update(Io& io, bool fresh, bool pack) const;

  u32 cts_ = 0, half_ = 0, width_ = 0;
  std::vector<Consts> consts_;                                                   // per iteration
  std::map<u32, std::unique_ptr<MaskedPolynomial>> sigmoid_;                     // by level
  std::map<std::pair<u32, double>, std::unique_ptr<MergedReduction>> gradient_;  // (level, value)
  std::map<u32, Plaintext> second_half_;  // level -> 1 on the second half of each period F
  Plaintext split_first_, split_second_;  // after bootstrapping: 1 / bootstrap_scale on a half
  std::map<Shape, std::unique_ptr<Unit>> units_;
  // The merged reductions' shapes.
  std::vector<int> pre_a_, post_a_, shifts_a_;
};

HelrSparse::HelrSparse(std::shared_ptr<const Context> ctx, const HelrConfig& cfg)
    : HelrForm(std::move(ctx), cfg) {
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
  if (cts_ > half_) throw ParameterError("Helr: the layout needs at most F/2 ciphertexts");
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

  const u32 n = slots_, c_count = cts_, r = width_, f = half_;
  // (a) inner products: per row of f complex features, reduce to r slots per ciphertext, merge C.
  for (u32 s = f / 2; s >= r && s > 0; s /= 2)
    pre_a_.push_back(static_cast<int>(s));
  for (u32 s = r / 2; s >= 1; s /= 2)
    post_a_.push_back(static_cast<int>(s));
  for (u32 c = 0; c < c_count; ++c)
    shifts_a_.push_back(-static_cast<int>(r * c));
  // (c) gradient: per ciphertext windows of C samples, masked with gamma at samples = 0 mod C.
  std::vector<int> pre_c, post_c, shifts_c;
  for (u32 s = 1; s < c_count; s *= 2)
    pre_c.push_back(static_cast<int>(r * s));
  for (u32 s = c_count * r; s < n; s *= 2)
    post_c.push_back(static_cast<int>(s));
  for (u32 c = 0; c < c_count; ++c)
    shifts_c.push_back(-static_cast<int>(r * c));
  std::vector<Cx> sig_mask(n, 0);
  for (u32 p = 0; p < n; p += r)
    sig_mask[p] = 1;
  const MonomialSeries p_of_x = sigma_.composed_with_scale(-cfg.sigmoid_bound);
  for (u32 t = 0; t < cfg.iterations; ++t) {
    const u32 L = plan_.steps[t].level_in;
    consts_.push_back(make_consts(t));
    if (!sigmoid_.count(L - 2))
      sigmoid_.emplace(L - 2,
                       std::make_unique<MaskedPolynomial>(encoder_, p_of_x, sig_mask, L - 2, n));
    const double value = packs(t) ? gamma() * cfg.bootstrap_scale : gamma();
    const auto key = std::make_pair(L - 3 - dsig(), value);
    if (!gradient_.count(key)) {
      std::vector<Cx> mask_c(n, 0);
      for (u32 p = 0; p < n; ++p)
        if ((p / r) % c_count == 0) mask_c[p] = value;
      std::vector<std::vector<Cx>> masks_c(c_count, mask_c);
      gradient_.emplace(
          key, std::make_unique<MergedReduction>(encoder_, L - 3 - dsig(), n, pre_c, masks_c,
                                                 shifts_c, post_c, cfg.reduction_radix));
    }
    if (packs(t) && !second_half_.count(L - 1))
      second_half_.emplace(L - 1, half_mask(L - 1, false, 1.0));
  }
  const u32 o = boot_->output_level();
  split_first_ = half_mask(o, true, 1 / cfg.bootstrap_scale);
  split_second_ = half_mask(o, false, 1 / cfg.bootstrap_scale);
}

Plaintext HelrSparse::half_mask(u32 level, bool first, double value) const {
  std::vector<Cx> v(slots_, 0);
  for (u32 p = 0; p < slots_; ++p)
    if ((p % (2 * half_) < half_) == first) v[p] = value;
  return encoder_.encode(v, level);
}

HelrSparse::Consts HelrSparse::make_consts(u32 t) const {
  Consts k;
  const u32 L = plan_.steps[t].level_in;
  // x = (kappa / (2 bound)) (ip + conj ip) = Re(z . v) / bound.
  std::vector<Cx> mask_a(slots_, 0);
  for (u32 p = 0; p < slots_; ++p)
    if (p % half_ < width_) mask_a[p] = kappa(t) / (2 * cfg_.sigmoid_bound);
  std::vector<std::vector<Cx>> masks_a(cts_, mask_a);
  k.inner = std::make_unique<MergedReduction>(encoder_, L - 1, slots_, pre_a_, masks_a, shifts_a_,
                                              post_a_, cfg_.reduction_radix);
  const double sc = packs(t) ? cfg_.bootstrap_scale : 1.0;
  k.kappa = constant(kappa(t) * sc, L);
  k.rho = constant(rho(t) * sc, L);
  return k;
}

std::vector<const Plaintext*> HelrSparse::Consts::plaintexts() const {
  std::vector<const Plaintext*> out = std::as_const(*inner).plaintexts();
  out.insert(out.end(), {&kappa, &rho});
  return out;
}

std::vector<Plaintext*> HelrSparse::Consts::plaintexts() {
  std::vector<Plaintext*> out = inner->plaintexts();
  out.insert(out.end(), {&kappa, &rho});
  return out;
}

std::vector<int> HelrSparse::rotations() const {
  std::vector<int> out = consts_.front().inner->rotations();
  for (const auto& [k, red] : gradient_)
    for (const int r : red->rotations())
      out.push_back(r);
  for (const int r : rotate_sum_rotations(-1, width_, slots_, cfg_.reduction_radix))
    out.push_back(r);
  out.push_back(static_cast<int>(half_));  // the split after bootstrapping
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Helr::Batch HelrSparse::encrypt_batch(Encryptor& enc, std::span<const double> x,
                                      std::span<const std::uint8_t> labels, u32 iteration) const {
  const u32 b = cfg_.batch, f = cfg_.features;
  const u32 n = slots_, h = half_, r = width_, cc = cts_;
  const u32 L = plan_.steps[iteration].level_in;
  const u32 Lc = L - 2 - dsig();
  auto z = [&](u32 k, u32 j) {
    return (labels[k] ? 1.0 : -1.0) * x[static_cast<std::size_t>(k) * f + j];
  };
  Helr::Batch out;
  out.iteration = iteration;
  for (u32 c = 0; c < cc; ++c) {
    // Rows: block a of ciphertext c holds sample C a + c, conj(z_f + i z_(f+h)).
    std::vector<Cx> rows(n);
    for (u32 a = 0; a < n / h; ++a) {
      const u32 k = cc * a + c;
      for (u32 j = 0; j < h; ++j)
        rows[a * h + j] = Cx(z(k, j), -z(k, j + h));
    }
    out.inner.push_back(enc.encrypt(encoder_.encode(rows, L)));
    // Columns: block k (width r) of ciphertext c holds features r c .. r c + r - 1 of sample k.
    std::vector<Cx> cols(n);
    for (u32 k = 0; k < b; ++k)
      for (u32 j = 0; j < r; ++j)
        cols[k * r + j] = Cx(z(k, r * c + j), z(k, r * c + j + h));
    out.gradient.push_back(enc.encrypt(encoder_.encode(cols, Lc)));
  }
  return out;
}

Helr::State HelrSparse::initial_state(Encryptor& enc) const {
  Helr::State s;
  const std::vector<Cx> zeros(slots_, 0);
  const u32 L = ctx_->default_encryption_level();
  s.w.push_back(enc.encrypt(encoder_.encode(zeros, L)));
  s.q.push_back(enc.encrypt(encoder_.encode(zeros, L)));
  return s;
}

std::vector<double> HelrSparse::decrypt_weights(const Decryptor& dec, const Helr::State& s) const {
  std::vector<double> w(cfg_.features);
  if (!s.packed.empty()) {
    const auto v = encoder_.decode(dec.decrypt(s.packed));
    for (u32 j = 0; j < half_; ++j) {
      w[j] = v[j].real() / cfg_.bootstrap_scale;
      w[j + half_] = v[j].imag() / cfg_.bootstrap_scale;
    }
    return w;
  }
  if (s.w.size() != 1) throw ParameterError("Helr::decrypt_weights: the state has no weights");
  const auto v = encoder_.decode(dec.decrypt(s.w.front()));
  for (u32 j = 0; j < half_; ++j) {
    w[j] = v[j].real();
    w[j + half_] = v[j].imag();
  }
  return w;
}

// ---- phases -------------------------------------------------------------------------------------

void HelrSparse::phase_bootstrap(Io& io) const {
  Ciphertext x = ev_.clone(*io.packed);
  x.set_slots(cfg_.features);
  io.fresh = bootstrap(x);
  io.fresh.set_slots(slots_);
}

void HelrSparse::phase_unpack(Io& io) const {
  const Ciphertext swapped = ev_.rotate(io.fresh, static_cast<int>(half_), keys_->galois);
  const Ciphertext* cw[] = {&io.fresh, &swapped};
  const Plaintext* pw[] = {&split_first_, &split_second_};
  const Plaintext* pq[] = {&split_second_, &split_first_};
  io.w_split = ev_.rescale(ev_.multiply_plain_sum(cw, pw));
  io.q_split = ev_.rescale(ev_.multiply_plain_sum(cw, pq));
}

void HelrSparse::phase_inner(Io& io, bool fresh) const {
  // (a) inner products: Re(z'_c . q), merged, scaled onto [-1, 1] by the mask.
  const Ciphertext& q = fresh ? io.q_split : io.q->front();
  std::vector<const Ciphertext*> a_ptr, q_ptr;
  for (const Ciphertext& c : *io.rows) {
    a_ptr.push_back(&c);
    q_ptr.push_back(&q);
  }
  const std::vector<Ciphertext> prod =
      multiply_relin_rescale_batch(ev_, a_ptr, q_ptr, keys_->relin, cts_);
  std::vector<const Ciphertext*> prod_ptr;
  for (const Ciphertext& c : prod)
    prod_ptr.push_back(&c);
  const Ciphertext ip = io.k->inner->apply(ev_, prod_ptr, keys_->galois);
  io.ip = ev_.add(ip, ev_.conjugate(ip, keys_->galois));
}

void HelrSparse::phase_sigmoid(Io& io, u32 level) const {
  // The sigmoid at the sample slots, replicated over each sample's block.
  const Ciphertext sig = sigmoid_.at(level)->evaluate(ev_, keys_->relin, io.ip);
  io.sig = rotate_sum(ev_, sig, -1, width_, keys_->galois, cfg_.reduction_radix);
}

void HelrSparse::phase_gradient(Io& io, u32 level, bool pack) const {
  // (c) gradient gamma g, replicated with period F/2 (the weights' layout).
  std::vector<const Ciphertext*> z_ptr, s_ptr;
  for (const Ciphertext& c : *io.cols) {
    z_ptr.push_back(&c);
    s_ptr.push_back(&io.sig);
  }
  const std::vector<Ciphertext> gp =
      multiply_relin_rescale_batch(ev_, z_ptr, s_ptr, keys_->relin, cts_);
  std::vector<const Ciphertext*> gp_ptr;
  for (const Ciphertext& c : gp)
    gp_ptr.push_back(&c);
  const double value = pack ? gamma() * cfg_.bootstrap_scale : gamma();
  io.g = gradient_.at({level, value})->apply(ev_, gp_ptr, keys_->galois);
}

void HelrSparse::phase_update(Io& io, bool fresh, bool pack) const {
  // w+ = kappa q + gamma g, q+ = kappa q + rho w + gamma g (or packed [w+ | q+] x scale).
  const Ciphertext& q = fresh ? io.q_split : io.q->front();
  const Ciphertext& w = fresh ? io.w_split : io.w->front();
  const Ciphertext kq = ev_.rescale(ev_.multiply_plain(q, io.k->kappa));
  const Ciphertext rw = ev_.rescale(ev_.multiply_plain(w, io.k->rho));
  if (pack) {
    const Ciphertext second = ev_.rescale(ev_.multiply_plain(rw, second_half_.at(rw.level())));
    io.packed_out = ev_.add(ev_.add(kq, io.g), second);
    canonical_scale(io.packed_out);
  } else {
    io.w_out = ev_.add(kq, io.g);
    io.q_out = ev_.add(io.w_out, rw);
    canonical_scale(io.w_out);
    canonical_scale(io.q_out);
  }
}

std::vector<HelrForm::Phase<HelrSparse::Io>> HelrSparse::phases(u32 t) const {
  const bool fresh = refreshed(t), pack = packs(t);
  const u32 L = plan_.steps[t].level_in;
  std::vector<Phase<Io>> p;
  if (fresh) {
    p.push_back(
        {"Bootstrap", [this](Io& io) { phase_bootstrap(io); }, &HelrPhaseTimes::bootstrap_ms});
    p.push_back({"Unpack", [this](Io& io) { phase_unpack(io); }, &HelrPhaseTimes::unpack_ms});
  }
  p.push_back({"InnerProduct", [this, fresh](Io& io) { phase_inner(io, fresh); },
               &HelrPhaseTimes::inner_product_ms});
  p.push_back(
      {"Sigmoid", [this, L](Io& io) { phase_sigmoid(io, L - 2); }, &HelrPhaseTimes::sigmoid_ms});
  const u32 lg = L - 3 - dsig();
  p.push_back({"Gradient", [this, lg, pack](Io& io) { phase_gradient(io, lg, pack); },
               &HelrPhaseTimes::gradient_ms});
  p.push_back({"Update", [this, fresh, pack](Io& io) { phase_update(io, fresh, pack); },
               &HelrPhaseTimes::update_ms});
  return p;
}

u32 HelrSparse::key_switches() const {
  const MergedReduction& inner = *consts_.front().inner;
  const MergedReduction& grad = *gradient_.begin()->second;
  return cts_ + inner.key_switches() + 1 + dsig() +
         static_cast<u32>(rotate_sum_rotations(-1, width_, slots_, cfg_.reduction_radix).size()) +
         cts_ + grad.key_switches();
}

void HelrSparse::iterate(Helr::State& s, const Helr::Batch& b, HelrPhaseTimes* times) {
  const u32 t = s.iteration;
  const bool fresh = refreshed(t), pack = packs(t);
  const u32 L = plan_.steps[t].level_in;
  if (fresh && s.packed.empty())
    throw LevelError("Helr::iterate: the state was not packed for bootstrapping");
  if (!fresh && (s.q.size() != 1 || s.w.size() != 1 || s.q.front().level() != L)) {
    throw LevelError("Helr::iterate: the state is not at level " + std::to_string(L) +
                     ", where the plan expects it");
  }
  Clock clock(*ctx_, times);
  const std::vector<Phase<Io>> ph = phases(t);
  Io eager;
  const Io* done = &eager;
  if (!cfg_.graphs) {
    eager.packed = &s.packed;
    eager.w = &s.w;
    eager.q = &s.q;
    eager.rows = &b.inner;
    eager.cols = &b.gradient;
    eager.k = &consts_[t];
    run_eager(ph, eager, clock);
  } else {
    std::unique_ptr<Unit>& slot = units_[Shape{L, fresh, pack, fresh ? s.packed.level() : 0}];
    if (!slot) {
      slot = std::make_unique<Unit>();
      Unit& u = *slot;
      if (fresh) {
        u.packed = ev_.clone(s.packed);
      } else {
        u.w = clone_all(s.w);
        u.q = clone_all(s.q);
      }
      u.rows = clone_all(b.inner);
      u.cols = clone_all(b.gradient);
      u.k = make_consts(t);
      u.io.packed = &u.packed;
      u.io.w = &u.w;
      u.io.q = &u.q;
      u.io.rows = &u.rows;
      u.io.cols = &u.cols;
      u.io.k = &u.k;
      capture(ph, u.io, u.graphs);
    }
    Unit& u = *slot;
    const Graph& g = u.graphs.front();
    if (fresh) {
      g.set_input(u.packed, s.packed);
    } else {
      load(g, u.w, s.w, "state w");
      load(g, u.q, s.q, "state q");
    }
    load(g, u.rows, b.inner, "batch (rows)");
    load(g, u.cols, b.gradient, "batch (columns)");
    load(g, u.k.plaintexts(), std::as_const(consts_[t]).plaintexts());
    replay(ph, u.graphs, clock);
    done = &u.io;
  }
  if (fresh) count_bootstrap();
  Helr::State next;
  next.iteration = t + 1;
  if (pack) {
    next.packed = cfg_.graphs ? ev_.clone(done->packed_out) : std::move(eager.packed_out);
  } else {
    next.w.push_back(cfg_.graphs ? ev_.clone(done->w_out) : std::move(eager.w_out));
    next.q.push_back(cfg_.graphs ? ev_.clone(done->q_out) : std::move(eager.q_out));
  }
  s = std::move(next);
  if (times) {
    if (fresh) times->bootstrap_limbs = ctx_->level(boot_->output_level()).limbs;
    times->inner_product_limbs = ctx_->level(L - 1).limbs;
    times->sigmoid_limbs = ctx_->level(L - 2).limbs;
    times->gradient_limbs = ctx_->level(L - 3 - dsig()).limbs;
    times->key_switches = key_switches();
  }
}

}  // namespace

std::unique_ptr<HelrForm> make_helr_sparse(std::shared_ptr<const Context> ctx,
                                           const HelrConfig& cfg) {
  return std::make_unique<HelrSparse>(std::move(ctx), cfg);
}

}  // namespace theo::detail
