#pragma once
// The benchmark registry. A case is a named op: given the run's parameters and a backend it
// builds its inputs once and returns the closure to time plus the traffic model. Cases register
// themselves from their own .cpp (ring_cases.cpp; scheme cases can follow the same pattern).

#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "theo/ring/backend.h"

namespace theo::bench {

// One point of the sweep.
struct CaseParams {
  u32 log_n = 16;
  u32 limbs = 12;  // L, the limbs of the level being measured
  u32 alpha = 12;  // auxiliary primes (BConv target, ModUp extension)
  u32 dnum = 0;    // key-switch digits; 0 = ceil(L / alpha)
  u32 digits() const { return dnum ? dnum : (limbs + alpha - 1) / alpha; }
};

// What a case needs: the backend (whose ring has at least limbs + alpha primes; ids [0, L) are
// the level's primes, ids [max L, max L + alpha) the auxiliary ones), parameters, randomness.
struct CaseEnv {
  Backend& backend;
  CaseParams params;
  Basis main;  // ids [0, L)
  Basis aux;   // alpha auxiliary ids
  std::mt19937_64& rng;

  // A polynomial with random canonical words over `basis`.
  RnsPoly random_poly(const Basis& basis);
};

struct PreparedCase {
  std::function<void()> run;                        // one op, without synchronize()
  double bytes_moved = 0;                           // model: inputs read once, outputs written once
  nlohmann::json extra = nlohmann::json::object();  // op-specific parameters for the record
  std::shared_ptr<void> keep_alive;                 // inputs and outputs that `run` refers to
  // The backend `run` issues its work on, when not CaseEnv::backend (scheme cases own a Context
  // and its backend): time_op synchronizes and times this one.
  Backend* backend = nullptr;
};

struct BenchCase {
  std::string name;
  std::string bytes_formula;  // the model, as printed by --list and written in docs/benchmarks.md
  std::function<PreparedCase(CaseEnv&)> prepare;
};

void register_case(BenchCase c);
const std::vector<BenchCase>& registered_cases();

struct CaseRegistrar {
  explicit CaseRegistrar(BenchCase c) { register_case(std::move(c)); }
};

// 4-byte words -> bytes.
inline double word_bytes(double words) {
  return 4.0 * words;
}

}  // namespace theo::bench
