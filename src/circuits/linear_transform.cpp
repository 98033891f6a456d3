#include "theo/circuits/linear_transform.h"
#include "theo/ring/fork_scope.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>
#include <span>
#include <string>

#include "theo/ckks/evaluator_batch.h"
#include "theo/errors.h"
#include "theo/ring/fork_scope.h"

namespace theo {

namespace {

std::vector<Complex> rotated(const std::vector<Complex>& v, u32 r) {
  const std::size_t n = v.size();
  std::vector<Complex> out(n);
  for (std::size_t p = 0; p < n; ++p)
    out[p] = v[(p + r) % n];
  return out;
}

// Diagonal indices share a power-of-two stride (e.g. the FFT stages); BSGS runs in those units.
u32 common_stride(const DiagonalMatrix& m) {
  u32 stride = m.slots;
  for (const auto& [k, d] : m.diagonals) {
    if (k != 0) stride = std::min(stride, u32{1} << std::countr_zero(k));
  }
  return std::max<u32>(stride, 1);
}

// Relative cost of a BSGS split with n1 baby steps. With double hoisting a baby step is a KeyMult
// and an automorphism of the shared ModUp digits (no ModDown), while a giant step is a whole key
// switch (ModDown, ModUp, KeyMult: about six baby steps at the bootstrapping levels); in min-keys
// mode both are full key switches.
u32 rotation_cost(const DiagonalMatrix& m, u32 stride, u32 n1, bool min_keys) {
  std::set<u32> babies, giants;
  for (const auto& [k, d] : m.diagonals) {
    const u32 kk = k / stride;
    if (kk % n1 != 0) babies.insert(kk % n1);
    if (kk - kk % n1 != 0) giants.insert(kk - kk % n1);
  }
  const u32 giant_weight = min_keys ? 1 : 6;
  return static_cast<u32>(babies.size() + giant_weight * giants.size());
}

}  // namespace

DiagonalMatrix DiagonalMatrix::identity(u32 slots) {
  DiagonalMatrix m;
  m.slots = slots;
  m.diagonals[0] = std::vector<Complex>(slots, 1.0);
  return m;
}

std::vector<Complex> DiagonalMatrix::apply(const std::vector<Complex>& x) const {
  std::vector<Complex> y(slots, 0.0);
  for (const auto& [k, d] : diagonals) {
    for (u32 p = 0; p < slots; ++p)
      y[p] += d[p] * x[(p + k) % slots];
  }
  return y;
}

DiagonalMatrix DiagonalMatrix::multiply(const DiagonalMatrix& o, double prune) const {
  if (o.slots != slots) throw ParameterError("DiagonalMatrix::multiply: slot counts differ");
  // (A B x) = sum_a A_a (.) rot(sum_b B_b (.) rot(x, b), a): diagonal a + b gains A_a (.) rot(B_b,
  // a).
  DiagonalMatrix out;
  out.slots = slots;
  for (const auto& [a, da] : diagonals) {
    for (const auto& [b, db] : o.diagonals) {
      auto& acc = out.diagonals[(a + b) % slots];
      if (acc.empty()) acc.assign(slots, 0.0);
      for (u32 p = 0; p < slots; ++p)
        acc[p] += da[p] * db[(p + a) % slots];
    }
  }
  for (auto it = out.diagonals.begin(); it != out.diagonals.end();) {
    double mx = 0;
    for (const Complex& c : it->second)
      mx = std::max(mx, std::abs(c));
    it = mx <= prune ? out.diagonals.erase(it) : std::next(it);
  }
  return out;
}

void DiagonalMatrix::scale_by(Complex c) {
  for (auto& [k, d] : diagonals)
    for (Complex& x : d)
      x *= c;
}

std::vector<int> pow2_rotations(u32 slots) {
  std::vector<int> r;
  for (u32 s = 1; s < slots; s <<= 1) {
    r.push_back(static_cast<int>(s));
    if (2 * s < slots) r.push_back(-static_cast<int>(s));  // -slots/2 is +slots/2
  }
  return r;
}

std::vector<int> pow2_steps(i64 r, u32 slots) {
  // Non-adjacent form: the fewest signed power-of-two digits, so a rotation by 2^k - 1 costs two
  // key switches (2^k, -1), not k.
  i64 x = ((r % static_cast<i64>(slots)) + slots) % slots;
  std::vector<int> steps;
  for (i64 bit = 1; x != 0; bit <<= 1, x >>= 1) {
    if ((x & 1) == 0) continue;
    const i64 d = 2 - (x & 3);  // +1 when x = 1 mod 4, -1 when x = 3 mod 4
    x -= d;
    const i64 step = ((d * bit) % static_cast<i64>(slots) + slots) % slots;  // slots: identity
    if (step == 0) continue;
    steps.push_back(static_cast<int>(2 * step <= static_cast<i64>(slots) ? step : step - slots));
  }
  return steps;
}

Ciphertext rotate_pow2(const Evaluator& ev, const Ciphertext& ct, i64 r, u32 slots,
                       const GaloisKeys& keys) {
  Ciphertext out = ev.clone(ct);
  for (const int step : pow2_steps(r, slots))
    out = ev.rotate(out, step, keys);
  return out;
}

LinearTransform::LinearTransform(const Encoder& encoder, const DiagonalMatrix& m, u32 level,
                                 std::optional<long double> input_scale,
                                 LinearTransformOptions options)
    : level_(level), slots_(m.slots), min_keys_(options.min_keys) {
  const Context& ctx = *encoder.context();
  if (level == 0) throw LevelError("LinearTransform: level 0 has no level to rescale to");
  if (m.slots == 0 || !std::has_single_bit(m.slots) || m.slots > ctx.max_slots()) {
    throw ParameterError("LinearTransform: invalid slot count " + std::to_string(m.slots));
  }
  if (m.diagonals.empty()) throw ParameterError("LinearTransform: the matrix has no diagonal");
  input_scale_ = input_scale.value_or(ctx.default_scale(level));
  output_scale_ = options.output_scale.value_or(ctx.default_scale(level - 1));
  // Diagonals at cs with input_scale * cs / r_level = output_scale.
  const long double cs = output_scale_ * ctx.level(level).rescale_ratio / input_scale_;
  diag_count_ = m.diagonals.size();

  const u32 stride = common_stride(m);
  u32 n1 = options.baby_steps;
  if (n1 == 0) {
    u32 best = ~0u;
    for (u32 c = 1; c <= m.slots / stride; c <<= 1) {
      const u32 cost = rotation_cost(m, stride, c, options.min_keys);
      if (cost < best) {
        best = cost;
        n1 = c;
      }
    }
  }
  std::map<u32, std::map<u32, const std::vector<Complex>*>> grid;  // giant -> baby -> diagonal
  for (const auto& [k, d] : m.diagonals) {
    const u32 kk = k / stride;
    grid[(kk - kk % n1) * stride][(kk % n1) * stride] = &d;
  }
  std::set<u32> baby_set;
  for (const auto& [g, row] : grid)
    for (const auto& [b, d] : row)
      baby_set.insert(b);
  babies_.assign(baby_set.begin(), baby_set.end());
  // All diagonals go to the encoder in one batch, whose host half runs on every core.
  std::vector<std::vector<Complex>> diagonals;
  std::vector<std::pair<std::size_t, u32>> slot_of;  // (giant index, baby index) per diagonal
  for (const auto& [g, row] : grid) {
    Giant giant;
    giant.shift = g;
    for (const auto& [b, d] : row) {
      const auto pos = std::lower_bound(babies_.begin(), babies_.end(), b) - babies_.begin();
      diagonals.push_back(rotated(*d, (m.slots - g) % m.slots));
      slot_of.emplace_back(giants_.size(), static_cast<u32>(pos));
    }
    giants_.push_back(std::move(giant));
  }
  std::vector<Plaintext> encoded = encoder.encode_batch(diagonals, level, cs);
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    giants_[slot_of[i].first].bs.emplace_back(slot_of[i].second, std::move(encoded[i]));
  }
  if (!min_keys_) extend_diagonals(Evaluator(encoder.context()));
}

