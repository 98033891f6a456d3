// The dataflow study's parameter grid (theo/math/parameter_grid.h).

#include "theo/math/parameter_grid.h"

#include <cstdio>

#include "common/enum_names.h"
#include "theo/errors.h"
#include "theo/math/prime_system.h"
#include "theo/math/security.h"

namespace theo {

std::string grid_cell_name(const GridCell& cell) {
  return "grid_N" + std::to_string(cell.log_n) + "_L" + std::to_string(cell.limbs) + "_d" +
         std::to_string(cell.dnum);
}

namespace {

constexpr EnumName<GridCellStatus> kGridCellStatusNames[] = {
    {GridCellStatus::kOk, "ok"},
    {GridCellStatus::kInsecure, "insecure"},
    {GridCellStatus::kUnrealizable, "unrealizable"},
};

}  // namespace

const char* grid_cell_status_name(GridCellStatus s) {
  return enum_name(kGridCellStatusNames, s, "?");
}

std::vector<GridCell> dataflow_grid() {
  std::vector<GridCell> cells;
  for (u32 log_n : {14u, 15u, 16u, 17u})
    for (u32 limbs : {10u, 30u, 50u})
      for (u32 dnum : {2u, 4u, 6u, 8u})
        cells.push_back({log_n, limbs, dnum});
  return cells;
}

u32 grid_cell_alpha(const GridCell& cell) {
  if (cell.dnum == 0 || cell.limbs == 0) return 0;
  for (u32 alpha = 1; alpha <= cell.limbs; ++alpha)
    if ((cell.limbs + alpha - 1) / alpha == cell.dnum) return alpha;
  return 0;
}

namespace {

void check_shape(const GridCell& cell) {
  if (cell.log_n < 10 || cell.log_n > 17)
    throw ParameterError("grid cell: log_n = " + std::to_string(cell.log_n) + " outside 10..17");
  if (cell.limbs < 3 || cell.limbs > 200)
    throw ParameterError("grid cell: limbs = " + std::to_string(cell.limbs) +
                         " outside 3..200 (two base primes and at least one level above)");
  if (cell.dnum == 0 || cell.dnum > cell.limbs)
    throw ParameterError("grid cell: dnum = " + std::to_string(cell.dnum) + " outside 1..limbs (" +
                         std::to_string(cell.limbs) + ")");
}

std::string unrealizable_reason(const GridCell& cell) {
  // The alpha nearest to the request and the digits it gives.
  const u32 alpha = (cell.limbs + cell.dnum - 1) / cell.dnum;
  const u32 got = (cell.limbs + alpha - 1) / alpha;
  return "no auxiliary prime count gives " + std::to_string(cell.dnum) + " digits of " +
         std::to_string(cell.limbs) + " limbs (alpha = " + std::to_string(alpha) + " gives " +
         std::to_string(got) + ")";
}

}  // namespace

ParameterSet generate_grid_parameters(const GridCell& cell) {
  check_shape(cell);
  const u32 alpha = grid_cell_alpha(cell);
  if (alpha == 0)
    throw ParameterError(grid_cell_name(cell) + " is unrealizable: " + unrealizable_reason(cell));
  PrimeSystemSpec spec;
  spec.log_n = cell.log_n;
  spec.log_scale = 30;
  spec.levels = cell.limbs - 2;
  spec.alpha = alpha;
  // Level 0 of 40 bits is two ~2^20 base primes. At N = 2^17 too few primes = 1 mod 2N lie near
  // 2^20 for two, and the generator falls back to a cycle with more limbs; a larger base (one
  // 2^20 and one 2^30 prime, else two 2^30 primes) keeps the one-prime-per-level cycle.
  ParameterSet p;
  for (u32 log_base : {40u, 50u, 60u}) {
    spec.log_base = log_base;
    p = generate_prime_system(spec);
    if (p.limbs_at(p.max_level()) == cell.limbs) break;
  }
  if (p.limbs_at(p.max_level()) != cell.limbs || p.dnum() != cell.dnum) {
    throw ParameterError(grid_cell_name(cell) + ": the prime system generator gives " +
                         std::to_string(p.limbs_at(p.max_level())) + " limbs and " +
                         std::to_string(p.dnum()) + " digits at the top level");
  }
  p.name = grid_cell_name(cell);
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "dataflow-study grid cell N = 2^%u, L = %u limbs, dnum = %u (alpha = %u); ",
                cell.log_n, cell.limbs, cell.dnum, alpha);
  p.comment = buf + p.comment;
  return p;
}

GridCellReport check_grid_cell(const GridCell& cell) {
  check_shape(cell);
  GridCellReport r;
  r.cell = cell;
  r.bound = max_log2_pq_128(cell.log_n);
  r.alpha = grid_cell_alpha(cell);
  if (r.alpha == 0) {
    r.status = GridCellStatus::kUnrealizable;
    r.reason = unrealizable_reason(cell);
    return r;
  }
  const ParameterSet p = generate_grid_parameters(cell);
  r.log2_pq = p.log2_pq();
  if (r.log2_pq > r.bound) {
    r.status = GridCellStatus::kInsecure;
    char buf[160];
    std::snprintf(buf, sizeof buf, "log2(PQ) = %.1f exceeds the 128-bit bound %.0f for N = 2^%u",
                  r.log2_pq, r.bound, cell.log_n);
    r.reason = buf;
  }
  return r;
}

}  // namespace theo
