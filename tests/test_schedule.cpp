// Tile schedules (common/kernel_lib/schedule.hpp) on the CPU: every order is a bijection from [0, tiles) onto the
// tile grid, on every grid from 1x1 to 40x40 and on the tile grids of the benchmark sweep shapes
// (scripts/bench.py) with the 128x256 tile of steps 14-16, for several group sizes; and the grouped
// order walks its groups column by column as documented; the cluster order (step 17) covers the grid
// padded to whole clusters once, with both blocks of a cluster on the operand they share; the Hilbert
// order (steps 19 on) moves to a neighbouring tile at every step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "../common/kernel_lib/schedule.hpp"

using namespace gemm::schedule;

namespace {

using Order = std::function<TileCoord(int t, int tiles_m, int tiles_n)>;

// Empty string when order maps [0, tiles_m * tiles_n) one-to-one onto the grid, else the first fault.
std::string bijection_fault(const Order& order, int tiles_m, int tiles_n) {
  const int tiles = tiles_m * tiles_n;
  std::vector<int> hit(size_t(tiles), -1);
  for (int t = 0; t < tiles; ++t) {
    const TileCoord c = order(t, tiles_m, tiles_n);
    if (c.m < 0 || c.m >= tiles_m || c.n < 0 || c.n >= tiles_n)
      return "t=" + std::to_string(t) + " -> (" + std::to_string(c.m) + ", " + std::to_string(c.n) + ") off the grid";
    int& h = hit[size_t(c.m) * tiles_n + c.n];
    if (h >= 0)
      return "t=" + std::to_string(t) + " and t=" + std::to_string(h) + " -> (" + std::to_string(c.m) + ", " +
             std::to_string(c.n) + ")";
    h = t;
  }
  return "";  // tiles distinct values in a set of tiles cells: every cell hit once
}

struct Named {
  std::string name;
  Order order;
};

std::vector<Named> orders() {
  std::vector<Named> v{{"row_major", [](int t, int tm, int tn) { return row_major(t, tm, tn); }},
                       {"column_major", [](int t, int tm, int tn) { return column_major(t, tm, tn); }}};
  for (int g : {1, 2, 3, 4, 5, 7, 8, 16, 32, 64})
    v.push_back({"grouped(group_m=" + std::to_string(g) + ")",
                 [g](int t, int tm, int tn) { return grouped(t, tm, tn, g); }});
  v.push_back({"hilbert", [](int t, int tm, int tn) { return hilbert(t, tm, tn); }});
  return v;
}

}  // namespace

TEST_CASE("schedules: every order is a bijection onto every tile grid from 1x1 to 40x40", "[cpu][schedule]") {
  for (const Named& o : orders())
    for (int tm = 1; tm <= 40; ++tm)
      for (int tn = 1; tn <= 40; ++tn) {
        const std::string fault = bijection_fault(o.order, tm, tn);
        if (!fault.empty()) FAIL_CHECK(o.name << " on " << tm << " x " << tn << " tiles: " << fault);
      }
}

TEST_CASE("schedules: bijections on the tile grids of the benchmark sweep (128x256 tiles)", "[cpu][schedule]") {
  std::vector<std::tuple<int, int>> mn;
  for (int s : {2048, 4096, 6144, 8192, 12288, 16384}) mn.push_back({s, s});
  for (auto [m, n] : {std::tuple{16384, 4096}, {16384, 14336}, {8192, 28672}, {8192, 8000}, {8000, 8192}})
    mn.push_back({m, n});
  for (auto [m, n] : mn) {
    const int tm = (m + 127) / 128, tn = (n + 255) / 256;
    for (const Named& o : orders()) {
      const std::string fault = bijection_fault(o.order, tm, tn);
      if (!fault.empty()) FAIL_CHECK(o.name << " on M=" << m << " N=" << n << " (" << tm << " x " << tn << " tiles): " << fault);
    }
  }
}

