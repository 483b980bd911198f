// The family's menu (issue 46): the configurations a tuner times on a grid of shapes and a dispatcher
// picks from, each a value of the family (config.hpp), never a file. What it spans and why, from
// cuBLAS's own kernel names on the H200 (nvjet_sm90_tst_<N>x<M>_<BK>x<stages>_<cluster>_...: the tile of
// C^T that the harness asks cuBLAS for, so its first number and the cluster's first runs along our N;
// tiles 48 to 320 wide and not only powers of two, clusters of 2, 3 to 15 stages):
//   - ping-pong tiles of 128 rows, BN 40 to 160 (a BN that is not a power of two can fill 132 SMs
//     where 128 leaves a wave a third empty; 80 and 40 store through 16- and 8-column epilogue
//     boxes, config.hpp's epi_n), and of 64 rows, BN 64 to 256 (the M = 65-127 class:
//     cuBLAS's 64 x 96 with 10 stages streams B at 75 % of HBM);
//   - cooperative tiles of 128 and 256 rows (one or two m64 slabs a consumer), the L2 traffic of a
//     256 x 128 tile per K tile is 3/4 of two 128 x 128 tiles';
//   - clusters of two along M (B's tile multicast) or N (A's), step 17's lesson back on the main line,
//     and 2 x 2 (both: each block issues half of each box's rows, for pitches where every TMA row
//     costs more L2 requests than lines: results/tuning/'s K + 8 rows slow down as rows per FLOP grow);
//     the 64-row tiles in pairs too (cuBLAS pairs 56-row tiles along N at small grids with a
//     misaligned pitch);
//   - the epilogue with stmatrix (step 20);
//   - swapped tiles (step 24) of C^T 8 to 64 wide, each for M up to its width (one tile column);
//   - and cuBLAS's own orientation: wide swapped tiles of C^T, 64 or 128 rows of N by 80 to 192 columns
//     of M, any number of columns (past 112 columns cooperative: a ping-pong consumer's 144 sums beside
//     the transposed stores' addresses spilled, ptxas -v), their C stored from registers, one element a
//     store, or (-stm) transposed by stmatrix into boxes of C's rows and stored by TMA. The harness
//     asks cuBLAS for C^T, and cuBLASLt's best tiles at the random set's worst M = 144-572 shapes run
//     along M in widths of 72 to 288 (tile ids 64x72, 64x120, 128x80, 128x288, 192x144: C^T's rows,
//     then its columns): M in steps of 8, where an unswapped tile steps in m64 slabs (M = 572: five
//     128-row tiles cover 640 rows, four 144-wide columns 576).
//   - split-K with a separate reduction (-psk, Spec::parallel_reduce) for grids under a wave with a
//     long K, where many segments would meet in one block's fixup (issue 46 asks for it; cuBLAS's own
//     split-K at 256 x 256 x 16384 turned out to be one kernel, docs/notebook/hopper.md).
// Every entry's stages are the most its shared memory holds (stages_that_fit).
// Host code: pure, for the tuner, the dispatcher and the tests (tests/test_family.cpp checks every
// entry assembles, names are unique, and the plans). family/menu.cu instantiates the kernels.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "config.hpp"
#include "plan.hpp"

