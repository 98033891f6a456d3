// The dataflow study's parameter grid: which cells are built, which are refused and why.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "theo/errors.h"
#include "theo/math/parameter_grid.h"
#include "theo/math/security.h"

namespace {

using namespace theo;

TEST(ParameterGrid, CellsAndStatuses) {
  const auto cells = dataflow_grid();
  ASSERT_EQ(cells.size(), 48u);
  std::set<std::string> ok, unrealizable, insecure;
  for (const GridCell& c : cells) {
    const GridCellReport r = check_grid_cell(c);
    const std::string name = grid_cell_name(c);
    switch (r.status) {
      case GridCellStatus::kOk:
        ok.insert(name);
        EXPECT_LE(r.log2_pq, r.bound) << name;
        EXPECT_TRUE(r.reason.empty()) << name;
        break;
      case GridCellStatus::kInsecure:
        insecure.insert(name);
        EXPECT_GT(r.log2_pq, r.bound) << name;
        break;
      case GridCellStatus::kUnrealizable:
        unrealizable.insert(name);
        EXPECT_EQ(r.alpha, 0u) << name;
        EXPECT_NE(r.reason.find("digits"), std::string::npos) << r.reason;
        break;
    }
  }
  // dnum 6 and 8 cannot be made of 10 limbs (alpha 2 gives 5 digits), at every N.
  EXPECT_EQ(unrealizable.size(), 8u);
  for (u32 log_n = 14; log_n <= 17; ++log_n)
    for (u32 d : {6u, 8u})
      EXPECT_TRUE(unrealizable.count(grid_cell_name({log_n, 10, d})));
  // 30 limbs of ~2^30 exceed the 2^14 and 2^15 bounds; 50 limbs the 2^16 bound unless dnum = 8.
  EXPECT_EQ(insecure.size(), 19u);
  EXPECT_TRUE(insecure.count("grid_N16_L50_d6"));
  EXPECT_TRUE(ok.count("grid_N16_L50_d8"));
  EXPECT_TRUE(ok.count("grid_N14_L10_d2"));
  EXPECT_EQ(ok.size(), 21u);
}

TEST(ParameterGrid, SetShape) {
  for (const GridCell c : {GridCell{14, 10, 2}, GridCell{16, 30, 6}, GridCell{17, 50, 8}}) {
    const ParameterSet p = generate_grid_parameters(c);
    EXPECT_EQ(p.log_degree, c.log_n);
    EXPECT_EQ(p.limbs_at(p.max_level()), c.limbs);
    EXPECT_EQ(p.max_level(), c.limbs - 2);
    EXPECT_EQ(p.dnum(), c.dnum);
    EXPECT_EQ(p.alpha(), grid_cell_alpha(c));
    EXPECT_EQ(p.word_bits(), 32u);
    EXPECT_EQ(p.name, grid_cell_name(c));
    EXPECT_NO_THROW(validate(p));
    EXPECT_NO_THROW(check_security(p, false));
    // One prime per level above the base: every level's limbs.
    for (u32 l = 0; l <= p.max_level(); ++l)
      EXPECT_EQ(p.limbs_at(l), l + 2);
  }
}

TEST(ParameterGrid, Alpha) {
  EXPECT_EQ(grid_cell_alpha({16, 30, 4}), 8u);  // ceil(30 / 8) = 4
  EXPECT_EQ(grid_cell_alpha({16, 50, 6}), 9u);
  EXPECT_EQ(grid_cell_alpha({16, 10, 6}), 0u);
  EXPECT_EQ(grid_cell_alpha({16, 10, 5}), 2u);
}

TEST(ParameterGrid, Errors) {
  EXPECT_THROW(generate_grid_parameters({14, 10, 8}), ParameterError);
  try {
    generate_grid_parameters({14, 10, 6});
    FAIL();
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("unrealizable"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate_grid_parameters({18, 10, 2}), ParameterError);
  EXPECT_THROW(generate_grid_parameters({16, 2, 2}), ParameterError);
  EXPECT_THROW(generate_grid_parameters({16, 10, 0}), ParameterError);
  EXPECT_THROW(check_grid_cell({16, 10, 11}), ParameterError);
}

}  // namespace