void LinearTransform::extend_diagonals(const Evaluator& ev) {
  // Double hoisting multiplies the baby steps in the key-switching domain Q_l u P, so the
  // diagonals are lifted there once; their Q_l form is then no longer needed.
  for (Giant& g : giants_) {
    std::vector<const Plaintext*> pts;
    for (const auto& [bi, pt] : g.bs)
      pts.push_back(&pt);
    g.extended = ev.extend(pts);
    for (auto& [bi, pt] : g.bs)
      pt = Plaintext();
  }
}

std::vector<int> LinearTransform::rotations() const {
  if (min_keys_) return pow2_rotations(slots_);
  std::set<int> r;
  for (const u32 b : babies_)
    if (b != 0) r.insert(static_cast<int>(b));
  for (const Giant& g : giants_)
    if (g.shift != 0) r.insert(static_cast<int>(g.shift));
  return {r.begin(), r.end()};
}

std::optional<Ciphertext> LinearTransform::prepare_input(const Evaluator& ev,
                                                         const Ciphertext& ct0) const {
  if (ct0.level() < level_) {
    throw LevelError("LinearTransform: the input is at level " + std::to_string(ct0.level()) +
                     ", the transform was encoded for level " + std::to_string(level_));
  }
  std::optional<Ciphertext> lowered;
  if (ct0.level() > level_) lowered = ev.level_down(ct0, level_, input_scale_);
  const Ciphertext& ct = lowered ? *lowered : ct0;
  if (std::fabs(ct.scale() / input_scale_ - 1) > ev.context()->scale_tolerance()) {
    throw ScaleError("LinearTransform: input scale differs from the scale it was encoded for");
  }
  return lowered;
}

