#pragma once
// Full-slot (and sparse-slot) CKKS bootstrapping with sparse-secret encapsulation
// (Bossuat-Troncoso-Hubaux, ACNS 2022). The default order (the anchor's):
//
//   level 0, dense key s     --KeySwitch s -> s' (sparse, h = sparse_hamming_weight)-->
//   ModRaise (INTT, fast BConv Q_0 -> Q_top, NTT): phase t = Delta m + q0 I, |I| < K
//   --KeySwitch s' -> s at the top level-->
//   [sparse slots: SubSum, the trace onto the slots' subring]
//   CoeffToSlot (cts_levels levels) -> conjugate: Re / Im -> EvalMod on each (evalmod depth)
//   -> Re + i Im -> SlotToCoeff (stc_levels levels)          = output at output_level()
//
// With Optimizations::Circuits::slot_to_coeff_first, SlotToCoeff runs first instead, on the input
// at level stc_levels (SlotToCoeff stc_levels -> 0, then everything above, EvalMod's output being
// the result at level top - cts_levels - EvalMod depth): its rotations then run at the few limbs
// of the lowest levels instead of at the levels below EvalMod, and the levels left per
// bootstrapping (output_level() - input_level()) are the same. A level planner bootstraps a
// ciphertext when it reaches input_level() (docs/bootstrapping.md, "The input level").
//
// With Optimizations::Circuits::merged_evalmod_tail (on by default) EvalMod's two parts end in one
// product: their last double angles are summed as tensor products, relinearized and rescaled once
// (Re + i Im without a second rescale), so the output carries one rescale's rounding, not two.
//
// The sparse key keeps I small (K ~ 12-17 instead of ~ sqrt(N)), which makes EvalMod cheap; it is
// only ever used inside the two key switches, so security rests on the dense key as usual.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "theo/circuits/linear_transform.h"
#include "theo/circuits/mod1.h"
#include "theo/ckks/encoder.h"
#include "theo/ckks/encryptor.h"
#include "theo/ckks/evaluator.h"
#include "theo/ckks/key_generator.h"

namespace theo {

struct BootstrapConfig {
  u32 slots = 0;           // 0: N / 2 (full slots)
  u32 cts_levels = 0;      // 0: the parameter set's num_cts_levels (3 when it has none)
  u32 stc_levels = 0;      // 0: the parameter set's num_stc_levels (2 when it has none)
  u32 evalmod_levels = 0;  // 0: down to default_encryption_level (at least 8)
  u32 arcsine_degree = 0;  // 0: no arcsine correction
  std::optional<EvalModParams> evalmod;  // overrides the derived parameters
  bool min_keys = false;                 // +-2^k rotation keys only (slower, fewer keys)
  // generate_keys makes every key compact (SwitchingKey::make_compact) as soon as it is made:
  // half the key memory, each key switch expanding the a halves it reads (slower). With min_keys,
  // N = 2^16 bootstrapping fits a laptop's memory on the CPU (n16_s40_boot: 1.9 GiB of keys
  // instead of 9.1).
  bool compact_keys = false;
  // log2 of q0 / Delta' at ModRaise, Delta' = 2^k Delta_0 (k >= 0: the level-0 input is
  // multiplied by 2^k, exactly, before ModRaise). Every noise added from ModRaise through EvalMod
  // reaches the output multiplied by q0 / Delta', so a small ratio is more precise; but EvalMod
  // computes sin(2 pi x) / (2 pi) for x = Delta' m_j / q0, whose relative error (2 pi x)^2 / 6
  // grows with the message's polynomial coefficients m_j. Random slots |z| <= 1 at N = 2^16 have
  // coefficients of ~2^-9 and lose nothing at the default 2^7 (bootparam_40 on the CPU: 2^5 21.8
  // bits, 2^6 22.0, 2^7 21.0, 2^10 = no scaling 18.1); a constant vector (m_0 = z) keeps about
  // 2 ratio - 2.7 bits (11.3 at 2^7, 17.3 at 2^10). 0: the default, kDefaultMessageRatioBits at
  // 2^15 slots plus one per halving of the slots below that (fewer slots, larger coefficients),
  // and never above q0 / Delta_0 (no scaling).
  // With SlotToCoeff first (Optimizations::Circuits::slot_to_coeff_first) the coefficients at
  // ModRaise are the slot values themselves, not the ~2^-9 smaller coefficients of random data,
  // while EvalMod's noise reaches each output slot without the sqrt(N) growth of a decoding: the
  // default is kDefaultSlotToCoeffFirstRatioBits whatever the slot count (the level-0 message is
  // divided by 2^(ratio - log2(q0 / Delta_0)) inside SlotToCoeff's last matrix where the ratio
  // exceeds what scaling up can give).
  u32 message_ratio_bits = 0;
  static constexpr u32 kDefaultMessageRatioBits = 7;
  static constexpr u32 kDefaultSlotToCoeffFirstRatioBits = 13;
};

// Everything bootstrapping needs beyond the Context: made by Bootstrapper::generate_keys.
struct BootstrappingKeys {
  RelinKey relin;
  GaloisKeys galois;
  SwitchingKey to_sparse;  // dense s -> sparse s'
  SwitchingKey to_dense;   // sparse s' -> dense s
};

class Bootstrapper {
 public:
  // Encodes every linear-transform diagonal once (the slow part of construction).
  Bootstrapper(std::shared_ptr<const Context> ctx, const BootstrapConfig& config = {});
  ~Bootstrapper();

