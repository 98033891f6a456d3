// HELR in Han et al.'s layout (AAAI 2019; theo/workloads/helr.h, docs/workloads.md).
//
// Slots n = N / 2, mini-batch B x F. A data ciphertext holds B rows of W = n / B features (slot
// r W + c = z_r[W j + c] in block j), C = F / W of them; the weights w and q are C ciphertexts
// each, every row the same W weights (replicated over the B rows).
//
// Iteration (level L; d = depth of the sigmoid):
//   inner products  s = sum_j Z_j (x) q_j, relinearized once (L - 1); rotate-and-sum over the W
//                   columns: column 0 of row r holds z_r . q
//   sigmoid         sqrt(gamma) p(-kappa s) at column 0 (the mask, with sqrt(gamma), rides in
//                   the polynomial's first products: L - 1 - d); rotate-and-sum replicates it
//                   over the row
//   gradient        P_j = Y_j (x) sigmoid (L - 2 - d), Y_j = sqrt(gamma) Z_j (the batch's
//                   second copy); rotate-and-sum over the B rows (strides W, 2W, ..., n/2),
//                   batched over the C ciphertexts step by step: gamma g_j in every row
//   update          w+ = kappa q + gamma g, q+ = w+ + rho w (kappa, rho: constant plaintexts, so
//                   that a captured iteration takes another iteration's values)
// (w, q and gamma g scaled by kStateGain throughout: see it below.)
// gamma = learning_rate / B (2^-12.3 at B = 1024) is split between the two factors of the
// gradient's products. The noise the sigmoid phase adds (its rescales and the replicating
// rotations' key switches, ~2^-21 per slot at N = 2^16, Delta = 2^40) does not scale with the
// values: with all of gamma in the mask those values would be ~2^-13, the noise 2^-8 of them,
// and summed over the B rows it would set the weights' error (11.6 bits after 32 iterations on
// bootparam_40). With sqrt(gamma) on each side the sigmoid's values are 2^6 larger and the data's
// encryption noise (of the same absolute size) is 2^-16 of its values: both well below the
// gradient's own rotate-and-sum noise, which now sets the error.
// Bootstrapping (where the plan says, floor level 1): the 2C ciphertexts are packed into one
// full-slot ciphertext X, block b (w_j: b = j, q_j: b = C + j) in the rows r = b mod 2C, with the
// factors the refreshed iteration needs (bootstrap_scale x rho, bootstrap_scale x kappa) in the
// packing masks (one level), bootstrapped at full slots; the B / 2C copies of each block are
// summed (rotate-and-sum with stride 2C rows: the bootstrapping's errors average out, and every
// row holds the same weights again, as the sparse variant's sparse bootstrapping does), and the
// sum is rotated by whole rows: R_k = X rotated by k rows (k < 2C; row r of R_k holds block
// (r + k) mod 2C). Unpacking then costs no level of its own: the inner products read D_k (x) R_k
// with D_k = sum_j mask (x) Z_j, the data's rows whose R_k-row holds q_j (the data is encrypted
// one level higher for that iteration), and the update reads kappa q_j = sum_k mask (x) R_k in
// its one plaintext product.

#include <algorithm>
#include <bit>
#include <cmath>
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

std::vector<const Ciphertext*> pointers(const std::vector<Ciphertext>& v) {
  std::vector<const Ciphertext*> out;
  for (const Ciphertext& c : v)
    out.push_back(&c);
  return out;
}

class HelrHan final : public HelrForm {
 public:
  HelrHan(std::shared_ptr<const Context> ctx, const HelrConfig& cfg);

  std::vector<int> rotations() const override;
  Helr::Batch encrypt_batch(Encryptor& enc, std::span<const double> x,
                            std::span<const std::uint8_t> labels, u32 iteration) const override;
  Helr::State initial_state(Encryptor& enc) const override;
  std::vector<double> decrypt_weights(const Decryptor& dec, const Helr::State& s) const override;
  void iterate(Helr::State& s, const Helr::Batch& b, HelrPhaseTimes* times) override;
  u32 ciphertexts() const override { return cts_; }