TEST_CASE("schedules: the grouped order walks group_m tile rows column by column, last group short", "[cpu][schedule]") {
  // 10 x 3 tiles, groups of 4 rows: rows 0-3, 4-7, then the short group of rows 8-9.
  const int tm = 10, tn = 3, g = 4;
  std::vector<std::tuple<int, int>> want;
  for (int first : {0, 4, 8}) {
    const int rows = std::min(g, tm - first);
    for (int n = 0; n < tn; ++n)
      for (int r = 0; r < rows; ++r) want.push_back({first + r, n});
  }
  REQUIRE(int(want.size()) == tm * tn);
  for (int t = 0; t < tm * tn; ++t) {
    const TileCoord c = grouped(t, tm, tn, g);
    INFO("t = " << t);
    CHECK(std::tuple{c.m, c.n} == want[size_t(t)]);
  }
  // group_m = 1 is the row-major raster; group_m >= tiles_m the column-major one.
  for (int t = 0; t < tm * tn; ++t) {
    CHECK(grouped(t, tm, tn, 1).m == row_major(t, tm, tn).m);
    CHECK(grouped(t, tm, tn, 1).n == row_major(t, tm, tn).n);
    CHECK(grouped(t, tm, tn, tm + 5).m == column_major(t, tm, tn).m);
    CHECK(grouped(t, tm, tn, tm + 5).n == column_major(t, tm, tn).n);
  }
}

TEST_CASE("schedules: the persistent steps' refusal bounds the 32-bit tile index", "[cpu][schedule]") {
  // t + gridDim.x (<= a few hundred SMs) stays far below 2^31 for any accepted shape.
  CHECK(kMaxScheduleTiles <= (1LL << 31) - (1LL << 20));
}

// ---- the cluster order (step 17): pairs of tiles that share an operand ---------------------------

namespace {

// Empty string when cluster_grouped maps (t, rank) over [0, cluster tiles) x [0, cm * cn) one-to-one onto
// the grid padded to whole clusters, so every real tile is computed exactly once, the padding tiles lie
// only in the last cluster row (m >= tiles_m) or column (n >= tiles_n), and both ranks of a cluster tile
// share its m range (cm = 1) or n range (cn = 1): the operand they multicast.
std::string cluster_fault(int tiles_m, int tiles_n, int cm, int cn, int group_m) {
  const int ctm = (tiles_m + cm - 1) / cm, ctn = (tiles_n + cn - 1) / cn;
  const int pm = ctm * cm, pn = ctn * cn;
  std::vector<int> hit(size_t(pm) * pn, -1);
  for (int t = 0; t < ctm * ctn; ++t) {
    const TileCoord c0 = cluster_grouped(t, 0, tiles_m, tiles_n, cm, cn, group_m);
    for (int r = 0; r < cm * cn; ++r) {
      const TileCoord c = cluster_grouped(t, r, tiles_m, tiles_n, cm, cn, group_m);
      const std::string at = "t=" + std::to_string(t) + " rank " + std::to_string(r) + " -> (" + std::to_string(c.m) +
                             ", " + std::to_string(c.n) + ")";
      if (c.m < 0 || c.m >= pm || c.n < 0 || c.n >= pn) return at + " off the padded grid";
      if ((cm == 1 && c.m != c0.m) || (cn == 1 && c.n != c0.n)) return at + ": not the shared row/column of rank 0";
      if (c.m / cm != c0.m / cm || c.n / cn != c0.n / cn) return at + ": not rank 0's cluster tile";
      int& h = hit[size_t(c.m) * pn + c.n];
      if (h >= 0) return at + ", visited twice";
      h = t;
    }
  }
  return "";  // ctm * ctn * cm * cn distinct cells of a pm x pn grid: all hit
}

}  // namespace

TEST_CASE("schedules: the cluster order covers every tile once, pairs share their operand (1x1..40x40)", "[cpu][schedule]") {
  for (auto [cm, cn] : {std::tuple{2, 1}, std::tuple{1, 2}, std::tuple{1, 1}})
    for (int g : {1, 3, 8, 16})
      for (int tm = 1; tm <= 40; ++tm)
        for (int tn = 1; tn <= 40; ++tn) {
          const std::string fault = cluster_fault(tm, tn, cm, cn, g);
          if (!fault.empty())
            FAIL_CHECK("cluster " << cm << "x" << cn << " group " << g << " on " << tm << " x " << tn << ": " << fault);
        }
}

TEST_CASE("schedules: the cluster order on the sweep's tile grids (128x256 tiles, pairs along M and N)", "[cpu][schedule]") {
  std::vector<std::tuple<int, int>> mn;
  for (int s : {2048, 4096, 6144, 8192, 12288, 16384}) mn.push_back({s, s});
  for (auto [m, n] : {std::tuple{16384, 4096}, {16384, 14336}, {8192, 28672}, {8192, 8000}, {8000, 8192}, {8100, 8192}})
    mn.push_back({m, n});
  for (auto [m, n] : mn) {
    const int tm = (m + 127) / 128, tn = (n + 255) / 256;
    CHECK(cluster_fault(tm, tn, 2, 1, 8) == "");
    CHECK(cluster_fault(tm, tn, 1, 2, 16) == "");
  }
}

