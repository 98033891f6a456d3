#pragma once
// The parameter grid of the key-switching dataflow study (Nozaki et al., "Dataflow-Oriented
// Classification and Performance Analysis of GPU-Accelerated Homomorphic Encryption", §IV-A):
// N in {2^14, 2^15, 2^16, 2^17}, L in {10, 30, 50} RNS limbs at the top level (the paper's
// ciphertext of L polynomials), dnum in {2, 4, 6, 8} key-switching digits, 32-bit words.
//
// A cell's set comes from generate_prime_system with scale 2^30 (one ~2^30 main prime per level,
// two base primes at level 0: ~2^20 each, at N = 2^17 ~2^20 and ~2^30), levels = L - 2, so the
// top level holds exactly L limbs, and
// alpha = ceil(L / dnum) auxiliary primes just below 2^31. Not every cell can be built as asked:
//  * unrealizable: no alpha gives exactly dnum digits of L limbs (ceil(L / alpha) = dnum has no
//    integer solution; e.g. L = 10, dnum = 6: alpha = 2 gives 5 digits);
//  * insecure: log2(PQ) exceeds the HomomorphicEncryption.org 128-bit bound for N (security.h);
//    such a set is built but a Context refuses it without allow_insecure.

#include <string>
#include <vector>

#include "theo/math/params.h"

namespace theo {

struct GridCell {
  u32 log_n = 16;
  u32 limbs = 30;  // L: RNS limbs of the top level
  u32 dnum = 4;    // key-switching digits at the top level
  bool operator==(const GridCell&) const = default;
};

enum class GridCellStatus { kOk, kInsecure, kUnrealizable };

struct GridCellReport {
  GridCell cell;
  GridCellStatus status = GridCellStatus::kOk;
  u32 alpha = 0;       // auxiliary primes (0 when unrealizable)
  double log2_pq = 0;  // of the generated set (0 when unrealizable)
  double bound = 0;    // max log2(PQ) for 128-bit security at N
  std::string reason;  // why the cell is not kOk (empty when it is)
};

// "grid_N16_L30_d4".
std::string grid_cell_name(const GridCell& cell);
// "ok", "insecure", "unrealizable".
const char* grid_cell_status_name(GridCellStatus s);

// The paper's 48 cells, N outermost, then L, then dnum.
std::vector<GridCell> dataflow_grid();

// The auxiliary prime count that gives exactly cell.dnum digits of cell.limbs limbs (the smallest
// such alpha), or 0 when none does.
u32 grid_cell_alpha(const GridCell& cell);

// The cell's parameter set (validated; security is not checked here, see check_grid_cell).
// ParameterError when the cell is unrealizable or outside log_n 10..17, limbs 3..200, dnum >= 1.
ParameterSet generate_grid_parameters(const GridCell& cell);

// Builds the cell's set (when realizable) and says whether a Context would accept it.
GridCellReport check_grid_cell(const GridCell& cell);

}  // namespace theo
