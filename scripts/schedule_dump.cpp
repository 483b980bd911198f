// Prints a tile schedule of common/schedule.hpp as CSV (t,tile_m,tile_n), one line per tile, from the
// same functions the kernels call: scripts/plot_schedule.py draws its pictures from this output.
//   build/bin/schedule_dump row_major|column_major|grouped TILES_M TILES_N [GROUP_M]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/schedule.hpp"

int main(int argc, char** argv) {
  using namespace gemm::schedule;
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s row_major|column_major|grouped TILES_M TILES_N [GROUP_M]\n", argv[0]);
    return 2;
  }
  const std::string order = argv[1];
  const long tm = std::strtol(argv[2], nullptr, 10), tn = std::strtol(argv[3], nullptr, 10);
  const long g = argc == 5 ? std::strtol(argv[4], nullptr, 10) : 0;
  if (tm < 1 || tn < 1 || tm * tn >= kMaxScheduleTiles || (order == "grouped" && g < 1)) {
    std::fprintf(stderr, "error: need 1 <= TILES_M * TILES_N < 2^30 and, for grouped, GROUP_M >= 1\n");
    return 2;
  }
  if (order != "row_major" && order != "column_major" && order != "grouped") {
    std::fprintf(stderr, "error: unknown order '%s' (row_major, column_major, grouped)\n", order.c_str());
    return 2;
  }
  std::printf("t,tile_m,tile_n\n");
  for (int t = 0; t < int(tm * tn); ++t) {
    const TileCoord c = order == "row_major"      ? row_major(t, int(tm), int(tn))
                        : order == "column_major" ? column_major(t, int(tm), int(tn))
                                                  : grouped(t, int(tm), int(tn), int(g));
    std::printf("%d,%d,%d\n", t, c.m, c.n);
  }
  return 0;
}
