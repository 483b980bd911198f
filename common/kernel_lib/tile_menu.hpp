// A tile shape per problem (step 25 on): the host function that picks, from a small menu, the
// consumer tile a bf16 GEMM runs with, from the shape and the SM count. It is the heuristic a library
// such as cuBLAS keeps inside (hundreds of kernels, one picked per call), written down: pure, the same
// on host and device, unit-tested (tests/test_tile_menu.cpp) and drawn over an M x N map by the book
// (scripts/tile_menu_dump.cpp, scripts/plot_tile_menu.py).
//
// The menu (the ping-pong, stream-K kernel of steps 23-24, one consumer tile of 128 rows = two m64
// wgmma slabs by `bn` columns):
//   swapped 128 x 64 : M <= kSwapMaxM: C^T = B * A^T, B's rows on wgmma's M side, all of M in one
//                      64-wide tile column (step 24), so B is read once;
//   128 x 128        : step 23's tile, the most FLOP per byte loaded;
//   128 x 64         : half the tile, twice the tiles: for grids that leave SMs idle.
// The choice between the last two is wave quantization. A ping-pong block runs one mainloop at a
// time, so the kernel takes about ceil(tiles / sms) rounds of one tile's K loop. A 128 x 64 tile's K
// loop costs kNarrowCostPct percent of a 128 x 128 one (half the wgmma work, but the same A box,
// barriers and issue per K tile; measured, see kNarrowCostPct), so the narrow tile is picked exactly
// where rounds(narrow) x 77 < rounds(wide) x 100: where twice the tiles need no more rounds (64 wide
// tiles against 128 narrow ones, one round each, at 256 x 4096 or 1024 x 1024; every N <= 64, where
// the tile count does not change), or few enough more (11264 x 192: 2 rounds either way); not at
// 4096 x 4096 (8 rounds against 16) nor 4096 x 768 (2 against 3). The estimate knows nothing of the
// step's stream-K split, which decides afterwards on the chosen grid (docs/every_shape.md says where
// that costs).
#pragma once
#include <cstdint>

#include "host_device.hpp"

namespace gemm::tile_menu {

inline constexpr int kBM = 128;       ///< every menu tile's M side: two m64 slabs
inline constexpr int kSwapMaxM = 64;  ///< M <= this runs swapped (step 24's bound: one 64-wide tile column)
/// Cost of one K tile of a 128 x 64 tile relative to one of a 128 x 128 tile, in percent. Measured on
/// the H200 (scripts/gpu_session.sh tiles: forced 128 x 64 against forced 128 x 128 at 4096^3 and at
/// shapes with a full wave of either, paired with cuBLAS; docs/notebook/hopper.md, "Step 25: the tile
/// menu's first probe").
inline constexpr int kNarrowCostPct = 77;

/// The consumer tile: kBM x bn of C, or of C^T when swap.
struct Tile {
  bool swap;
  int bn;
};

/// Rounds of one tile's K loop a grid of `tiles` tiles takes on `sms` SMs (one mainloop per SM at a time).
/// An sms below 1 is taken as 1 (the launcher's gemm::sm_count() is at least 1; a pure function never traps).
GEMM_HD int64_t rounds(int64_t tiles, int sms) {
  const int64_t s = sms < 1 ? 1 : sms;
  return (tiles + s - 1) / s;
}

/// Tiles of kBM x bn over an m x n problem.
GEMM_HD int64_t tile_count(int64_t m, int64_t n, int bn) { return ((m + kBM - 1) / kBM) * ((n + bn - 1) / bn); }

/// The estimated time of C = A * B^T (m x n, any K) with tile t on `sms` SMs, in percent of one
/// 128 x 128 tile's K loop: rounds x the tile's K-loop cost. The swapped tile is costed on C^T (n x m).
GEMM_HD int64_t estimate_pct(int64_t m, int64_t n, int sms, Tile t) {
  const int64_t tiles = t.swap ? tile_count(n, m, t.bn) : tile_count(m, n, t.bn);
  return rounds(tiles, sms) * (t.bn == 128 ? 100 : kNarrowCostPct);
}

/// The menu's pick for C = A * B^T, A m x k, B n x k, on `sms` SMs (m, n, k >= 1; sms < 1 counts as 1):
/// swapped 128 x 64 when m <= kSwapMaxM; otherwise 128 x 64 when its estimate is strictly below
/// 128 x 128's, else 128 x 128 (ties go to the bigger tile: fewer bytes loaded per FLOP). K does not
/// enter: both tiles' K loops grow with it alike, and the split of a long K over idle SMs is decided
/// afterwards, on the chosen tile's grid (the step's make_split).
GEMM_HD Tile choose(int64_t m, int64_t n, int64_t /*k*/, int sms) {
  if (m <= kSwapMaxM) return {true, 64};
  const Tile wide{false, 128}, narrow{false, 64};
  return estimate_pct(m, n, sms, narrow) < estimate_pct(m, n, sms, wide) ? narrow : wide;
}

}  // namespace gemm::tile_menu