 private:
  // The constants one iteration reads that differ between iterations of one shape.
  struct Consts {
    std::unique_ptr<MaskedPolynomial> sigmoid;  // gamma p(-kappa s) at column 0
    Plaintext kappa, rho;                       // iterations without bootstrapping
    std::vector<Plaintext> pack;                // with: 2C packing masks
    std::vector<const Plaintext*> plaintexts() const;
    std::vector<Plaintext*> plaintexts();
  };
  // What the phases read and make (helr_form.h).
  struct Io {
    const std::vector<Ciphertext>*w = nullptr, *q = nullptr, *inner = nullptr, *grad = nullptr;
    const Consts* k = nullptr;
    Ciphertext x;                 // the bootstrapped pack
    std::vector<Ciphertext> rot;  // R_k
    Ciphertext s, sig;
    std::vector<Ciphertext> g, w_out, q_out;
  };
  // One iteration shape, captured.
  struct Unit {
    std::vector<Ciphertext> w, q, inner, grad;
    Consts k;
    Io io;
    std::vector<Graph> graphs;
  };
  struct Shape {
    u32 level = 0, pack_level = 0;
    bool refreshed = false;
    auto operator<=>(const Shape&) const = default;
  };

  bool refreshed(u32 t) const { return plan_.steps[t].bootstrap_before; }
  Shape shape(u32 t) const {
    return {plan_.steps[t].level_in, refreshed(t) ? plan_.steps[t - 1].level_out : 0, refreshed(t)};
  }
  u32 dsig() const { return iteration_depth_ - 2; }
  // gamma = split_gamma()^2: half in the sigmoid's mask, half in the gradient's data (see the
  // header).
  double split_gamma() const { return std::sqrt(gamma()); }
  // The state holds kStateGain x (w, q): the gradient's products then carry kStateGain x gamma
  // (in the sigmoid's mask), so the noise the gradient's rotate-and-sum adds (absolute: the
  // product's rescale and the first rotations' key switches, summed over the B rows) is that much
  // smaller against the weights. The inner products come out kStateGain x larger (the sigmoid's
  // composition divides by it), the packing masks divide by it, the unpacking's multiply by it,
  // decrypt_weights divides by it. A larger gain would shrink the first product of the sigmoid's
  // cubic term (c3 x) until its rescale noise, multiplied by x^2, took over (estimated near 2^3).
  static constexpr double kStateGain = 4;
  Consts make_consts(u32 t) const;
  // Slot values 1 / bootstrap_scale on the rows r = c mod 2C.
  Plaintext row_mask(u32 c, double value, u32 level) const;
  std::vector<Phase<Io>> phases(bool refreshed) const;
  u32 key_switches(bool refreshed) const;

  void phase_bootstrap(Io& io) const;
  void phase_unpack(Io& io) const;
  void phase_inner(Io& io, bool refreshed) const;
  void phase_sigmoid(Io& io) const;
  void phase_gradient(Io& io) const;
  void phase_update(Io& io, bool refreshed) const;

  u32 width_ = 0, cts_ = 0;
  std::vector<Consts> consts_;                   // per iteration
  std::vector<Plaintext> rows_out_, rows_data_;  // 2C row masks at o and o + 1
  std::map<Shape, std::unique_ptr<Unit>> units_;
};

