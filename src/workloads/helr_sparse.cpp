// HELR, the sparse-weights layout: the library's fast variant (theo/workloads/helr.h,
// docs/workloads.md).
//
// Packing (better than the paper's for this library, which keeps 2 x C weight ciphertexts of W
// features repeated B times and reduces each of its C gradient ciphertexts with log2 B rotations):
//   * complex slots carry two real features each (feature f and f + F/2), so the 1024 x 256
//     mini-batch fills C = 4 ciphertexts of 2^15 slots instead of 8;
//   * the weights are tiled with period F/2 = C W complex features: block k (W = slots / B slots)
//     of a weight ciphertext holds feature group k mod C;
//   * the mini-batch is encrypted twice, each time with sample k's features in block k (in group
//     order rotated per ciphertext), so that neither reduction needs a mask, i.e. a level:
//     (a) inner products: ciphertext c holds group (k + c) mod C of sample k, conjugated, which
//         the weights rotated by c blocks (C - 1 hoisted rotations) meet slot for slot: the C
//         products are summed before one relinearization, then summed over the W slots of each
//         block (log2 W rotations) and the real part taken (one conjugation);
//     (c) gradient: ciphertext c holds group k mod C of sample k + c, which the sigmoid (replicated
//         over each block) rotated by c blocks meets: again one relinearization for the C
//         products, and the sum over blocks k mod C (log2 B/C rotations) leaves the gradient
//         replicated in the weights' own layout;
//     10 + 12 key switches for degree 3 with the sigmoid's replication in between (masked,
//     merged reductions, circuits/rotate_sum.h, would take 21 and 23 and a level each);
//   * the factors that would have needed a plaintext product (kappa / (2 bound), the inner
//     products onto [-1, 1]; gamma, x bootstrap_scale before a pack) are public constants of
//     the schedule: the client's data carries them (encrypt_batch);
//   * the state [w | q] is packed with period F (F complex slots) into one sparse-slot ciphertext
//     just before a bootstrapping: one cheap sparse bootstrapping refreshes the whole state, and
//     one rotation and one level split it again.
// Depth per iteration: 1 (inner products) + depth(sigmoid) + 1 (gradient), 4 for degree 3; a
// bootstrapped state (13 levels on bootparam_40, 1 for the split) carries 3 iterations.
// The schedule constants that differ between iterations of one shape (kappa and rho of the
// update) are plaintexts, so that a captured iteration replays with another iteration's values
// (helr_form.h).

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <utility>

#include "helr_form.h"
#include "theo/circuits/masked_polynomial.h"
#include "theo/circuits/rotate_sum.h"
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
    Plaintext kappa, rho;  // kappa, rho (x bootstrap_scale before a pack)
    std::vector<const Plaintext*> plaintexts() const { return {&kappa, &rho}; }
    std::vector<Plaintext*> plaintexts() { return {&kappa, &rho}; }
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
  u32 dsig() const { return iteration_depth_ - 2; }
  // gamma (x bootstrap_scale before a pack), in the gradient's data.
  double gradient_factor(bool pack) const {
    return pack ? gamma() * cfg_.bootstrap_scale : gamma();
  }
  Consts make_consts(u32 t) const;
  Plaintext half_mask(u32 level, bool first, double value) const;
  // Left rotations by W, ..., (C - 1) W: what moves the weights' (or the sigmoid's) blocks onto
  // the data's groups of ciphertexts 1 .. C - 1.
  std::vector<int> block_shift_steps() const;
  // sum_c data[c] . shift_c(x) (shift_0 = x itself, the others hoisted rotations), relinearized
  // once and rescaled: both reductions' products.
  Ciphertext shifted_product_sum(const std::vector<Ciphertext>& data, const Ciphertext& x) const;
  std::vector<Phase<Io>> phases(u32 t) const;
  u32 key_switches() const;

  void phase_bootstrap(Io& io) const;
  void phase_unpack(Io& io) const;
  void phase_inner(Io& io, bool fresh) const;
  void phase_sigmoid(Io& io, u32 level) const;
  void phase_gradient(Io& io) const;
  void phase_update(Io& io, bool fresh, bool pack) const;

  u32 cts_ = 0, half_ = 0, width_ = 0;
  std::vector<Consts> consts_;                                // per iteration
  std::map<u32, std::unique_ptr<MaskedPolynomial>> sigmoid_;  // by input level
  std::map<u32, Plaintext> second_half_;  // level -> 1 on the second half of each period F
  Plaintext split_first_, split_second_;  // after bootstrapping: 1 / bootstrap_scale on a half
  std::map<Shape, std::unique_ptr<Unit>> units_;
};

