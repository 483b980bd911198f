// Prints a tile schedule of common/kernel_lib/schedule.hpp as CSV (t,tile_m,tile_n), one line per tile, from the
// same functions the kernels call: scripts/plot_schedule.py draws its pictures from this output.
//   build/bin/schedule_dump row_major|column_major|grouped|hilbert TILES_M TILES_N [GROUP_M]
//   build/bin/schedule_dump cluster_grouped TILES_M TILES_N GROUP_M CLUSTER_M CLUSTER_N
// For cluster_grouped, t = cluster tile index * cluster size + rank (the two blocks of a cluster walk
// their tiles in lockstep), and the padding tiles of a ragged pair (m >= TILES_M or n >= TILES_N) are
// not printed: they are walked but never stored.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/kernel_lib/schedule.hpp"

int main(int argc, char** argv) {
  using namespace gemm::schedule;
  const std::string order = argc > 1 ? argv[1] : "";
  const bool cluster = order == "cluster_grouped";
  if ((!cluster && (argc < 4 || argc > 5)) || (cluster && argc != 7)) {
    std::fprintf(stderr,
                 "usage: %s row_major|column_major|grouped|hilbert TILES_M TILES_N [GROUP_M]\n"
                 "       %s cluster_grouped TILES_M TILES_N GROUP_M CLUSTER_M CLUSTER_N\n",
                 argv[0], argv[0]);
    return 2;
  }
  const long tm = std::strtol(argv[2], nullptr, 10), tn = std::strtol(argv[3], nullptr, 10);
  const long g = argc >= 5 ? std::strtol(argv[4], nullptr, 10) : 0;
  const long cm = cluster ? std::strtol(argv[5], nullptr, 10) : 1, cn = cluster ? std::strtol(argv[6], nullptr, 10) : 1;
  if (tm < 1 || tn < 1 || tm * tn >= kMaxScheduleTiles || ((order == "grouped" || cluster) && g < 1) || cm < 1 ||
      cn < 1 || cm * cn > 16) {
    std::fprintf(stderr, "error: need 1 <= TILES_M * TILES_N < 2^30, GROUP_M >= 1 where used, 1 <= CLUSTER_M * CLUSTER_N <= 16\n");
    return 2;
  }
  if (order != "row_major" && order != "column_major" && order != "grouped" && order != "hilbert" && !cluster) {
    std::fprintf(stderr, "error: unknown order '%s' (row_major, column_major, grouped, hilbert, cluster_grouped)\n",
                 order.c_str());
    return 2;
  }
  std::printf("t,tile_m,tile_n\n");
  if (cluster) {
    const long ctiles = ((tm + cm - 1) / cm) * ((tn + cn - 1) / cn), size = cm * cn;
    for (long ct = 0; ct < ctiles; ++ct)
      for (long rank = 0; rank < size; ++rank) {
        const TileCoord c = cluster_grouped(int(ct), int(rank), int(tm), int(tn), int(cm), int(cn), int(g));
        if (c.m < tm && c.n < tn) std::printf("%ld,%d,%d\n", ct * size + rank, c.m, c.n);
      }
    return 0;
  }
  for (int t = 0; t < int(tm * tn); ++t) {
    const TileCoord c = order == "row_major"      ? row_major(t, int(tm), int(tn))
                        : order == "column_major" ? column_major(t, int(tm), int(tn))
                        : order == "hilbert"      ? hilbert(t, int(tm), int(tn))
                                                  : grouped(t, int(tm), int(tn), int(g));
    std::printf("%d,%d,%d\n", t, c.m, c.n);
  }
  return 0;
}