ExtendedCiphertext LinearTransform::evaluate_unrescaled(const Evaluator& ev, const Ciphertext& ct0,
                                                        const GaloisKeys& keys) const {
  if (min_keys_) {
    throw ParameterError("LinearTransform::evaluate_unrescaled: not available in min-keys mode");
  }
  const std::optional<Ciphertext> lowered = prepare_input(ev, ct0);
  return evaluate_double_hoisted(ev, lowered ? *lowered : ct0, keys);
}

Ciphertext LinearTransform::evaluate(const Evaluator& ev, const Ciphertext& ct0,
                                     const GaloisKeys& keys) const {
  const std::optional<Ciphertext> lowered = prepare_input(ev, ct0);
  const Ciphertext& ct = lowered ? *lowered : ct0;
  if (!min_keys_) {
    Ciphertext out = ev.mod_down_rescale(evaluate_double_hoisted(ev, ct, keys));
    out.set_scale(output_scale_);
    return out;
  }
  const std::vector<Ciphertext> babies = min_keys_babies(ev, ct, keys);
  // Giant steps in Horner form over their signed shifts g_0 < g_1 < ... (consecutive ones n1
  // baby steps apart, a power of two): sum_i rot_(g_i)(acc_i) = rot_(g_0)(acc_0 + rot_(g_1 - g_0)(
  // acc_1 + ...)), one or two key switches per giant step instead of one per bit of its shift.
  // They rotate before the rescale: their key-switching noise is fixed in absolute terms, so at
  // input_scale * cs (about Delta^2) it vanishes, and one rescale of the sum adds its rounding
  // once.
  const i64 n = slots_;
  auto signed_shift = [n](u32 s) { return 2 * static_cast<i64>(s) <= n ? s : s - n; };
  std::vector<const Giant*> order;
  for (const Giant& g : giants_)
    order.push_back(&g);
  std::sort(order.begin(), order.end(), [&](const Giant* a, const Giant* b) {
    return signed_shift(a->shift) < signed_shift(b->shift);
  });
  std::optional<Ciphertext> result;
  for (std::size_t i = order.size(); i-- > 0;) {
    // The giant step's products summed in one pass (no product written and re-read per term).
    std::vector<const Ciphertext*> cts;
    std::vector<const Plaintext*> pts;
    for (const auto& [bi, pt] : order[i]->bs) {
      cts.push_back(&babies[bi]);
      pts.push_back(&pt);
    }
    std::optional<Ciphertext> acc = ev.multiply_plain_sum(cts, pts);
    if (result) {
      const i64 delta = signed_shift(order[i + 1]->shift) - signed_shift(order[i]->shift);
      ev.add_inplace(*acc, rotate_pow2(ev, *result, delta, slots_, keys));
    }
    result = std::move(acc);
  }
  const i64 first = signed_shift(order.front()->shift);
  if (first != 0) result = rotate_pow2(ev, *result, first, slots_, keys);
  Ciphertext out = ev.rescale(*result);
  out.set_scale(output_scale_);
  return out;
}

// Min-keys baby steps: each one a single power-of-two rotation (a key this mode has) of the input
// or of an earlier baby step, b = s + 2^j; the rotations of one source share its ModUp
// (rotate_hoisted). Babies 1..7: {1, 2, 4} from the input, {3, 5} from 1, 6 from 2, 7 from 3: four
// ModUps instead of seven. A baby no earlier one reaches in one step falls back to a chain of
// rotations from the baby before it.
std::vector<Ciphertext> LinearTransform::min_keys_babies(const Evaluator& ev, const Ciphertext& ct,
                                                         const GaloisKeys& keys) const {
  const std::size_t n = babies_.size();
  constexpr int kInput = -1;
  std::vector<int> source(n, kInput);
  std::vector<int> step(n, 0);
  std::vector<bool> chained(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (babies_[i] == 0) continue;
    bool found = false;
    for (int j = kInput; j < static_cast<int>(i) && !found; ++j) {
      const i64 from = j == kInput ? 0 : babies_[static_cast<std::size_t>(j)];
      const std::vector<int> steps = pow2_steps(static_cast<i64>(babies_[i]) - from, slots_);
      if (steps.size() == 1) {
        source[i] = j;
        step[i] = steps[0];
        found = true;
      }
    }
    if (!found) {
      chained[i] = true;
      source[i] = i == 0 ? kInput : static_cast<int>(i) - 1;
    }
  }
  std::vector<std::optional<Ciphertext>> out(n);
  for (int src = kInput; src < static_cast<int>(n); ++src) {
    if (std::find(source.begin(), source.end(), src) == source.end()) continue;
    const Ciphertext& from = src == kInput ? ct : *out[static_cast<std::size_t>(src)];
    std::vector<int> rots;
    std::vector<std::size_t> targets;
    for (std::size_t i = 0; i < n; ++i) {
      if (source[i] != src) continue;
      if (babies_[i] == 0) {
        out[i] = ev.clone(ct);
      } else if (chained[i]) {
        const i64 base = src == kInput ? 0 : babies_[static_cast<std::size_t>(src)];
        out[i] = rotate_pow2(ev, from, static_cast<i64>(babies_[i]) - base, slots_, keys);
      } else {
        rots.push_back(step[i]);
        targets.push_back(i);
      }
    }
    if (rots.empty()) continue;
    std::vector<Ciphertext> r;
    if (rots.size() == 1) {
      r.push_back(ev.rotate(from, rots[0], keys));
    } else {
      r = ev.rotate_hoisted(from, std::span<const int>(rots), keys);
    }
    for (std::size_t k = 0; k < targets.size(); ++k)
      out[targets[k]] = std::move(r[k]);
  }
  std::vector<Ciphertext> babies;
  babies.reserve(n);
  for (auto& b : out)
    babies.push_back(std::move(*b));
  return babies;
}