namespace gemm::family::menu {

/// One entry: a configuration and the split policy its plans use (unswapped and wide swapped: 23's wave
/// limits with 26's split-K under one wave, and the last wave's stream-K only where its panels fit in
/// L2; narrow swapped: 24's idle-time rule alone).
struct Entry {
  Spec spec;
  SplitPolicy split;
  /// A swapped tile for M up to its width only (steps 24 and 27: C^T's one tile column, so that B, the
  /// large operand, is read once); false: any M (an unswapped tile, or a wide swapped one).
  bool one_column = false;
};

/// `s` with the most stages its shared memory holds.
constexpr Spec fit(Spec s) {
  s.stages = stages_that_fit(s);
  return s;
}
/// A measurement build's switch (make coop-waves-variant, build/bin/variant_tune_coop_waves): the fewest
/// full waves at which a cooperative entry's plan takes stream-K, where step 23's rule (kMinWaves)
/// came from ping-pong tiles and step 21's cooperative 128 x 256 tile gained from it at 1.2 and 2.2 waves
/// (docs/hopper_part2.md). kMinWaves in every step and in build/bin/tune.
#ifndef GEMM_FAMILY_COOP_MIN_WAVES
#define GEMM_FAMILY_COOP_MIN_WAVES kMinWaves
#endif
constexpr Entry tile(Spec s) {
  return {fit(s), {.wave_limits = true, .split_k = true, .l2_fit = true,
                   .min_waves = s.consumers == Consumers::cooperative ? GEMM_FAMILY_COOP_MIN_WAVES : kMinWaves}};
}
constexpr Entry swapped(int bn) { return {fit(Spec{.bn = bn, .swap = true}), {.wave_limits = false}, true}; }
/// A wide swapped tile (cuBLAS's orientation): `s` swapped, planned as an unswapped tile is (tile()).
constexpr Entry wide_swapped(Spec s) {
  s.swap = true;
  return tile(s);
}

inline constexpr Consumers kPP = Consumers::pingpong, kCoop = Consumers::cooperative;

/// The bf16 menu.
inline constexpr std::array kBf16 = {
    tile({.bn = 64}), tile({.bn = 96}), tile({.bn = 128}), tile({.bn = 160}),
    tile({.bn = 64, .bm = 64}), tile({.bn = 96, .bm = 64}), tile({.bn = 128, .bm = 64}),
    tile({.bn = 192, .bm = 64}), tile({.bn = 256, .bm = 64}),
    tile({.bn = 128, .consumers = kCoop}), tile({.bn = 192, .consumers = kCoop}), tile({.bn = 256, .consumers = kCoop}),
    tile({.bn = 64, .consumers = kCoop, .bm = 256}), tile({.bn = 96, .consumers = kCoop, .bm = 256}),
    tile({.bn = 128, .consumers = kCoop, .bm = 256}),
    tile({.bn = 128, .cluster_m = 2}), tile({.bn = 160, .cluster_m = 2}),
    tile({.bn = 256, .consumers = kCoop, .cluster_m = 2}), tile({.bn = 128, .consumers = kCoop, .bm = 256, .cluster_n = 2}),
    tile({.bn = 128, .stmatrix = true}),
    tile({.bn = 80}), tile({.bn = 40}),
    swapped(8), swapped(16), swapped(24), swapped(32), swapped(48), swapped(64),
    tile({.bn = 128, .cluster_m = 2, .cluster_n = 2}), tile({.bn = 160, .cluster_m = 2, .cluster_n = 2}),
    tile({.bn = 64, .bm = 64, .parallel_reduce = true}), tile({.bn = 128, .consumers = kCoop, .parallel_reduce = true}),
    tile({.bn = 256, .consumers = kCoop, .parallel_reduce = true}),
    tile({.bn = 128, .cluster_m = 2, .cluster_n = 2, .parallel_reduce = true}),
    tile({.bn = 64, .bm = 64, .cluster_n = 2}), tile({.bn = 96, .bm = 64, .cluster_m = 2}),
    tile({.bn = 128, .bm = 64, .cluster_m = 2}),
    wide_swapped({.bn = 80}), wide_swapped({.bn = 96}), wide_swapped({.bn = 112}),
    wide_swapped({.bn = 144, .consumers = kCoop}), wide_swapped({.bn = 192, .consumers = kCoop}),
    wide_swapped({.bn = 80, .bm = 64}), wide_swapped({.bn = 128, .bm = 64}), wide_swapped({.bn = 192, .bm = 64}),
    wide_swapped({.bn = 144, .consumers = kCoop, .stmatrix = true}), wide_swapped({.bn = 192, .consumers = kCoop, .stmatrix = true}),
    wide_swapped({.bn = 80, .bm = 64, .stmatrix = true}),
    wide_swapped({.bn = 144, .consumers = kCoop, .cluster_m = 2, .stmatrix = true}),
    wide_swapped({.bn = 192, .consumers = kCoop, .cluster_m = 2, .stmatrix = true}),
};

/// Entries added after both tables (results/tuning/) were measured: step 29's dispatch has no column
/// for them and never picks them until `scripts/tune.py --entries` has timed them on a GPU's grid and
/// scripts/gen_tuned_table.py has written their column (tests/test_family.cpp requires a column for
/// every other entry, none for these). Empty now: a new entry goes here first.
inline constexpr std::array<const char*, 0> kAwaitingTune = {};
/// Entries the H100's table has and the H200's does not yet (the same rule, on the H200 alone). Empty
/// since the H200 timed the 22 it lacked (docs/notebook/hopper.md, "The H200's table completed"): the
/// 2 x 2 clusters and the parallel split-K entries; the 64-row tiles in pairs (at 268 x 1552 x 3576,
/// K % 16 == 8, cuBLAS ran 56-row tiles 64 wide in pairs along N, A's tile shared, with 1.41 M L2
/// requests and 18.4 us where the unpaired 64 x 64 tile took 2.01 M and 25.9 us, H100, ncu;
/// docs/notebook/hopper.md, "Small grids at a misaligned pitch"); the wide swapped tiles (cuBLAS's
/// orientation, see the header), timed on the H100's grid at M up to 2048 (`tune.py --m-max 2048`: the
/// dispatch never picks them past there); the same with a transposing stmatrix epilogue and TMA stores of
/// C's rows (config.hpp's Spec::stmatrix, swapped), which halved the register stores' write sectors at
/// 572 x 23520 x 3360 (H100, ncu; docs/notebook/hopper.md, "cuBLAS's orientation"); the same in pairs
/// along C^T's rows (A's tile shared and multicast, step 17: 128 + 72 and 128 + 96 box rows a K tile
/// for 128 x 144 and 128 x 192 sums), which at 572 x 23520 x 3352 cut the 128 x 192 tile's L2 requests
/// from 28.9 M to 20.6 M and took it from 0.514x to 0.715x cuBLAS (H100, ncu and the tuner).
inline constexpr std::array<const char*, 0> kAwaitingTuneH200 = {};

/// The entry's name in the field's terms: consumers (pp: ping-pong, co: cooperative), BM x BN, then
/// swap (a tile of C^T), a cluster (c2m: two along M, c2n: along N, c2x2: both), stmatrix (stm), a
/// parallel reduction of the split (psk), and the stages:
/// "pp128x160-s5", "co256x128-c2n-s4", "pp128x16-swap-s10".
inline std::string name(Spec s) {
  std::string n = std::string(s.consumers == Consumers::pingpong ? "pp" : "co") + std::to_string(s.bm) + "x" +
                  std::to_string(s.bn);
  if (s.elem == Elem::e4m3) n = "e4m3-" + n;
  if (s.swap) n += "-swap";
  if (s.cluster_m == 2 && s.cluster_n == 2) n += "-c2x2";
  else if (s.cluster_m == 2) n += "-c2m";
  else if (s.cluster_n == 2) n += "-c2n";
  if (s.stmatrix) n += "-stm";
  if (s.parallel_reduce) n += "-psk";
  return n + "-s" + std::to_string(s.stages);
}

/// Entry e's plan for C = A * B^T (m x n x k) on `sms` SMs (no padded copies: the menu reads A and B
/// where they are). Under one wave an unswapped or wide swapped entry splits K into equal segments
/// wherever step 26's price says the split pays (tile_menu::split_factor >= 2 segments, and a segment's
/// K tiles plus kSplitFixupKTiles under a whole tile's), not only under a quarter wave: 46 unsplit 64 x 64 tiles of
/// 67 x 1472 x 26192 left 86 SMs idle and ran at 0.38x cuBLAS (results/nvidia_h200_shapes.csv).
inline Plan plan(const Entry& e, int m, int n, int k, int sms) {
  SplitPolicy sp = e.split;
  if (sp.split_k && sp.wave_limits) {
    const Plan whole = make_plan({m, n, k}, e.spec, sp, false, sms);
    const int units = std::max(1, (sms < 1 ? 1 : sms) / cluster_size(e.spec));
    const int64_t s = tile_menu::split_factor(whole.items, whole.k_tiles, units);
    sp.planned = whole.items < units && s >= 2 && (whole.k_tiles + s - 1) / s + tile_menu::kSplitFixupKTiles < whole.k_tiles;
  }
  return make_plan({m, n, k}, e.spec, sp, false, sms);
}

/// The menu's own rule for whether entry e takes C = A * B^T (m x n x k), past the rules every TMA
/// kernel of the family shares (K % 8 == 0, the schedule's tile limit: refusals.hpp's
/// tma_persistent_gemm_refusal, which menu.cu's steps apply after this one): a narrow swapped tile
/// (Entry::one_column) only where C^T is one tile column, M <= BN (step 27's rule: B, the large
/// operand, is then read once; past it each column of tiles reads all of B again). nullptr: it does.
inline const char* refusal(const Entry& e, int m, int n, int k) {
  if (m < 1 || n < 1 || k < 1) return "M, N and K must be at least 1";
  if (e.one_column && m > e.spec.bn) return "a narrow swapped tile is for M <= its width BN (C^T's one tile column)";
  return nullptr;
}

/// The menu entry whose configuration is `s` with the stages its shared memory holds (-1: none).
constexpr int entry_of(Spec s) {
  for (size_t i = 0; i < kBf16.size(); ++i)
    if (kBf16[i].spec == fit(s)) return int(i);
  return -1;
}

/// Step 28's hand rule on the menu's kernels, the baseline the measured dispatch must beat (step 29's
/// fallback and family/dispatch.hpp's yardstick): tile_menu::plan's tile and split, its 128 x 64 or
/// 128 x 128 tile or swapped tile of tile_menu::swap_bn(M) run as the menu's entry of that
/// configuration (its stages the most that fit), A and B read from copies at a padded pitch where
/// tile_menu::repack_pitch says.
inline Plan hand_plan(int m, int n, int k, int sms) {
  namespace hand = gemm::tile_menu;
  constexpr int wide = entry_of({.bn = 128}), narrow = entry_of({.bn = 64});
  constexpr int swapped[4] = {entry_of({.bn = 8, .swap = true}), entry_of({.bn = 16, .swap = true}),
                              entry_of({.bn = 32, .swap = true}), entry_of({.bn = 64, .swap = true})};
  static_assert(wide >= 0 && narrow >= 0 && swapped[0] >= 0 && swapped[1] >= 0 && swapped[2] >= 0 && swapped[3] >= 0,
                "step 28's tiles are on the menu");
  const hand::Plan mp = hand::plan(m, n, k, sms);
  const int w = hand::swap_bn(m);
  const int e = !mp.tile.swap ? (mp.tile.bn == 64 ? narrow : wide) : swapped[w == 8 ? 0 : w == 16 ? 1 : w == 32 ? 2 : 3];
  return make_plan({m, n, k}, kBf16[size_t(e)].spec, {.wave_limits = !mp.tile.swap, .split_k = true, .planned = mp.split},
                   hand::repack_pitch(m, n, k), sms);
}

}  // namespace gemm::family::menu
