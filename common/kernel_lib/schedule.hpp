// Tile schedules: the order in which a kernel's blocks visit the output tiles. Pure functions of
// (tile index t, the tile grid, parameters) -> (tile_m, tile_n), host and device, no CUDA runtime
// calls: the persistent steps (15 on) call them in the kernel, tests/test_schedule.cpp proves each a
// bijection onto the tile grid on the CPU, and scripts/plot_schedule.py draws them from the same code
// (through build/bin/schedule_dump, scripts/schedule_dump.cpp).
// Tile (tile_m, tile_n) is C's rows tile_m * BM .. +BM-1 and columns tile_n * BN .. +BN-1.
// 32-bit arithmetic: a step that uses them refuses shapes with kMaxScheduleTiles tiles or more
// (gemm::tma_persistent_gemm_refusal), far past any matrix that fits in memory at these tile sizes.
#pragma once

#include "host_device.hpp"

namespace gemm::schedule {

struct TileCoord {
  int m, n;  ///< tile row (along M) and tile column (along N)
};

/// Row-major raster: t walks a row of tiles (along N) before moving down M. A wave of W blocks
/// touches ceil(W / tiles_n) rows of tiles of A and all of B.
GEMM_HD TileCoord row_major(int t, int tiles_m, int tiles_n) {
  (void)tiles_m;
  return {t / tiles_n, t % tiles_n};
}

/// Column-major raster: t walks a column of tiles (along M) first. This is the order in which the
/// non-persistent steps 11-14 run their blocks: their grid puts M tiles on blockIdx.x, and the
/// hardware dispatches blocks in linear block-index order (x fastest).
GEMM_HD TileCoord column_major(int t, int tiles_m, int tiles_n) {
  (void)tiles_n;
  return {t % tiles_m, t / tiles_m};
}

/// Grouped ("swizzled") order for L2 reuse: the tile rows are cut into groups of `group_m` rows;
/// within a group t walks column by column (group_m tiles down M, then the next tile column), and
/// the groups follow each other down M. The last group holds the tiles_m % group_m rows left over
/// (when there are any) and is walked the same way with its smaller height, so every tile is visited
/// exactly once.
/// Why: the blocks running at one time (a wave of W = SM-count tiles) then cover about
/// group_m rows x W / group_m columns of tiles, so they read group_m * BM rows of A and
/// (W / group_m) * BN rows of B, and every one of those rows is read by several blocks at about the
/// same time: the first read brings it into the 60 MiB L2, the others hit there. A raster order
/// instead reads one or two tile rows of A and all of B per wave. The number of distinct rows per wave,
/// group_m * BM + (W / group_m) * BN, is smallest at group_m = sqrt(W * BN / BM): 16 for W = 132 and
/// a 128 x 256 tile. group_m = 1 is the row-major raster; group_m >= tiles_m is the column-major one.
GEMM_HD TileCoord grouped(int t, int tiles_m, int tiles_n, int group_m) {
  const int tiles_per_group = group_m * tiles_n;
  const int group = t / tiles_per_group;
  const int first_m = group * group_m;
  const int rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;  // the last group may be short
  const int local = t - group * tiles_per_group;                              // in [0, rows * tiles_n)
  return {first_m + local % rows, local / rows};
}

/// Cluster order (steps 17 on): the blocks of a cluster of cluster_m x cluster_n (a 2 x 1 or 1 x 2 pair)
/// compute neighbouring tiles, so the operand they share is loaded once per cluster (TMA multicast).
/// The schedule walks cluster tiles: the grid of ceil(tiles_m / cluster_m) x ceil(tiles_n / cluster_n)
/// cluster tiles in grouped order (`group_m` counted in cluster-tile rows), and block `rank` of the
/// cluster (its %cluster_ctarank; rank % cluster_m along M, rank / cluster_m along N) takes tile
/// (cluster tile m * cluster_m + rank % cluster_m, cluster tile n * cluster_n + rank / cluster_m).
/// When tiles_m (tiles_n) is not a multiple of cluster_m (cluster_n), the last cluster-tile row
/// (column) holds tiles with m >= tiles_m (n >= tiles_n): the caller still walks them, in lockstep
/// with its peer (its loads are zero-filled boxes, its stores clipped), and never stores them.
/// Over t in [0, cluster tiles) and every rank, each tile of the padded grid is visited exactly once.
GEMM_HD TileCoord cluster_grouped(int t, int rank, int tiles_m, int tiles_n, int cluster_m, int cluster_n,
                                  int group_m) {
  const int ctiles_m = (tiles_m + cluster_m - 1) / cluster_m, ctiles_n = (tiles_n + cluster_n - 1) / cluster_n;
  const TileCoord c = grouped(t, ctiles_m, ctiles_n, group_m);
  return {c.m * cluster_m + rank % cluster_m, c.n * cluster_n + rank / cluster_m};
}

/// Generalized Hilbert order (steps 19 on): a space-filling curve over any tiles_m x tiles_n grid,
/// not only a square power of two, so that consecutive t are neighbouring tiles (every step moves to
/// one of the 8 neighbours, almost always one of the 4) and a run of W consecutive t (one wave) is a
/// compact patch of tiles; the next wave's patch borders it.
/// The curve is the recursive rectangle split of the generalized Hilbert ("gilbert") construction
/// (J. Cerveny, github.com/jakubcerveny/gilbert): a rectangle walked from one corner along its major
/// axis (length w) with its minor axis (length h) is cut in two along the major axis when it is long
/// (2w > 3h), else into three parts (a half-height rectangle walked along the minor axis, the other
/// half walked along the major axis, and a half-height rectangle walked back), with the cut lengths
/// made even where that keeps each part's exit beside the next part's entry. This function walks that
/// recursion down to the one part that holds t (a loop, about log2(max(tiles_m, tiles_n)) rounds), so
/// it maps t -> tile directly, host and device, with no table. tests/test_schedule.cpp checks it is a
/// bijection and that every step goes to a neighbour.
GEMM_HD TileCoord hilbert(int t, int tiles_m, int tiles_n) {
  int m = 0, n = 0;                                 // the current rectangle's entry corner
  int am = 1, an = 0, bm = 0, bn = 1;               // unit vectors of its major (a) and minor (b) axes
  int w = tiles_m, h = tiles_n;                     // its length along a and along b
  if (tiles_m < tiles_n) am = 0, an = 1, bm = 1, bn = 0, w = tiles_n, h = tiles_m;  // major axis: the longer side
  for (;;) {
    if (h == 1) return {m + t * am, n + t * an};  // a single row: walk along a
    if (w == 1) return {m + t * bm, n + t * bn};  // a single column: walk along b
    if (2 * w > 3 * h) {                          // long: two parts side by side along a
      int w2 = w / 2;
      if (w2 % 2 != 0 && w > 2) ++w2;
      if (t < w2 * h) {
        w = w2;
      } else {
        t -= w2 * h, m += w2 * am, n += w2 * an, w -= w2;
      }
    } else {  // three parts: up the first half of b, along a, back down
      int h2 = h / 2;
      if (h2 % 2 != 0 && h > 2) ++h2;
      const int w2 = w / 2;
      if (t < h2 * w2) {  // part 1: h2 along b (now major) by w2 along a (now minor)
        const int sm = am, sn = an;
        am = bm, an = bn, bm = sm, bn = sn, w = h2, h = w2;
      } else if (t < h2 * w2 + w * (h - h2)) {  // part 2: the rest of b, walked along a
        t -= h2 * w2, m += h2 * bm, n += h2 * bn, h -= h2;
      } else {  // part 3: from the far corner back along -b (major), -a (minor)
        t -= h2 * w2 + w * (h - h2);
        m += (w - 1) * am + (h2 - 1) * bm, n += (w - 1) * an + (h2 - 1) * bn;
        const int sm = am, sn = an;
        am = -bm, an = -bn, bm = -sm, bn = -sn;
        const int new_h = w - w2;
        w = h2, h = new_h;
      }
    }
  }
}

/// The tile-count limit of the 32-bit schedules (and of t + gridDim.x in a persistent loop).
constexpr long long kMaxScheduleTiles = 1LL << 30;

}  // namespace gemm::schedule

