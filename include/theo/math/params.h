#pragma once
// Parameter sets in the JSON format of the anchor library's parameter files
// (shared/anchors/cheddar-params/*.json), loaded, validated and saved.
//
// level_config[l] = {m, t}: a ciphertext at level l uses the first m main primes (q_0..q_{m-1})
// and the first t terminal primes (tau_0..tau_{t-1}). Its limbs are laid out inverted-terminal
// (Cheddar §3.3): [tau_{t-1} .. tau_0, q_0 .. q_{m-1}], so every level is a contiguous window of
// the global order [tau_{T-1} .. tau_0, q_0 .. q_{M-1}] (T, M = list lengths). Rescaling from l to
// l-1 multiplies by the primes that enter and divides by the primes that leave; log2 Q_l grows by
// about the level's scale per level (e.g. bootparam_40: 50, 90, 130, 170, ... bits).

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "theo/common.h"

namespace theo {

struct ParameterSet {
  std::string name;     // preset or file stem; informational (JSON "name", optional)
  std::string comment;  // free text (JSON "comment", optional); informational
  u32 log_degree = 0;
  u32 log_default_scale = 0;
  bool boot = false;
  u32 dense_hamming_weight = 0;   // h of the main secret (N/2 for dense)
  u32 sparse_hamming_weight = 0;  // h of the sparse bootstrapping secret (0: none)
  u32 num_cts_levels = 0;
  u32 num_stc_levels = 0;
  std::vector<u64> terminal_primes;   // tau_i (~2^25 for 32-bit sets)
  std::vector<u64> main_primes;       // q_i   (~2^30)
  std::vector<u64> auxiliary_primes;  // p_i, the key-switching modulus P (alpha = count)
  u32 default_encryption_level = 0;
  std::vector<std::array<u32, 2>> level_config;  // [level] = {main count, terminal count}
  std::array<u32, 2> additional_base{0, 0};      // anchor field, carried through; must be {0,0}

  u32 n() const { return u32{1} << log_degree; }
  u32 max_level() const { return static_cast<u32>(level_config.size()) - 1; }
  u32 alpha() const { return static_cast<u32>(auxiliary_primes.size()); }
  u32 limbs_at(u32 level) const { return level_config.at(level)[0] + level_config.at(level)[1]; }
  // Limbs of Q_max, the union of all levels' primes (max main count + max terminal count); equal
  // to the top level's limbs when the top level holds every prime (bootstrappable sets).
  u32 max_limbs() const;
  u32 dnum() const;  // key-switching digits: ceil(max_limbs / alpha)
  // 32 when every prime is < 2^31 (this library's word size), else 64.
  u32 word_bits() const;
  double log2_q(u32 level) const;  // log2 of the level's ciphertext modulus
  double log2_pq() const;          // log2 of P * Q_max (all primes)

  bool operator==(const ParameterSet&) const = default;
};

// Parse / serialize. Errors throw ParameterError naming the JSON field and the offending value.
ParameterSet parse_parameters(const std::string& json_text, const std::string& name = "");
ParameterSet load_parameter_file(const std::filesystem::path& path);
std::string to_json(const ParameterSet& p);

// Structural validation (primes prime, < 2^31 for 32-bit sets, = 1 mod 2N, distinct; level_config
// monotone in modulus and within the prime lists; N a power of two in 2^10..2^17; ...).
// Throws ParameterError naming the field. Does not check security (see security.h).
void validate(const ParameterSet& p);

// Bundled presets: "bootparam_30", "bootparam_35", "bootparam_40", "bootparam_40_64bit" (the
// anchor files) and the generated sets listed by preset_names(). A preset_dir that is not empty
// is a folder of <name>.json files searched before them: the lookup itself reads no environment
// variable; a program that honours THEO_PRESET_DIR reads it once and passes it
// (Environment::read().preset_dir; the Python module does so when it is imported).
std::vector<std::string> preset_names(const std::filesystem::path& preset_dir = {});
ParameterSet load_preset(const std::string& name, const std::filesystem::path& preset_dir = {});

// The same primes, level structure and scales on a smaller ring N = 2^log_degree (every prime that
// is 1 mod 2N stays 1 mod 2N' for N' < N): a small-N stand-in with the numeric behaviour of a
// production set (rational rescaling, level scales, bootstrapping's base modulus), for tests and
// CPU reproductions. Insecure (Context refuses it without allow_insecure). The dense secret's
// Hamming weight shrinks with N; the sparse one is kept. ParameterError when log_degree is
// above the set's.
ParameterSet with_log_degree(const ParameterSet& p, u32 log_degree);

}  // namespace theo