TEST_CASE("schedules: the cluster order is the grouped order of cluster tiles; odd tiles_m pads the last pair", "[cpu][schedule]") {
  // 5 x 3 tiles in pairs along M: cluster tiles 3 x 3; the third cluster row pairs tile row 4 with the
  // padding row 5 (outside the matrix).
  for (int t = 0; t < 9; ++t) {
    const TileCoord c = grouped(t, 3, 3, 2);
    INFO("t = " << t);
    CHECK(cluster_grouped(t, 0, 5, 3, 2, 1, 2).m == 2 * c.m);
    CHECK(cluster_grouped(t, 1, 5, 3, 2, 1, 2).m == 2 * c.m + 1);
    CHECK(cluster_grouped(t, 1, 5, 3, 2, 1, 2).n == c.n);
  }
  int padding = 0;
  for (int t = 0; t < 9; ++t) padding += cluster_grouped(t, 1, 5, 3, 2, 1, 2).m >= 5;
  CHECK(padding == 3);  // one padding tile per tile column
  // One tile row (tiles_m = 1): every pair is (0, n) and the padding tile (1, n).
  for (int t = 0; t < 7; ++t) {
    CHECK(cluster_grouped(t, 0, 1, 7, 2, 1, 8).m == 0);
    CHECK(cluster_grouped(t, 1, 1, 7, 2, 1, 8).m == 1);
  }
  // A 1 x 1 cluster is the grouped order itself.
  for (int t = 0; t < 30; ++t) {
    CHECK(cluster_grouped(t, 0, 10, 3, 1, 1, 4).m == grouped(t, 10, 3, 4).m);
    CHECK(cluster_grouped(t, 0, 10, 3, 1, 1, 4).n == grouped(t, 10, 3, 4).n);
  }
}

// The largest Chebyshev and Manhattan distance between tiles t and t + 1 of the Hilbert order, and how
// many steps are not to one of the 4 edge neighbours (the generalized curve takes a diagonal step on
// some grids with exactly one odd side, at most once).
struct HilbertSteps {
  int max_chebyshev = 0, non_unit = 0;
};
static HilbertSteps hilbert_steps(int tm, int tn) {
  HilbertSteps r;
  TileCoord prev = hilbert(0, tm, tn);
  for (int t = 1; t < tm * tn; ++t) {
    const TileCoord c = hilbert(t, tm, tn);
    const int dm = std::abs(c.m - prev.m), dn = std::abs(c.n - prev.n);
    r.max_chebyshev = std::max({r.max_chebyshev, dm, dn});
    r.non_unit += dm + dn != 1;
    prev = c;
  }
  return r;
}

TEST_CASE("schedules: the Hilbert order steps to a neighbouring tile every time (1x1..64x64)", "[cpu][schedule]") {
  for (int tm = 1; tm <= 64; ++tm)
    for (int tn = 1; tn <= 64; ++tn) {
      const HilbertSteps s = hilbert_steps(tm, tn);
      if (s.max_chebyshev > 1) FAIL_CHECK("hilbert on " << tm << " x " << tn << " jumps " << s.max_chebyshev << " tiles");
      if (s.non_unit > 1) FAIL_CHECK("hilbert on " << tm << " x " << tn << ": " << s.non_unit << " diagonal steps");
    }
  // Grids with an even side are walked by edge steps only; a 2^k square is the classic Hilbert curve.
  for (auto [tm, tn] : {std::tuple{32, 16}, {64, 32}, {16, 16}, {128, 16}, {64, 112}})
    CHECK(hilbert_steps(tm, tn).non_unit == 0);
}

TEST_CASE("schedules: the Hilbert order on a 4x4 grid is the classic curve, from tile (0,0)", "[cpu][schedule]") {
  // Position t of each tile of a 4 x 4 grid (row m, column n), written out by hand from the curve.
  const int expected[4][4] = {{0, 3, 4, 5}, {1, 2, 7, 6}, {14, 13, 8, 9}, {15, 12, 11, 10}};
  for (int t = 0; t < 16; ++t) {
    const TileCoord c = hilbert(t, 4, 4);
    CHECK(expected[c.m][c.n] == t);
  }
  // One row or one column is a straight walk.
  for (int t = 0; t < 7; ++t) {
    CHECK(hilbert(t, 1, 7).n == t);
    CHECK(hilbert(t, 7, 1).m == t);
  }
}
