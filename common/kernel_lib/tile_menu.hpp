// A tile shape per problem (step 25 on): the host function that picks, from a small menu, the
// consumer tile a bf16 GEMM runs with, from the shape and the SM count. It is the heuristic a library
// such as cuBLAS keeps inside (hundreds of kernels, one picked per call), written down: pure, the same
// on host and device, unit-tested (tests/test_tile_menu.cpp) and drawn over an M x N map by the book
// (scripts/tile_menu_dump.cpp, scripts/plot_tile_menu.py).
//
// The menu (the ping-pong, stream-K kernel of steps 23-24, one consumer tile of 128 rows = two m64
// wgmma slabs by `bn` columns):
//   swapped 128 x 64 : M <= kSwapMaxM: C^T = B * A^T, B's rows on wgmma's M side, all of M in one
//                      64-wide tile column (step 24), so B is read once (step 27 on: 128 x swap_bn(M),
//                      below; choose() and plan() still report 64, the widest);
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

// Step 26 on: the menu prices the split too. choose() above compares whole-tile grids and leaves
// stream-K to the step's make_split on the chosen grid, which (steps 21-25) never splits a grid of
// sms / 4 to sms tiles: at 128 x 4096 x 14336 that keeps 64 narrow tiles on 64 SMs for 224 K tiles
// each, where step 24's 32 wide tiles, split over all 132 SMs, took 55 each. plan() costs four
// candidates where the grid has at most half a wave of tiles, each tile whole or split, and takes the
// cheapest: whole, rounds x k_tiles K loops; split, split-K into s = floor(sms / tiles) equal K
// segments per tile (s >= 2; tiles x s blocks), ceil(k_tiles / s) per block, plus kSplitFixupKTiles
// for the fixup; each times the tile's K-tile cost. Equal segments, not stream-K's even share of all
// K tiles over every SM: with tiles x s blocks every block starts at a segment boundary, so the
// blocks of one segment walk K in step and the tiles that share a row of A or a column of B read it
// from L2 together, as whole tiles do (measured: 1024 x 1024 x 65536 split stream-K over 132 SMs,
// 64 tiles starting at 132 different K offsets, ran 0.40 ms, slower than whole tiles on 64 SMs).

inline constexpr int kBK = 64;        ///< the K tile of the bf16 kernels the menu costs (one 128-byte swizzle row)
inline constexpr int kMinPiece = 4;   ///< a split block's fewest K tiles (the steps' MIN_PIECE)
/// The cost of a split grid's fixup (partials stored, counted, summed by the last piece's consumer),
/// in K tiles of the block's loop. From step 21's measurement (make bench-waves, M = K = 4096, N = 256:
/// 64 tiles of 64 K tiles split over 132 SMs, 31 K tiles each, ran 17 % slower than whole tiles on 64
/// SMs, so the split's overhead there was about 44 K tiles), rounded up: a split must win clearly.
inline constexpr int kSplitFixupKTiles = 64;

/// A tile and whether its grid is split (split-K, split_factor equal K segments per tile; grids of
/// more than half a wave cannot split so and keep the step's wave rule).
struct Plan {
  Tile tile;
  bool split;
};

/// K tiles of kBK over k (k >= 1).
GEMM_HD int64_t k_tiles_of(int64_t k) { return (k + kBK - 1) / kBK; }

/// The split-K factor of `tiles` tiles of `k_tiles` K tiles on `sms` SMs: s = floor(sms / tiles)
/// segments per tile, at most k_tiles / kMinPiece (a segment has kMinPiece K tiles or more), at
/// least 1 (1: no split fits).
GEMM_HD int64_t split_factor(int64_t tiles, int64_t k_tiles, int sms) {
  const int64_t s_sm = (sms < 1 ? 1 : sms) / (tiles < 1 ? 1 : tiles), s_k = k_tiles / kMinPiece;
  const int64_t s = s_sm < s_k ? s_sm : s_k;
  return s < 1 ? 1 : s;
}

/// The K tiles each block runs when every tile is split into split_factor equal K segments, one block
/// each: ceil(k_tiles / s).
GEMM_HD int64_t split_k_tiles(int64_t tiles, int64_t k_tiles, int sms) {
  const int64_t s = split_factor(tiles, k_tiles, sms);
  return (k_tiles + s - 1) / s;
}

/// The estimated time of plan `pl` for an m x n x k problem on `sms` SMs, in percent of one
/// 128 x 128 tile's K tile: whole, rounds x k_tiles; split (only meaningful with fewer tiles than
/// SMs and a split factor of 2 or more), split_k_tiles + kSplitFixupKTiles; times the tile's cost
/// (100 or kNarrowCostPct).
GEMM_HD int64_t plan_estimate_pct(int64_t m, int64_t n, int64_t k, int sms, Plan pl) {
  const int64_t tiles = pl.tile.swap ? tile_count(n, m, pl.tile.bn) : tile_count(m, n, pl.tile.bn);
  const int64_t kt = k_tiles_of(k);
  const int64_t loops = pl.split ? split_k_tiles(tiles, kt, sms) + kSplitFixupKTiles : rounds(tiles, sms) * kt;
  return loops * (pl.tile.bn == 128 ? 100 : kNarrowCostPct);
}