HelrHan::HelrHan(std::shared_ptr<const Context> ctx, const HelrConfig& cfg)
    : HelrForm(std::move(ctx), cfg) {
  slots_ = ctx_->max_slots();
  if (slots_ % cfg.batch != 0 || cfg.batch > slots_) {
    throw ParameterError("Helr (han2019): a batch of " + std::to_string(cfg.batch) +
                         " rows does not divide the " + std::to_string(slots_) + " slots");
  }
  width_ = slots_ / cfg.batch;
  if (cfg.features < width_) {
    throw ParameterError("Helr (han2019): " + std::to_string(cfg.features) + " features x " +
                         std::to_string(cfg.batch) + " samples do not fill the " +
                         std::to_string(slots_) + " slots of a data ciphertext");
  }
  cts_ = cfg.features / width_;
  if (cfg.batch < 2 * cts_) {
    throw ParameterError(
        "Helr (han2019): the packed weights need 2C = " + std::to_string(2 * cts_) +
        " rows, the batch has " + std::to_string(cfg.batch));
  }
  iteration_depth_ = 2 + static_cast<u32>(std::bit_width(cfg.sigmoid_degree));

  // Full-slot bootstrapping at the default message ratio: the packed weights (period 2C rows,
  // |slot| <~ 0.5 after bootstrap_scale) have polynomial coefficients of ~2^-7, whose EvalMod
  // error (2 pi x)^2 / 6 at x = 2^-14 is ~2^-25 relative (theo/circuits/bootstrapper.h).
  boot_ = std::make_unique<Bootstrapper>(ctx_, BootstrapConfig{});
  const u32 o = boot_->output_level();
  // Floor 1: the packing before a bootstrapping takes the last level.
  const LevelBudget budget(o, 1);
  std::vector<LevelStep> steps(cfg.iterations, LevelStep{"HELR iteration", iteration_depth_});
  plan_ = budget.plan(steps, ctx_->default_encryption_level());
  if (plan_.steps.front().bootstrap_before) {
    throw LevelError("Helr: the default encryption level " +
                     std::to_string(ctx_->default_encryption_level()) +
                     " is below one iteration's " + std::to_string(iteration_depth_) +
                     " levels and the packing's one");
  }
  if (plan_.bootstraps > 0 && o + 1 > ctx_->max_level()) {
    throw LevelError("Helr (han2019): the data of an iteration after a bootstrapping needs level " +
                     std::to_string(o + 1) + ", above the top level " +
                     std::to_string(ctx_->max_level()));
  }
  for (u32 t = 0; t < cfg.iterations; ++t)
    consts_.push_back(make_consts(t));
  if (plan_.bootstraps > 0) {
    // kStateGain / (bootstrap_scale x the copies the unpacking sums).
    const double unpack = kStateGain / (cfg.bootstrap_scale * (cfg.batch / (2 * cts_)));
    for (u32 c = 0; c < 2 * cts_; ++c) {
      rows_out_.push_back(row_mask(c, unpack, o));
      rows_data_.push_back(row_mask(c, unpack, o + 1));
    }
  }
}

Plaintext HelrHan::row_mask(u32 c, double value, u32 level) const {
  std::vector<double> v(slots_, 0);
  for (u32 p = 0; p < slots_; ++p)
    if ((p / width_) % (2 * cts_) == c) v[p] = value;
  return encoder_.encode(v, level);
}

HelrHan::Consts HelrHan::make_consts(u32 t) const {
  Consts k;
  const u32 L = plan_.steps[t].level_in;
  const bool fresh = refreshed(t);
  // After a bootstrapping kappa is in the pack (the inner products read kappa q).
  const MonomialSeries p = sigma_.composed_with_scale((fresh ? -1.0 : -kappa(t)) / kStateGain);
  std::vector<Cx> mask(slots_, 0);
  for (u32 r = 0; r < cfg_.batch; ++r)
    mask[static_cast<std::size_t>(r) * width_] = split_gamma() * kStateGain;
  k.sigmoid = std::make_unique<MaskedPolynomial>(encoder_, p, mask, L - 1, slots_);
  if (!fresh) {
    k.kappa = constant(kappa(t), L);
    k.rho = constant(rho(t), L);
  } else {
    const u32 lp = plan_.steps[t - 1].level_out;
    const double sc = cfg_.bootstrap_scale;
    for (u32 j = 0; j < cts_; ++j)
      k.pack.push_back(row_mask(j, sc * rho(t) / kStateGain, lp));
    for (u32 j = 0; j < cts_; ++j)
      k.pack.push_back(row_mask(cts_ + j, sc * kappa(t) / kStateGain, lp));
  }
  return k;
}

std::vector<const Plaintext*> HelrHan::Consts::plaintexts() const {
  std::vector<const Plaintext*> out = std::as_const(*sigmoid).plaintexts();
  if (!kappa.empty()) out.insert(out.end(), {&kappa, &rho});
  for (const Plaintext& m : pack)
    out.push_back(&m);
  return out;
}

std::vector<Plaintext*> HelrHan::Consts::plaintexts() {
  std::vector<Plaintext*> out = sigmoid->plaintexts();
  if (!kappa.empty()) out.insert(out.end(), {&kappa, &rho});
  for (Plaintext& m : pack)
    out.push_back(&m);
  return out;
}

