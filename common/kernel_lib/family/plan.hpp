// The plan of one launch (steps 24 on): one value, computed once on the host from the shape, the
// configuration a step's policy chose and the SM count, that fixes everything the launch and the kernel
// need: the kernel's problem (swapped or not), the tile grid, the split of the tiles between whole
// tiles and stream-K or split-K pieces, the row pitch the kernel reads A and B at, and where each of
// those lives in the workspace. Step::workspace_bytes, the launcher (family/launch.cuh) and the kernel
// read it; none of them derives any of it again. Pure and host-and-device: tests/test_family.cpp checks
// it on the CPU, the split's arithmetic included.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../schedule.hpp"
#include "../stream_k.hpp"
#include "../tile_menu.hpp"
#include "config.hpp"

namespace gemm::family {

// The stream-K rule (steps 21 and 23, where it is taught and measured; the constants are theirs).
inline constexpr int kMinWaves = 4;      ///< with 1 .. kMinWaves - 1 full waves, no stream-K (23's measurement)
inline constexpr int kMinPiece = tile_menu::kMinPiece;  ///< a split block's fewest K tiles
inline constexpr int kFixupKTiles = 32;  ///< stream-K only where the idle SMs would idle for more than this many K tiles each (21)

/// Which split a step's policy allows (the split itself follows from the shape).
struct SplitPolicy {
  /// 23's wave limits: no stream-K with 1 .. min_waves - 1 full waves, and with fewer tiles than SMs
  /// only under a quarter wave. false: the idle-time rule alone (24's swapped path: bound by reading B,
  /// where an idle SM is a stream of B not read).
  bool wave_limits = true;
  /// 26: a grid under one wave (unswapped) splits K into tile_menu::split_factor equal segments per
  /// tile, one block each, instead of stream-K's even share, where `planned` or the quarter-wave rule says.
  bool split_k = false;
  bool planned = false;  ///< the menu's plan priced the split and chose it (tile_menu::plan)
  /// Stream-K of the last wave only where the split tiles' operand panels fit in L2 (kStreamKL2Bytes;
  /// the menu's unswapped entries, issue 46): a piece starts at its own K offset, so pieces of tiles
  /// that share a row of A or a column of B do not read it together, and where the panels do not fit
  /// L2 may not keep them until the next reader comes (measured at one shape, 1135 x 19936 x 21376: 174
  /// stream-K tiles of a 128 x 256 tile read 3.5 GB from DRAM where cuBLAS read 1.3,
  /// docs/notebook/hopper.md). A coarse rule: how far apart in K the sharing pieces run decides, not
  /// the panels' size alone.
  bool l2_fit = false;
  /// The wave limits' fewest full waves for stream-K (kMinWaves, 23's rule on its ping-pong 128 x 128
  /// tile; an entry may ask for fewer: menu.hpp's GEMM_FAMILY_COOP_MIN_WAVES).
  int min_waves = kMinWaves;
};

/// The split of `tiles` tiles of `k_tiles` K tiles on `sms` SMs under `p`: the one rule of steps 24 on.
/// Where the SMs the last wave leaves idle would idle for more than kFixupKTiles K tiles each, stream-K
/// takes the last wave (stream_k::make_split), within the wave limits unless p drops them; under one
/// wave with p.split_k, equal split-K segments where p.planned or the quarter-wave rule says so.
/// `segments` (if given) is set to the split-K's segments per tile, 0 where the split is not split-K.
inline stream_k::Split choose_split(int64_t tiles, int64_t k_tiles, int sms, SplitPolicy p, int64_t* segments = nullptr) {
  if (segments) *segments = 0;
  const int64_t waves = tiles / sms, rest = tiles % sms;
  const bool idle = rest > 0 && (sms - rest) * k_tiles > int64_t(sms) * kFixupKTiles;
  const bool quarter = waves == 0 && 4 * tiles <= sms;
  if (p.split_k && p.wave_limits && waves == 0) {
    const int64_t s = tile_menu::split_factor(tiles, k_tiles, sms);
    if (s >= 2 && (p.planned || (quarter && idle))) {
      if (segments) *segments = s;
      return stream_k::make_split_k(tiles, k_tiles, s);
    }
    return stream_k::make_split(tiles, k_tiles, sms, false, kMinPiece);
  }
  const bool worth_it = idle && (!p.wave_limits || waves >= p.min_waves || quarter);
  return stream_k::make_split(tiles, k_tiles, sms, worth_it, kMinPiece);
}

/// The L2 a stream-K grid's pieces may count on to share their operands (SplitPolicy::l2_fit): the
/// H100's 50 MiB, the smaller of the two GPUs the project measures (the H200 has 60).
inline constexpr int64_t kStreamKL2Bytes = int64_t(50) << 20;

/// C = A * B^T: A m x k, B n x k, C m x n (m, n, k >= 1).
struct Shape {
  int m, n, k;
};

/// One launch, fully decided.
struct Plan {
  Spec spec;              ///< the configuration the policy chose (its kernel runs)
  Shape shape;            ///< C's problem
  int km, kn;             ///< the kernel's M and N: C's, or C^T's (n, m) when spec.swap
  int tiles_m, tiles_n;   ///< spec.bm x spec.bn tiles over km x kn
  int k_tiles;            ///< ceil(k / BK)
  int items;              ///< what the split shares out: tiles, or cluster tiles (a cluster's CLUSTER_M x CLUSTER_N tiles)
  /// split.blocks is the grid's units: blocks, or clusters of cluster_size(spec) blocks; its pointers
  /// are set by the launcher (launch.cuh)
  stream_k::Split split;
  int64_t pitch;          ///< row pitch, in elements, of the A and B the kernel reads (0: k, unpadded)
  int l2_promotion_bytes; ///< L2 promotion of A's and B's tensor maps (TmaMatrix; 0: the default, 256)
  /// spec.parallel_reduce with a split-K grid: its segments per tile, s (>= 2); each piece stores its
  /// sums to slice (unit % s) of s fp32 km x kn slices, and family/reduce.cuh sums them into C. 0: the
  /// split, if any, sums its pieces in the fixup.
  int reduce_segments;
  // The workspace, in bytes from its base: the split's fp32 slots, its arrival counters (or, where
  // reduce_segments > 0, the reduction's slices and no counters), then (pitch != 0)
  // the copies of A (m x pitch, 256-byte aligned) and B (n x pitch, right after A: a whole number of
  // 128-byte rows, so as aligned as TMA needs).
  size_t split_bytes, counters_offset, copy_a_offset, copy_b_offset, workspace_bytes;
};

/// The most K tiles any unit of plan `p` runs: its rounds of whole tiles (block b of P runs tiles b,
/// b + P, ...) and its range of the split's iterations, the longest of which is ceil(iters / P)
/// (stream_k::Split::start). A model of a grid's time where each K tile costs the same, which
/// dispatch::efficiency prices a plan by. It leaves out what a split adds: an even share of a decode
/// grid shortened this and ran slower (docs/notebook/fp8.md, "An even share of a decode GEMM's K").
inline int64_t busiest_k_tiles(const Plan& p) {
  const stream_k::Split& s = p.split;
  const int64_t units = s.blocks < 1 ? 1 : s.blocks;
  return (s.dp_tiles + units - 1) / units * p.k_tiles + (s.iters + units - 1) / units;
}

/// Bytes of a parallel reduction's slices: reduce_segments fp32 slices of the kernel's km x kn.
inline size_t reduce_bytes(const Plan& p) {
  return size_t(p.reduce_segments) * size_t(p.km) * size_t(p.kn) * sizeof(float);
}

/// Bytes of A and B, whole K, that the split tiles of plan p cover: the distinct rows of A (tile rows
/// x BM) and of B (tile columns x BN) of items dp_tiles .. items - 1 in the kernel's grouped order
/// (schedule::grouped over cluster tiles, kGroupM / cluster_m cluster rows a group, as the producer
/// walks them), capped at the matrix, times K and the element's bytes; a ragged last tile row or column
/// counts whole below the cap (an overcount of at most one tile's rows). 0 when nothing is split.
/// Closed form over the groups the range touches (a group's items walk its rows down, then across: a
/// stretch of q items covers min(q, rows) rows and the columns from its first item's to its last's),
/// so a plan costs no walk over its items (tests/test_family.cpp checks it against one).
inline int64_t split_panel_bytes(const Plan& p) {
  if (p.split.sk_tiles == 0) return 0;
  const Spec& s = p.spec;
  const int64_t ctm = (p.tiles_m + s.cluster_m - 1) / s.cluster_m, ctn = (p.tiles_n + s.cluster_n - 1) / s.cluster_n;
  const int64_t group = kGroupM / s.cluster_m < 1 ? 1 : kGroupM / s.cluster_m, per = group * ctn;
  const int64_t a = p.split.dp_tiles, b = p.items;  // the split items, [a, b)
  const int64_t g0 = a / per, g1 = (b - 1) / per;
  int64_t rows = 0, first_col = 0, last_col = 0;
  for (int64_t g = g0; g <= g1; ++g) {
    const int64_t h = std::min(group, ctm - g * group);  // the group's rows (the last may be short)
    const int64_t la = std::max(a, g * per) - g * per, lb = std::min(b, (g + 1) * per) - g * per;
    rows += std::min(lb - la, h);
    if (g == g0) first_col = la / h;
    if (g == g1) last_col = (lb - 1) / h;
  }
  // Columns: one group's stretch is [first_col, last_col]; over two, the first's [first_col, ctn) and
  // the last's [0, last_col], which may overlap; over three or more, a whole group between covers all.
  const int64_t cols = g0 == g1       ? last_col - first_col + 1
                       : g1 - g0 >= 2 ? ctn
                                      : std::min(ctn, (ctn - first_col) + (last_col + 1));
  const int64_t a_rows = std::min<int64_t>(rows * s.cluster_m * s.bm, p.km), b_rows = std::min<int64_t>(cols * s.cluster_n * s.bn, p.kn);
  return (a_rows + b_rows) * int64_t(p.shape.k) * elem_bytes(s);
}

/// K rounded up to a whole K tile (one 128-byte row per K tile): the pitch of step 28's copies.
inline int64_t padded_pitch(int64_t k, Spec s) { return (k + bk(s) - 1) / bk(s) * bk(s); }

inline size_t round_up_256(size_t b) { return (b + 255) / 256 * 256; }

/// The plan for `sh` run with configuration `spec` under split policy `sp` on `sms` SMs; `pad`: read A
/// and B from copies at padded_pitch (step 28). sms < 1 counts as 1. With a cluster the split shares
/// cluster tiles out over sms / cluster_size units (a GPC whose SM count is odd may hold fewer
/// clusters at once, so a launcher passes the SMs the clusters that fit cover, as menu.cu does; units
/// past that run after the others: slower, never wrong, as no unit waits for another).
inline Plan make_plan(Shape sh, Spec spec, SplitPolicy sp, bool pad, int sms) {
  Plan p{};
  p.spec = spec;
  p.shape = sh;
  p.km = spec.swap ? sh.n : sh.m;
  p.kn = spec.swap ? sh.m : sh.n;
  p.tiles_m = (p.km + spec.bm - 1) / spec.bm;
  p.tiles_n = (p.kn + spec.bn - 1) / spec.bn;
  p.k_tiles = (sh.k + bk(spec) - 1) / bk(spec);
  const int64_t ctm = (p.tiles_m + spec.cluster_m - 1) / spec.cluster_m, ctn = (p.tiles_n + spec.cluster_n - 1) / spec.cluster_n;
  p.items = int(ctm * ctn);
  const int units = std::max(1, (sms < 1 ? 1 : sms) / cluster_size(spec));
  int64_t segments = 0;
  p.split = choose_split(p.items, p.k_tiles, units, sp, &segments);
  // The last wave's stream-K only where its tiles' panels fit in L2 (SplitPolicy::l2_fit): else whole tiles.
  if (sp.l2_fit && p.split.dp_tiles > 0 && split_panel_bytes(p) > kStreamKL2Bytes)
    p.split = stream_k::make_split(p.items, p.k_tiles, units, false, kMinPiece);
  p.reduce_segments = spec.parallel_reduce ? int(segments) : 0;
  p.pitch = pad ? padded_pitch(sh.k, spec) : 0;
  if (p.reduce_segments > 0) {
    p.split_bytes = reduce_bytes(p);
    p.counters_offset = 0;
  } else {
    p.split_bytes = stream_k::workspace_bytes(p.split, slot_floats(spec), counters_per_tile(spec));
    p.counters_offset = p.split_bytes > 0 ? stream_k::slots_bytes(p.split, slot_floats(spec)) : 0;
  }
  const size_t row = size_t(p.pitch) * size_t(elem_bytes(spec));
  p.copy_a_offset = pad ? round_up_256(p.split_bytes) : 0;
  p.copy_b_offset = pad ? p.copy_a_offset + size_t(sh.m) * row : 0;
  p.workspace_bytes = pad ? p.copy_b_offset + size_t(sh.n) * row : p.split_bytes;
  return p;
}

/// A split tile's fixup priced by its bytes (step 41), in K tiles: the tile's BM x BN fp32 partials
/// written and read back, in `spec`'s stages' bytes, rounded up. e4m3: a swapped 64 x 16 tile 1, 64 x
/// 32 and 64 x 64 2, an unswapped 128 x 128 4; against 21's kFixupKTiles (32), which was measured on a
/// bf16 128 x 128 tile and so holds the waits a piece spends on its partners too (bytes alone do not).
constexpr int fixup_k_tiles(Spec spec) {
  const int64_t partial = int64_t(spec.bm) * spec.bn * 4;
  return int((2 * partial + stage_bytes(spec) - 1) / stage_bytes(spec));
}

/// FP8's shape rule (steps 35 on): whether `spec`'s grid for `sh` on `sms` SMs is planned split under
/// one wave: into s = tile_menu::split_factor equal segments (s >= 2) where a segment plus the fixup's
/// price (`fixup_k_tiles`, 21's kFixupKTiles unless the step prices it) is shorter than the whole K.
/// The policy passes the answer as SplitPolicy::planned. The tiles are the kernel's (of C^T where
/// spec.swap), as make_plan lays them out.
inline bool split_pays(Shape sh, Spec spec, int sms, int fixup_k_tiles = kFixupKTiles) {
  const Plan g = make_plan(sh, spec, {}, false, sms);  // (its geometry only)
  const int64_t tiles = int64_t(g.tiles_m) * g.tiles_n;
  const int64_t s = tile_menu::split_factor(tiles, g.k_tiles, sms);
  return tiles < sms && s >= 2 && (g.k_tiles + s - 1) / s + fixup_k_tiles < g.k_tiles;
}

}  // namespace gemm::family