/// The step-26 menu's pick for C = A * B^T, A m x k, B n x k (m, n, k >= 1; sms < 1 counts as 1):
/// swapped 128 x 64 when m <= kSwapMaxM (its split stays the step's own rule: split = false here);
/// otherwise the cheapest by plan_estimate_pct of 128 x 128 whole, 128 x 64 whole, and, for each tile
/// whose grid splits (split_factor >= 2), that tile split. Ties go to the earlier of that order (the
/// bigger tile, then whole). Where neither grid is split, the pick is choose()'s. The step may split
/// more than this plan says (step 26 keeps 25's split of grids under a quarter wave), never less.
GEMM_HD Plan plan(int64_t m, int64_t n, int64_t k, int sms) {
  if (m <= kSwapMaxM) return {{true, 64}, false};
  const Plan cands[4] = {{{false, 128}, false}, {{false, 64}, false}, {{false, 128}, true}, {{false, 64}, true}};
  Plan best = cands[0];
  int64_t best_pct = plan_estimate_pct(m, n, k, sms, best);
  for (int i = 1; i < 4; ++i) {
    if (cands[i].split && split_factor(tile_count(m, n, cands[i].tile.bn), k_tiles_of(k), sms) < 2) continue;
    const int64_t pct = plan_estimate_pct(m, n, k, sms, cands[i]);
    if (pct < best_pct) best = cands[i], best_pct = pct;
  }
  return best;
}

// Step 27 on: the swapped tile sized to M. Swapped, all of M is one tile column of C^T, so its width
// is wgmma's N: 64 in steps 24-26 whatever M is. At M = 1 that is 63 zero columns in every wgmma, in
// every accumulator fragment and in every fp32 partial a split block stores and its fixup reads back:
// 32 KB per piece of a 128 x 64 tile, 4 KB of a 128 x 8 one. wgmma's N runs from 8 to 256 in steps of
// 8 (PTX ISA, "Matrix Shape": .m64nNk16 for bf16), so the menu's swapped widths are 8, 16, 32, 64.

/// The swapped tile's width for M (1 <= m <= kSwapMaxM): the narrowest of 8, 16, 32, 64 (each a wgmma
/// N) that holds all of M, so the tile column stays one and B is still read once. An m above
/// kSwapMaxM gets kSwapMaxM (the caller swaps only m <= kSwapMaxM).
GEMM_HD int swap_bn(int64_t m) { return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : kSwapMaxM; }
static_assert(kSwapMaxM == 64, "swap_bn's widths end at the widest swapped tile");

// Step 28 on: the row pitch off the 32-byte sector. A K-major bf16 row of K elements is 2K bytes; TMA
// loads a box row of kBK = 64 elements (128 bytes, one swizzle span) from each of BM rows; row r starts
// r * 2K bytes past row 0. When 2K is not a multiple of 128, all but one row in 128 / gcd(2K, 128)
// start off a 128-byte line and straddle two; when 2K is not a multiple of 32 either (2K % 32 == 16),
// every other row also starts 16 bytes into a 32-byte sector and touches five sectors, two of them
// half-used. A probe of step 25 at M = N = 5000 put that case at half of cuBLAS, where a pitch only
// off the line lost 7-21 % (the notebook, "A ragged K that is slow for its alignment, not its tail").
// Copying A and B to a pitch of padded_pitch(K) elements costs reading and writing both once,
// 4 (M + N) K bytes (about 1.6 TB/s with cudaMemcpy2DAsync), after which the GEMM runs at the aligned
// speed. Where that pays was measured by forcing the copy (variant_28_always beside step 27;
// results/nvidia_h200_pad_pitch.csv, the notebook's "Step 28: where the copy pays"): only where rows
// start inside a sector, down to 1/M + 1/N = 1/1252, breaking even from 1/1024 on, never at a
// memory-bound shape. So repack_pitch copies where 2K % 32 != 0 (K % 16 == 8; the harness's
// K % 8 == 0 leaves no other case), 1/M + 1/N <= 1/kRepackMinDim (between those two), and the GEMM is
// long enough (kRepackMinFlop) not to pay two copies' fixed costs (2048^2 x 2056 lost 7 %). Long K
// raises the misaligned GEMM's cost, which the rule does not model.

inline constexpr int kPitchElems = 64;                ///< pitches are padded to 64 bf16 = 128 bytes
inline constexpr int kSectorBytes = 32;               ///< one L2 sector
inline constexpr int kSectorElems = kSectorBytes / 2;  ///< a sector of bf16: 16
inline constexpr int64_t kRepackMinDim = 1152;        ///< copy when 1/M + 1/N <= 1/kRepackMinDim
inline constexpr int64_t kRepackMinFlop = 25'000'000'000;  ///< ... and 2 M N K >= 2.5e10 (~50 us at 500 TFLOP/s)

/// K rounded up to a multiple of kPitchElems: the padded copy's row pitch, in elements (k >= 1).
GEMM_HD int64_t padded_pitch(int64_t k) { return (k + kPitchElems - 1) / kPitchElems * kPitchElems; }

/// Whether step 28 copies A (m x k) and B (n x k) to the padded pitch before the GEMM: K's rows start
/// inside a 32-byte sector (k % kSectorElems != 0), the copy is at most about half of the aligned GEMM
/// (m n >= kRepackMinDim (m + n)), and the GEMM has at least kRepackMinFlop FLOP (m, n, k >= 1).
GEMM_HD bool repack_pitch(int64_t m, int64_t n, int64_t k) {
  return k % kSectorElems != 0 && m * n >= kRepackMinDim * (m + n) &&
         2.0 * double(m) * double(n) * double(k) >= double(kRepackMinFlop);
}

}  // namespace gemm::tile_menu