std::vector<int> HelrHan::rotations() const {
  std::vector<int> out = rotate_sum_rotations(1, width_, slots_, cfg_.reduction_radix);
  for (const int r : rotate_sum_rotations(-1, width_, slots_, cfg_.reduction_radix))
    out.push_back(r);
  for (u32 s = width_; s < slots_; s *= 2)
    out.push_back(static_cast<int>(s));
  for (u32 k = 1; k < 2 * cts_; ++k)
    out.push_back(static_cast<int>(k * width_));
  for (const int r : rotate_sum_rotations(static_cast<int>(2 * cts_ * width_),
                                          cfg_.batch / (2 * cts_), slots_, cfg_.reduction_radix))
    out.push_back(r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Helr::Batch HelrHan::encrypt_batch(Encryptor& enc, std::span<const double> x,
                                   std::span<const std::uint8_t> labels, u32 iteration) const {
  const u32 f = cfg_.features, L = plan_.steps[iteration].level_in;
  const u32 l_inner = refreshed(iteration) ? L + 1 : L, l_grad = L - 1 - dsig();
  Helr::Batch out;
  out.iteration = iteration;
  std::vector<double> z(slots_);
  for (u32 j = 0; j < cts_; ++j) {
    for (u32 r = 0; r < cfg_.batch; ++r) {
      const double y = labels[r] ? 1.0 : -1.0;
      for (u32 c = 0; c < width_; ++c)
        z[static_cast<std::size_t>(r) * width_ + c] =
            y * x[static_cast<std::size_t>(r) * f + j * width_ + c];
    }
    out.inner.push_back(enc.encrypt(encoder_.encode(z, l_inner)));
    for (double& v : z)
      v *= split_gamma();
    out.gradient.push_back(enc.encrypt(encoder_.encode(z, l_grad)));
  }
  return out;
}

Helr::State HelrHan::initial_state(Encryptor& enc) const {
  Helr::State s;
  const std::vector<double> zeros(slots_, 0);
  const u32 L = ctx_->default_encryption_level();
  for (u32 j = 0; j < cts_; ++j) {
    s.w.push_back(enc.encrypt(encoder_.encode(zeros, L)));
    s.q.push_back(enc.encrypt(encoder_.encode(zeros, L)));
  }
  return s;
}

std::vector<double> HelrHan::decrypt_weights(const Decryptor& dec, const Helr::State& s) const {
  if (s.w.size() != cts_) {
    throw ParameterError("Helr::decrypt_weights: the state has " + std::to_string(s.w.size()) +
                         " weight ciphertexts, the layout " + std::to_string(cts_));
  }
  std::vector<double> w(cfg_.features);
  for (u32 j = 0; j < cts_; ++j) {
    const auto v = encoder_.decode(dec.decrypt(s.w[j]));
    for (u32 c = 0; c < width_; ++c)
      w[j * width_ + c] = v[c].real() / kStateGain;  // row 0 (every row holds the same weights)
  }
  return w;
}

// ---- phases -------------------------------------------------------------------------------------

void HelrHan::phase_bootstrap(Io& io) const {
  std::vector<const Ciphertext*> cts;
  for (const Ciphertext& c : *io.w)
    cts.push_back(&c);
  for (const Ciphertext& c : *io.q)
    cts.push_back(&c);
  std::vector<const Plaintext*> masks;
  for (const Plaintext& m : io.k->pack)
    masks.push_back(&m);
  io.x = bootstrap(ev_.rescale(ev_.multiply_plain_sum(cts, masks)));
}

void HelrHan::phase_unpack(Io& io) const {
  // The B / 2C copies of each block summed: their bootstrapping errors average out and every row
  // holds the same weights again (the masks that follow divide by the count).
  const Ciphertext sum = rotate_sum(ev_, io.x, static_cast<int>(2 * cts_ * width_),
                                    cfg_.batch / (2 * cts_), keys_->galois, cfg_.reduction_radix);
  std::vector<int> rows;
  for (u32 k = 1; k < 2 * cts_; ++k)
    rows.push_back(static_cast<int>(k * width_));
  std::vector<Ciphertext> r = ev_.rotate_hoisted(sum, rows, keys_->galois);
  io.rot.clear();
  io.rot.push_back(ev_.clone(sum));
  for (Ciphertext& c : r)
    io.rot.push_back(std::move(c));
}

void HelrHan::phase_inner(Io& io, bool fresh) const {
  // The C (or 2C) tensor products summed and relinearized once.
  std::vector<const Ciphertext*> a, b;
  std::vector<Ciphertext> d;
  u32 level = 0;
  if (!fresh) {
    a = pointers(*io.inner);
    b = pointers(*io.q);
    level = io.q->front().level();
  } else {
    // D_k: the rows r of the data whose R_k row holds a q block, (r + k) mod 2C = C + j.
    const u32 c2 = 2 * cts_;
    const std::vector<const Ciphertext*> data = pointers(*io.inner);
    for (u32 k = 0; k < c2; ++k) {
      std::vector<const Plaintext*> masks;
      for (u32 j = 0; j < cts_; ++j)
        masks.push_back(&rows_data_[(cts_ + j + c2 - k) % c2]);
      d.push_back(ev_.rescale(ev_.multiply_plain_sum(data, masks)));
    }
    a = pointers(d);
    b = pointers(io.rot);
    level = io.rot.front().level();
  }
  const Ciphertext s = ev_.multiply_sum_relin_rescale(a, b, level, keys_->relin);
  io.s = rotate_sum(ev_, s, 1, width_, keys_->galois, cfg_.reduction_radix);
}

void HelrHan::phase_sigmoid(Io& io) const {
  const Ciphertext sig = io.k->sigmoid->evaluate(ev_, keys_->relin, io.s);
  io.sig = rotate_sum(ev_, sig, -1, width_, keys_->galois, cfg_.reduction_radix);
}

void HelrHan::phase_gradient(Io& io) const {
  std::vector<const Ciphertext*> sig(cts_, &io.sig);
  std::vector<Ciphertext> p =
      multiply_relin_rescale_batch(ev_, pointers(*io.grad), sig, keys_->relin, cts_);
  for (u32 s = width_; s < slots_; s *= 2) {
    const std::vector<int> steps(cts_, static_cast<int>(s));
    std::vector<Ciphertext> r = rotate_batch(ev_, pointers(p), steps, keys_->galois);
    for (u32 j = 0; j < cts_; ++j)
      p[j] = ev_.add(p[j], r[j]);
  }
  io.g = std::move(p);
}

void HelrHan::phase_update(Io& io, bool fresh) const {
  std::vector<Ciphertext> kq, rw;
  if (!fresh) {
    for (u32 j = 0; j < cts_; ++j) {
      kq.push_back(ev_.multiply_plain((*io.q)[j], io.k->kappa));
      rw.push_back(ev_.multiply_plain((*io.w)[j], io.k->rho));
    }
  } else {
    const u32 c2 = 2 * cts_;
    const std::vector<const Ciphertext*> rot = pointers(io.rot);
    for (u32 j = 0; j < cts_; ++j) {
      std::vector<const Plaintext*> mq, mw;
      for (u32 k = 0; k < c2; ++k) {
        mq.push_back(&rows_out_[(cts_ + j + c2 - k) % c2]);
        mw.push_back(&rows_out_[(j + c2 - k) % c2]);
      }
      kq.push_back(ev_.multiply_plain_sum(rot, mq));
      rw.push_back(ev_.multiply_plain_sum(rot, mw));
    }
  }
  kq = rescale_batch(ev_, pointers(kq));
  rw = rescale_batch(ev_, pointers(rw));
  const u32 lg = io.g.front().level();
  if (kq.front().level() > lg) {
    kq = level_down_batch(ev_, pointers(kq), lg);
    rw = level_down_batch(ev_, pointers(rw), lg);
  }
  io.w_out.clear();
  io.q_out.clear();
  for (u32 j = 0; j < cts_; ++j) {
    io.w_out.push_back(ev_.add(kq[j], io.g[j]));
    io.q_out.push_back(ev_.add(io.w_out[j], rw[j]));
    canonical_scale(io.w_out[j]);
    canonical_scale(io.q_out[j]);
  }
}

std::vector<HelrForm::Phase<HelrHan::Io>> HelrHan::phases(bool fresh) const {
  std::vector<Phase<Io>> p;
  if (fresh) {
    p.push_back(
        {"Bootstrap", [this](Io& io) { phase_bootstrap(io); }, &HelrPhaseTimes::bootstrap_ms});
    p.push_back({"Unpack", [this](Io& io) { phase_unpack(io); }, &HelrPhaseTimes::unpack_ms});
  }
  p.push_back({"InnerProduct", [this, fresh](Io& io) { phase_inner(io, fresh); },
               &HelrPhaseTimes::inner_product_ms});
  p.push_back({"Sigmoid", [this](Io& io) { phase_sigmoid(io); }, &HelrPhaseTimes::sigmoid_ms});
  p.push_back({"Gradient", [this](Io& io) { phase_gradient(io); }, &HelrPhaseTimes::gradient_ms});
  p.push_back(
      {"Update", [this, fresh](Io& io) { phase_update(io, fresh); }, &HelrPhaseTimes::update_ms});
  return p;
}

u32 HelrHan::key_switches(bool fresh) const {
  const u32 radix = cfg_.reduction_radix;
  u32 n = 1 + static_cast<u32>(rotate_sum_rotations(1, width_, slots_, radix).size());
  // The masked polynomial: its powers x^(2^j) (d - 1) and one product per further bit of each
  // term.
  const u32 d = sigma_.degree();
  n += dsig() - 1;
  for (u32 i = 1; i <= d; ++i)
    if (sigma_.coeffs[i] != 0) n += static_cast<u32>(std::popcount(i >> std::countr_zero(i))) - 1;
  n += static_cast<u32>(rotate_sum_rotations(-1, width_, slots_, radix).size());
  n += cts_ * (1 + static_cast<u32>(std::countr_zero(cfg_.batch)));
  if (fresh) {
    n += 2 * cts_ - 1;
    n += static_cast<u32>(rotate_sum_rotations(static_cast<int>(2 * cts_ * width_),
                                               cfg_.batch / (2 * cts_), slots_, radix)
                              .size());
  }
  return n;
}

void HelrHan::iterate(Helr::State& s, const Helr::Batch& b, HelrPhaseTimes* times) {
  const u32 t = s.iteration;
  const bool fresh = refreshed(t);
  if (s.w.size() != cts_ || s.q.size() != cts_) {
    throw ParameterError("Helr::iterate: the state has " + std::to_string(s.w.size()) + " + " +
                         std::to_string(s.q.size()) + " weight ciphertexts, the layout " +
                         std::to_string(cts_) + " + " + std::to_string(cts_));
  }
  const u32 expect = fresh ? plan_.steps[t - 1].level_out : plan_.steps[t].level_in;
  if (s.q.front().level() != expect) {
    throw LevelError("Helr::iterate: the state is at level " + std::to_string(s.q.front().level()) +
                     ", the plan expects " + std::to_string(expect));
  }
  Clock clock(*ctx_, times);
  const std::vector<Phase<Io>> ph = phases(fresh);
  const Io* done = nullptr;
  Io eager;
  if (!cfg_.graphs) {
    eager.w = &s.w;
    eager.q = &s.q;
    eager.inner = &b.inner;
    eager.grad = &b.gradient;
    eager.k = &consts_[t];
    run_eager(ph, eager, clock);
    done = &eager;
  } else {
    std::unique_ptr<Unit>& slot = units_[shape(t)];
    if (!slot) {
      slot = std::make_unique<Unit>();
      Unit& u = *slot;
      u.w = clone_all(s.w);
      u.q = clone_all(s.q);
      u.inner = clone_all(b.inner);
      u.grad = clone_all(b.gradient);
      u.k = make_consts(t);
      u.io.w = &u.w;
      u.io.q = &u.q;
      u.io.inner = &u.inner;
      u.io.grad = &u.grad;
      u.io.k = &u.k;
      capture(ph, u.io, u.graphs);
    }
    Unit& u = *slot;
    const Graph& g = u.graphs.front();
    load(g, u.w, s.w, "state w");
    load(g, u.q, s.q, "state q");
    load(g, u.inner, b.inner, "batch (inner products)");
    load(g, u.grad, b.gradient, "batch (gradient)");
    load(g, u.k.plaintexts(), std::as_const(consts_[t]).plaintexts());
    replay(ph, u.graphs, clock);
    done = &u.io;
  }
  if (fresh) count_bootstrap();
  // The next state: the outputs themselves eagerly, copies of the graphs' outputs otherwise.
  if (!cfg_.graphs) {
    s.w = std::move(eager.w_out);
    s.q = std::move(eager.q_out);
  } else {
    s.w = clone_all(done->w_out);
    s.q = clone_all(done->q_out);
  }
  ++s.iteration;
  if (times) {
    const u32 L = plan_.steps[t].level_in;
    if (fresh) times->bootstrap_limbs = ctx_->level(boot_->output_level()).limbs;
    times->inner_product_limbs = ctx_->level(L - 1).limbs;
    times->sigmoid_limbs = ctx_->level(L - 1).limbs;
    times->gradient_limbs = ctx_->level(L - 1 - dsig()).limbs;
    times->key_switches = key_switches(fresh);
  }
}

}  // namespace

std::unique_ptr<HelrForm> make_helr_han(std::shared_ptr<const Context> ctx, const HelrConfig& cfg) {
  return std::make_unique<HelrHan>(std::move(ctx), cfg);
}

}  // namespace theo::detail