// Baby steps stop before ModDown (P * rot_b(ct) over Q_l u P), each giant step sums its diagonal
// products there in one pass, ModDowns once and rotates (again stopping before ModDown), and the
// giants' sum takes one ModDown merged with the rescale: per level one ModDown per giant step
// instead of one per rotation, and every plaintext product is rounded once, at the end.
ExtendedCiphertext LinearTransform::evaluate_double_hoisted(const Evaluator& ev,
                                                            const Ciphertext& ct,
                                                            const GaloisKeys& keys) const {
  const std::vector<int> rots(babies_.begin(), babies_.end());
  const std::vector<ExtendedCiphertext> babies = ev.rotate_hoisted_extended(ct, rots, keys);
  // Every giant's diagonal sum in one pass over the baby steps (each read once for all giants).
  std::vector<std::vector<Evaluator::PlainTerm>> terms(giants_.size());
  for (std::size_t i = 0; i < giants_.size(); ++i) {
    for (std::size_t k = 0; k < giants_[i].bs.size(); ++k)
      terms[i].push_back({giants_[i].bs[k].first, &giants_[i].extended[k]});
  }
  std::vector<ExtendedCiphertext> accs = ev.multiply_plain_sums(babies, terms);
  // Rotated before the rescale, at about Delta^2: its key-switching noise vanishes there. The
  // giants' ModDown + rotation key switches are independent: they run in L2-sized batches.
  std::vector<ExtendedCiphertext> to_rotate;
  std::vector<int> shifts;
  for (std::size_t i = 0; i < giants_.size(); ++i) {
    if (giants_[i].shift == 0) continue;
    to_rotate.push_back(std::move(accs[i]));
    shifts.push_back(static_cast<int>(giants_[i].shift));
  }
  std::vector<ExtendedCiphertext> rotated;
  Backend& be = ev.context()->backend();
  if (plan_work_lanes(ev.context()->policy(), to_rotate.size(), be.forked()) ==
      WorkLanes::kTwoStreams) {
    // Two lanes (Theodosian §IV-B): the second half of the giants on the backend's second
    // stream, the first half on the first, so one lane's ModDown / ModUp kernels (L2-bound)
    // overlap the other's KeyMult (DRAM-bound on the rotation keys) and their small launches
    // fill each other's idle SMs. Same words.
    const std::size_t h = to_rotate.size() / 2;
    const std::span<ExtendedCiphertext> all(to_rotate);
    const std::span<const int> all_shifts(shifts);
    std::vector<ExtendedCiphertext> second;
    {
      ForkScope fork(be);
      second = mod_down_rotate_extended_batch(ev, all.subspan(h), all_shifts.subspan(h), keys);
      be.end_fork();
      rotated = mod_down_rotate_extended_batch(ev, all.first(h), all_shifts.first(h), keys);
      fork.join();
    }
    for (ExtendedCiphertext& e : second)
      rotated.push_back(std::move(e));
  } else {
    rotated = mod_down_rotate_extended_batch(ev, to_rotate, shifts, keys);
  }
  std::optional<ExtendedCiphertext> result;
  std::size_t next = 0;
  for (std::size_t i = 0; i < giants_.size(); ++i) {
    ExtendedCiphertext& acc = giants_[i].shift != 0 ? rotated[next++] : accs[i];
    if (result) {
      ev.add_inplace(*result, acc);
    } else {
      result = std::move(acc);
    }
  }
  return std::move(*result);
}

}  // namespace theo