HelrSparse::HelrSparse(std::shared_ptr<const Context> ctx, const HelrConfig& cfg)
    : HelrForm(std::move(ctx), cfg) {
  half_ = cfg.features / 2;
  const u32 max_slots = ctx_->max_slots();
  const u64 values = static_cast<u64>(half_) * cfg.batch;  // complex values per layout
  slots_ = static_cast<u32>(std::min<u64>(max_slots, values));
  cts_ = static_cast<u32>(values / slots_);
  width_ = slots_ / cfg.batch;  // features per block: C W = F/2
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
  iteration_depth_ = 2 + static_cast<u32>(std::bit_width(cfg.sigmoid_degree));

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

  const MonomialSeries p_of_x = sigma_.composed_with_scale(-cfg.sigmoid_bound);
  for (u32 t = 0; t < cfg.iterations; ++t) {
    const u32 L = plan_.steps[t].level_in;
    consts_.push_back(make_consts(t));
    if (!sigmoid_.count(L - 1)) {
      // The sigmoid at each block's first slot (the inner product), zero elsewhere.
      std::vector<Cx> mask(slots_, 0);
      for (u32 p = 0; p < slots_; p += width_)
        mask[p] = 1;
      sigmoid_.emplace(L - 1,
                       std::make_unique<MaskedPolynomial>(encoder_, p_of_x, mask, L - 1, slots_));
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
  const double sc = packs(t) ? cfg_.bootstrap_scale : 1.0;
  k.kappa = constant(kappa(t) * sc, L);
  k.rho = constant(rho(t) * sc, L);
  return k;
}

std::vector<int> HelrSparse::rotations() const {
  const u32 radix = cfg_.reduction_radix;
  std::vector<int> out = block_shift_steps();
  for (const int r : rotate_sum_rotations(1, width_, slots_, radix))
    out.push_back(r);
  for (const int r : rotate_sum_rotations(-1, width_, slots_, radix))
    out.push_back(r);
  for (const int r :
       rotate_sum_rotations(static_cast<int>(cts_ * width_), cfg_.batch / cts_, slots_, radix))
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
  const u32 Lc = L - 1 - dsig();
  // Public factors of the schedule that would otherwise cost a plaintext product (a level) each:
  // the inner products' kappa / (2 bound) (v = kappa q; onto the sigmoid's [-1, 1], Re(z' q) being
  // half of ip + conj ip) and the gradient's gamma (x bootstrap_scale before a pack). In the
  // gradient's data rather than in the sigmoid's mask, gamma also scales down the noise of the
  // sigmoid's replication and block rotations (19.6 bits after 32 iterations at N = 2^12 against
  // 18.3 in the mask; docs/performance-journal.md).
  const double a = kappa(iteration) / (2 * cfg_.sigmoid_bound);
  const double gf = gradient_factor(packs(iteration));
  auto z = [&](u32 k, u32 j) {
    return (labels[k] ? 1.0 : -1.0) * x[static_cast<std::size_t>(k) * f + j];
  };
  Helr::Batch out;
  out.iteration = iteration;
  for (u32 c = 0; c < cc; ++c) {
    std::vector<Cx> rows(n), cols(n);
    for (u32 k = 0; k < b; ++k) {
      // Rows: block k holds group (k + c) mod C of sample k, conj(z_j + i z_(j+h)) x a.
      const u32 gi = r * ((k + c) % cc);
      // Columns: block k holds group k mod C of sample k + c, z_j + i z_(j+h).
      const u32 gc = r * (k % cc), kc = (k + c) % b;
      for (u32 j = 0; j < r; ++j) {
        rows[k * r + j] = a * Cx(z(k, gi + j), -z(k, gi + j + h));
        cols[k * r + j] = gf * Cx(z(kc, gc + j), z(kc, gc + j + h));
      }
    }
    out.inner.push_back(enc.encrypt(encoder_.encode(rows, L)));
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

std::vector<int> HelrSparse::block_shift_steps() const {
  std::vector<int> out;
  for (u32 c = 1; c < cts_; ++c)
    out.push_back(static_cast<int>(width_ * c));
  return out;
}

Ciphertext HelrSparse::shifted_product_sum(const std::vector<Ciphertext>& data,
                                           const Ciphertext& x) const {
  const std::vector<int> steps = block_shift_steps();
  const std::vector<Ciphertext> shifted =
      steps.empty() ? std::vector<Ciphertext>{} : ev_.rotate_hoisted(x, steps, keys_->galois);
  std::vector<const Ciphertext*> d_ptr, x_ptr;
  for (u32 c = 0; c < cts_; ++c) {
    d_ptr.push_back(&data[c]);
    x_ptr.push_back(c == 0 ? &x : &shifted[c - 1]);
  }
  return ev_.multiply_sum_relin_rescale(d_ptr, x_ptr, x.level(), keys_->relin);
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
  // (a) sum_c rows_c . shift_c(q), one relinearization, then each block's W slots summed into its
  // first; Re(z' . q) x kappa / bound = z . v / bound there.
  const Ciphertext& q = fresh ? io.q_split : io.q->front();
  const Ciphertext prod = shifted_product_sum(*io.rows, q);
  const Ciphertext ip = rotate_sum(ev_, prod, 1, width_, keys_->galois, cfg_.reduction_radix);
  io.ip = ev_.add(ip, ev_.conjugate(ip, keys_->galois));
}

void HelrSparse::phase_sigmoid(Io& io, u32 level) const {
  // p(-z . v) at each block's first slot, replicated over the block.
  const Ciphertext sig = sigmoid_.at(level)->evaluate(ev_, keys_->relin, io.ip);
  io.sig = rotate_sum(ev_, sig, -1, width_, keys_->galois, cfg_.reduction_radix);
}

void HelrSparse::phase_gradient(Io& io) const {
  // (c) sum_c cols_c . shift_c(sig), one relinearization, then the sum over the blocks of each
  // residue mod C: gamma g replicated with period F/2 (the weights' layout).
  const Ciphertext gp = shifted_product_sum(*io.cols, io.sig);
  io.g = rotate_sum(ev_, gp, static_cast<int>(cts_ * width_), cfg_.batch / cts_, keys_->galois,
                    cfg_.reduction_radix);
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
      {"Sigmoid", [this, L](Io& io) { phase_sigmoid(io, L - 1); }, &HelrPhaseTimes::sigmoid_ms});
  p.push_back({"Gradient", [this](Io& io) { phase_gradient(io); }, &HelrPhaseTimes::gradient_ms});
  p.push_back({"Update", [this, fresh, pack](Io& io) { phase_update(io, fresh, pack); },
               &HelrPhaseTimes::update_ms});
  return p;
}

u32 HelrSparse::key_switches() const {
  const u32 radix = cfg_.reduction_radix;
  const auto steps = [&](int stride, u32 count) {
    return static_cast<u32>(rotate_sum_rotations(stride, count, slots_, radix).size());
  };
  // Shifts and one relinearization per product sum, the block sums, the conjugation, the
  // sigmoid's relinearizations and its replication, the sum over the blocks.
  return 2 * cts_ + steps(1, width_) + 1 + dsig() + steps(-1, width_) +
         steps(static_cast<int>(cts_ * width_), cfg_.batch / cts_);
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
    times->sigmoid_limbs = ctx_->level(L - 1).limbs;
    times->gradient_limbs = ctx_->level(L - 2 - dsig()).limbs;
    times->key_switches = key_switches();
  }
}

}  // namespace

std::unique_ptr<HelrForm> make_helr_sparse(std::shared_ptr<const Context> ctx,
                                           const HelrConfig& cfg) {
  return std::make_unique<HelrSparse>(std::move(ctx), cfg);
}

}  // namespace theo::detail
