// Bootstrapper::diagnose: the error of one bootstrapping, stage by stage, in output-slot units.

#include <cmath>
#include <numbers>
#include <optional>
#include <string>

#include "circuits/bootstrapper_impl.h"
#include "theo/circuits/dft.h"
#include "theo/errors.h"

namespace theo {

namespace {

using Slots = std::vector<Complex>;

Slots apply_all(const std::vector<DiagonalMatrix>& ms, Slots v) {
  for (const DiagonalMatrix& m : ms)
    v = m.apply(v);
  return v;
}

double log2_max_diff(const Slots& a, const Slots& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    e = std::max(e, std::abs(a[i] - b[i]));
  return e > 0 ? std::log2(e) : -1000.0;
}

}  // namespace

Bootstrapper::ErrorBreakdown Bootstrapper::diagnose(const Ciphertext& ct_in,
                                                    const BootstrappingKeys& keys,
                                                    const std::vector<Complex>& message,
                                                    const Decryptor& decryptor) const {
  const Impl& m = *impl_;
  if (slots_ != ctx_->max_slots()) {
    throw ParameterError("Bootstrapper::diagnose: full slots only (this one has " +
                         std::to_string(slots_) + ")");
  }
  if (message.size() != slots_) {
    throw ParameterError("Bootstrapper::diagnose: the message has " +
                         std::to_string(message.size()) + " slots, expected " +
                         std::to_string(slots_));
  }
  const Encoder& enc = m.encoder;
  auto dec = [&](const Ciphertext& c) { return enc.decode(decryptor.decrypt(c)); };
  const u32 in_level = input_level_;
  if (ct_in.level() < in_level) {
    throw LevelError("Bootstrapper::diagnose: the ciphertext is below the input level " +
                     std::to_string(in_level));
  }
  const Ciphertext ct =
      ct_in.level() > in_level ? m.ev.level_down(ct_in, in_level) : m.ev.clone(ct_in);
  // SlotToCoeff first: its output (level 0) is what ModRaise takes; its error, mapped through
  // the exact inverse (CoeffToSlot without scale), is its share of the output error.
  std::optional<Ciphertext> coeffs;
  if (m.stc_first) coeffs = slot_to_coeff(ct, keys.galois);
  const Ciphertext raised = mod_raise(coeffs ? *coeffs : ct, keys);
  const RealImag parts = coeff_to_slot_split(raised, keys);
  const Ciphertext reduced = eval_mod(parts, keys);
  Ciphertext out = m.stc_first ? m.ev.clone(reduced) : slot_to_coeff(reduced, keys.galois);
  out.set_scale(out.scale() * (ct.scale() / ctx_->default_scale(in_level)));

  // The plaintext pipeline, from any stage's decrypted output onwards.
  const auto cts = coeff_to_slot_matrices(slots_, m.cts_levels, static_cast<double>(m.cts_scale));
  // SlotToCoeff first: EvalMod's output is the result (no matrices after it).
  std::vector<DiagonalMatrix> stc;
  if (!m.stc_first) {
    stc = slot_to_coeff_matrices(slots_, m.stc_levels, 1.0);
    stc.back().scale_by(static_cast<double>(m.stc_scale));
  }
  const double gain = static_cast<double>(m.gain);
  auto mod_plain = [&](const Slots& v) {
    Slots r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      r[i] = gain * Complex(m.mod->reference(2 * v[i].real()), m.mod->reference(2 * v[i].imag()));
    return r;
  };
  const Slots ideal = apply_all(stc, mod_plain(apply_all(cts, dec(raised))));
  // EvalMod's inputs 2 Re w and 2 Im w, recombined as slots w' = (2 Re w + 2i Im w) / 2 = w.
  const Slots re = dec(parts.re), im = dec(parts.im);
  Slots w(re.size());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = Complex(re[i].real(), im[i].real()) / 2.0;
  const Slots from_cts = apply_all(stc, mod_plain(w));
  const Slots from_mod = apply_all(stc, dec(reduced));
  const Slots final_slots = dec(out);
  double stc_error = 0;
  if (coeffs) {
    // CoeffToSlot's matrices at scale 1 invert SlotToCoeff's (P V^-1 V P = 1); the shrink undone.
    Slots back = apply_all(coeff_to_slot_matrices(slots_, m.cts_levels, 1.0), dec(*coeffs));
    for (Complex& x : back)
      x *= static_cast<double>(m.shrink);
    stc_error = log2_max_diff(back, message);
  }
  ErrorBreakdown e;
  e.approximation = log2_max_diff(ideal, message);
  e.coeff_to_slot = log2_max_diff(from_cts, ideal);
  e.eval_mod = log2_max_diff(from_mod, from_cts);
  e.slot_to_coeff = m.stc_first ? stc_error : log2_max_diff(final_slots, from_mod);
  e.total = log2_max_diff(final_slots, message);
  return e;
}

}  // namespace theo