  // All keys in one call: relinearization, the two encapsulation keys (a fresh sparse secret is
  // drawn from `keygen` and discarded), conjugation and every rotation; with `progress`, a
  // progress bar on stderr (keys done / total, elapsed seconds).
  BootstrappingKeys generate_keys(KeyGenerator& keygen, const SecretKey& sk,
                                  bool progress = true) const;
  // The left rotations generate_keys makes keys for.
  std::vector<int> rotations() const;

  // ct at any level (brought to level 0 first), slots() slots. Output at output_level() with
  // that level's default scale.
  Ciphertext bootstrap(const Ciphertext& ct, const BootstrappingKeys& keys) const;
  // bootstrap(ct - center) + center. The slots' common part becomes the constant polynomial
  // coefficient, and EvalMod's error grows with the cube of every coefficient (see
  // BootstrapConfig::message_ratio_bits): slot values that cluster around a known value away from
  // 0 (activations after squaring, probabilities, pixels) lose bits unless that value is taken out
  // first. `center` is a real constant, added and subtracted exactly; pass the midpoint of the
  // values' known range. ParameterError when it is not finite.
  Ciphertext bootstrap(const Ciphertext& ct, const BootstrappingKeys& keys, double center) const;

  // The level bootstrap() takes its input at (higher levels are brought down to it): 0, or
  // stc_levels when SlotToCoeff runs first (Optimizations::Circuits::slot_to_coeff_first). The
  // levels left for computation per bootstrapping are output_level() - input_level().
  u32 input_level() const { return input_level_; }
  u32 output_level() const { return output_level_; }
  u32 slots() const { return slots_; }
  const EvalModParams& evalmod_params() const;
  // log2(q0 / Delta') actually used (see BootstrapConfig::message_ratio_bits).
  double message_ratio_bits() const;
  // The level plan and parameters, one line each.
  std::string describe() const;

  // Where the error of one bootstrapping comes from (full slots only). Decrypts every stage's
  // output with `sk` (a diagnostic: the secret key never belongs on the server) and continues each
  // in plaintext double precision to the output slots, so each figure is the max slot error a stage
  // adds there: log2 values. `message` is what `ct` encrypts.
  struct ErrorBreakdown {
    double approximation = 0;  // noise-free pipeline vs the message (EvalMod's interpolant)
    double coeff_to_slot = 0;
    double eval_mod = 0;  // its noise, beyond the interpolant
    double slot_to_coeff = 0;
    double total = 0;
  };
  ErrorBreakdown diagnose(const Ciphertext& ct, const BootstrappingKeys& keys,
                          const std::vector<std::complex<double>>& message,
                          const Decryptor& decryptor) const;

  // Stages, exposed for tests and benchmarks. mod_raise scales the input up to Delta' first.
  Ciphertext mod_raise(const Ciphertext& ct_level0, const BootstrappingKeys& keys) const;
  Ciphertext coeff_to_slot(const Ciphertext& raised, const GaloisKeys& keys) const;
  // CoeffToSlot's output w -> Re w and Im w through EvalMod -> recombined, ready for SlotToCoeff.
  Ciphertext eval_mod(const Ciphertext& w, const BootstrappingKeys& keys) const;
  // What bootstrap() runs instead of coeff_to_slot + eval_mod(w): the conjugation that splits w
  // into 2 Re w and 2 Im w happens inside CoeffToSlot's last level before its rescale (at about
  // Delta^2, where its key-switching noise vanishes), so EvalMod's input carries one rounding less
  // and no key-switching noise. Min-keys mode splits after CoeffToSlot as eval_mod(w) does.
  struct RealImag {
    Ciphertext re;  // 2 Re w
    Ciphertext im;  // 2 Im w
  };
  RealImag coeff_to_slot_split(const Ciphertext& raised, const BootstrappingKeys& keys) const;
  Ciphertext eval_mod(const RealImag& parts, const BootstrappingKeys& keys) const;
  Ciphertext slot_to_coeff(const Ciphertext& ct, const GaloisKeys& keys) const;

 private:
  struct Impl;
  std::shared_ptr<const Context> ctx_;
  std::unique_ptr<Impl> impl_;
  u32 slots_ = 0;
  u32 input_level_ = 0;
  u32 output_level_ = 0;
};

}  // namespace theo
