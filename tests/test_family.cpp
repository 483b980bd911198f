// The family's host side (common/kernel_lib/family/, steps 24 on) on the CPU: the one split rule
// (choose_split) at the worked examples of steps 21-26 and as a partition of every split tile's K tiles
// on random shapes; the plan (make_plan): the kernel's problem, tile grid, pitch and workspace layout;
// and which Specs the parts can assemble.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <tuple>
#include <utility>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <random>
#include <vector>

#include "../common/kernel_lib/family/dispatch.hpp"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/family/menu_steps.hpp"
#include "../common/kernel_lib/family/plan.hpp"
#include "../common/kernel_lib/family/promotion.hpp"
#include "../common/kernel_lib/family/tuned_bf16.hpp"
#include "../common/kernel_lib/swizzle.hpp"
#include "support.hpp"

using namespace gemm::family;
using gemm::stream_k::Split;
namespace stream_k = gemm::stream_k;
namespace swizzle = gemm::swizzle;

namespace {
constexpr Spec kWide{}, kNarrow{.bn = 64}, kSwapped8{.bn = 8, .swap = true};
constexpr Spec kFp8{.elem = Elem::e4m3, .scales = Scales::per_tensor};
constexpr Spec kFp8Coop{.elem = Elem::e4m3, .consumers = Consumers::cooperative, .accum = Accum::two_sets, .scales = Scales::block};

// Every split tile's K tiles [0, k_tiles) are covered exactly once by the blocks' ranges [start(b),
// start(b + 1)) of iters, and block_of names the block whose range holds each K tile: what the kernel's
// stream_k::Walk and the fixup (c_first, c_last) rely on.
void check_partition(const Split& s, int64_t k_tiles) {
  REQUIRE(s.dp_tiles + s.sk_tiles == s.tiles);
  REQUIRE(s.iters == int64_t(s.sk_tiles) * k_tiles);
  REQUIRE(s.blocks >= 1);
  if (s.sk_tiles == 0) return;
  REQUIRE(s.start(0) == 0);
  REQUIRE(s.start(s.blocks) == s.iters);
  for (int b = 0; b < s.blocks; ++b) {
    REQUIRE(s.start(b) <= s.start(b + 1));
    if (s.start(b) < s.start(b + 1)) {
      REQUIRE(s.block_of(s.start(b)) == b);
      REQUIRE(s.block_of(s.start(b + 1) - 1) == b);
    }
  }
}
}  // namespace

TEST_CASE("family split: the worked examples of steps 21-26", "[cpu][family]") {
  // 8192^3, 128 x 128: 4096 tiles, 31 waves and 4 on 132 SMs; the idle SMs would wait 128 x 128 K tiles,
  // more than 132 x 32: stream-K takes the partial wave and one full one (4 < 66).
  Split s = choose_split(4096, 128, 132, {});
  CHECK(s.sk_tiles == 136);
  CHECK(s.blocks == 132);
  // 4096^3: 1024 tiles, 100 in the last wave; 32 idle SMs x 64 K tiles = 2048 < 4224: whole tiles.
  s = choose_split(1024, 64, 132, {});
  CHECK(s.sk_tiles == 0);
  CHECK(s.blocks == 132);
  // 23's wave limits: 2 full waves and a few tiles is never split, however long K is ...
  CHECK(choose_split(2 * 132 + 3, 4096, 132, {}).sk_tiles == 0);
  // ... but the swapped path (24) keeps only the idle rule: 16 x 8192 x 8192 is 64 tiles of C^T of 128 K
  // tiles, shared out over all 132 SMs (min(132, 64 x 128 / 4) blocks).
  s = choose_split(64, 128, 132, {.wave_limits = false});
  CHECK(s.sk_tiles == 64);
  CHECK(s.blocks == 132);
  CHECK(choose_split(64, 128, 132, {}).sk_tiles == 0);  // 23's rule: 64 tiles are over a quarter wave
  // Step 26: below a wave, split-K in floor(132 / tiles) equal segments where the menu planned it:
  // 1024 x 1024 x 65536 is 64 tiles of 1024 K tiles, 2 segments each on 128 blocks.
  s = choose_split(64, 1024, 132, {.split_k = true, .planned = true});
  CHECK(s.sk_tiles == 64);
  CHECK(s.dp_tiles == 0);
  CHECK(s.blocks == 128);
  CHECK(s.start(1) == 512);  // every block starts at a segment boundary
  CHECK(choose_split(64, 1024, 132, {.split_k = true}).sk_tiles == 0);  // not planned, over a quarter wave
  // Under a quarter wave the idle rule splits even unplanned (25's rule, kept by 26): 30 tiles, 4 each.
  s = choose_split(30, 1024, 132, {.split_k = true});
  CHECK(s.sk_tiles == 30);
  CHECK(s.blocks == 120);
  // 192 tiles of 12 K tiles (N = 24576, K = 1536) over a wave: 23's rule runs them in two rounds (the
  // idle SMs' 72 x 12 K tiles are under 132 x 32).
  CHECK(choose_split(192, 12, 132, {.split_k = true}).sk_tiles == 0);
}

TEST_CASE("family plan: the busiest unit's K tiles of step 37's decode plans", "[cpu][family]") {
  // Step 37's 64-row tile (BN = 128, BK = 128 one-byte elements) at M = 16 on 132 SMs: the busiest SM's
  // K tiles under the split its rule picks (the table in docs/notebook/fp8.md's even-share entry).
  const Spec shrt{.elem = Elem::e4m3, .accum = Accum::two_sets, .scales = Scales::per_tensor, .stages = 8, .bm = 64};
  REQUIRE(refusal(shrt) == nullptr);
  const auto step37 = [&](int n, int k, bool split) {
    return make_plan({16, n, k}, shrt, {.wave_limits = true, .split_k = true, .planned = split}, false, 132);
  };
  struct Case { int n, k; bool split37; int64_t blocks37, busiest37; };
  for (const Case c : {Case{4096, 4096, false, 32, 32},     // 32 tiles of 32 K tiles: too short to split
                       Case{7168, 16384, true, 112, 64},    // 56 tiles of 128, two segments each
                       Case{24576, 1536, false, 132, 24},   // 192 tiles of 12: two rounds
                       Case{2112, 7168, true, 119, 8}}) {   // 17 tiles of 56, seven segments
    INFO("16 x " << c.n << " x " << c.k);
    CHECK(split_pays({16, c.n, c.k}, shrt, 132) == c.split37);  // 35's rule, as the steps ask it
    const Plan a = step37(c.n, c.k, c.split37);
    CHECK(a.split.blocks == c.blocks37);
    CHECK(busiest_k_tiles(a) == c.busiest37);
  }
  // A swapped tile counts the kernel's tiles, those of C^T: 64 rows of N by 16 of M at 16 x 4096 x 14336
  // are 64 tiles of 112 K tiles, which split in two (C's 1 x 256 tiles of 64 x 16 would not).
  const Spec swap16{.elem = Elem::e4m3, .bn = 16, .swap = true, .accum = Accum::two_sets, .scales = Scales::per_tensor,
                    .stages = 8, .bm = 64};
  REQUIRE(refusal(swap16) == nullptr);
  CHECK(split_pays({16, 4096, 14336}, swap16, 132));
  CHECK(make_plan({16, 4096, 14336}, swap16, {.split_k = true, .planned = true}, false, 132).split.blocks == 128);
  CHECK(!split_pays({16, 7168, 16384}, swap16, 132));  // 112 tiles: no second segment fits 132 SMs
  // Step 41's fixup priced by its bytes (split_pays' price): 64 tiles of 64 x 64 at 64 x 4096 x 7168 do
  // not split at 21's 32 K tiles (28 + 32 > 56) and do at 2, into 128 blocks of 28 K tiles; 112 tiles
  // of 64 x 16 at 16 x 7168 x 16384 do not at any price (no second segment fits 132 SMs).
  const Spec swap64{.elem = Elem::e4m3, .bn = 64, .swap = true, .accum = Accum::two_sets, .scales = Scales::block,
                    .stages = 8, .bm = 64};
  CHECK(!split_pays({64, 4096, 7168}, swap64, 132));
  CHECK(split_pays({64, 4096, 7168}, swap64, 132, 2));
  const Plan halves = make_plan({64, 4096, 7168}, swap64, {.split_k = true, .planned = true}, false, 132);
  CHECK(halves.split.blocks == 128);
  CHECK(busiest_k_tiles(halves) == 28);
  CHECK(!split_pays({16, 7168, 16384}, swap16, 132, 1));
  // The price by bytes (family::fixup_k_tiles): 2 x 64 x W x 4 bytes of partials over a stage's bytes, rounded up.
  const auto swapped = [](int w) {
    return menu::fit({.elem = Elem::e4m3, .bn = w, .swap = true, .accum = Accum::two_sets, .scales = Scales::block, .bm = 64});
  };
  CHECK(fixup_k_tiles(swapped(16)) == 1);  // 8 KB of partials over a (64 + 16) x 128-byte stage
  CHECK(fixup_k_tiles(swapped(32)) == 2);
  CHECK(fixup_k_tiles(swapped(64)) == 2);  // 32 KB over 16 KB
  CHECK(fixup_k_tiles(Spec{.elem = Elem::e4m3, .consumers = Consumers::cooperative, .accum = Accum::two_sets,
                           .scales = Scales::block}) == 4);  // 128 KB over 32 KB
  // A whole grid: the rounds of whole tiles times K tiles, nothing split.
  const Plan whole = make_plan({16, 264 * 128, 4096}, shrt, {}, false, 132);
  CHECK(whole.split.sk_tiles == 0);
  CHECK(busiest_k_tiles(whole) == 2 * 32);
}

TEST_CASE("family split: every split tile's K tiles covered once, on random shapes and policies", "[cpu][family]") {
  std::mt19937 rng(20261204);
  int split = 0;
  for (int i = 0; i < 20000; ++i) {
    const int sms = std::uniform_int_distribution<int>(1, 144)(rng);
    const int64_t tiles = std::uniform_int_distribution<int64_t>(1, 3 * sms + 5)(rng);
    const int64_t k_tiles = std::uniform_int_distribution<int64_t>(1, 2048)(rng);
    const SplitPolicy p{.wave_limits = (i & 1) != 0, .split_k = (i & 2) != 0, .planned = (i & 4) != 0};
    const Split s = choose_split(tiles, k_tiles, sms, p);
    INFO(tiles << " tiles of " << k_tiles << " K tiles on " << sms << " SMs, policy " << (i & 7));
    REQUIRE(s.tiles == tiles);
    REQUIRE(s.blocks <= std::max<int64_t>(sms, tiles));
    check_partition(s, k_tiles);
    split += s.sk_tiles > 0;
  }
  CHECK(split > 1000);  // the draw reaches the split paths, not only whole tiles
}

TEST_CASE("family plan: the kernel's problem, grid and K tiles", "[cpu][family]") {
  const Plan wide = make_plan({4096, 4096, 4096}, kWide, {}, false, 132);
  CHECK(wide.km == 4096);
  CHECK(wide.tiles_m * wide.tiles_n == 1024);
  CHECK(wide.k_tiles == 64);
  CHECK(wide.split.blocks == 132);
  CHECK(wide.workspace_bytes == 0);
  // Swapped, the kernel's M is C's N and its N is C's M (C^T's tiles).
  const Plan sw = make_plan({5, 1000, 4104}, kSwapped8, {.wave_limits = false}, false, 132);
  CHECK(sw.km == 1000);
  CHECK(sw.kn == 5);
  CHECK(sw.tiles_m == 8);
  CHECK(sw.tiles_n == 1);
  CHECK(sw.k_tiles == 65);  // K tiles of 64 bf16, the last one 8 wide
  // e4m3: K tiles of 128 one-byte elements.
  CHECK(make_plan({8192, 8192, 8192}, kFp8, {}, false, 132).k_tiles == 64);
  CHECK(make_plan({100, 100, 129}, kFp8, {}, false, 132).k_tiles == 2);
}

TEST_CASE("family plan: the workspace holds the split's slots and counters, then the padded copies", "[cpu][family]") {
  // 8192^3 split: 2P slots of 128 x 128 fp32, then one counter per split tile (ping-pong: per tile).
  const Plan p = make_plan({8192, 8192, 8192}, kWide, {}, false, 132);
  CHECK(p.split_bytes == size_t(2) * 132 * 128 * 128 * 4 + 136 * 4);
  CHECK(p.counters_offset == size_t(2) * 132 * 128 * 128 * 4);  // the counters right after the slots
  CHECK(p.workspace_bytes == p.split_bytes);
  // Cooperative consumers count each slab's pieces: two counters per split tile.
  const Plan c = make_plan({8192, 8192, 8192}, kFp8Coop, {}, false, 132);
  CHECK(c.split.sk_tiles > 0);
  CHECK(c.split_bytes == size_t(2) * 132 * 128 * 128 * 4 + size_t(c.split.sk_tiles) * 2 * 4);
  // A narrower swapped tile's slots shrink with it (step 27): n8 against n64.
  const Plan n8 = make_plan({8, 4096, 8192}, kSwapped8, {.wave_limits = false}, false, 132);
  const Plan n64 = make_plan({8, 4096, 8192}, Spec{.bn = 64, .swap = true}, {.wave_limits = false}, false, 132);
  CHECK(n8.split.sk_tiles == n64.split.sk_tiles);
  CHECK((n64.split_bytes - 32 * 4) == 8 * (n8.split_bytes - 32 * 4));
  // Step 28's copies: A (m x pitch, 256-byte aligned) and B (n x pitch) right after it, after the split;
  // the pitch K rounded up to a whole K tile (64 bf16; 128 e4m3).
  for (const auto& [m, n, k] : {std::tuple{2900, 2900, 2120}, {3100, 3100, 1800}, {1, 7, 8}}) {
    INFO(m << " x " << n << " x " << k);
    for (const Spec s : {kWide, kFp8}) {
      const Plan q = make_plan({m, n, k}, s, {}, true, 132);
      const int eb = elem_bytes(s), bk_elems = 128 / eb;
      CHECK(q.pitch % bk_elems == 0);
      CHECK(q.pitch >= k);
      CHECK(q.pitch < k + bk_elems);
      CHECK(q.copy_a_offset >= q.split_bytes);
      CHECK(q.copy_a_offset % 256 == 0);
      CHECK(q.copy_b_offset == q.copy_a_offset + size_t(m) * q.pitch * eb);  // right after A's rows
      CHECK(q.copy_b_offset % 128 == 0);                                    // whole 128-byte rows: TMA's 16 hold
      CHECK(q.workspace_bytes == q.copy_b_offset + size_t(n) * q.pitch * eb);
    }
  }
  CHECK(make_plan({2900, 2900, 2120}, kWide, {}, true, 132).split_bytes > 0);  // 529 tiles: 4 waves and 1, split
  CHECK(make_plan({100, 100, 100}, kWide, {}, false, 132).pitch == 0);
}

TEST_CASE("step 39's L2 promotion: 128 bytes where the rows read in place start inside a sector", "[cpu][family]") {
  CHECK(make_plan({4096, 4096, 4104}, kWide, {}, false, 132).l2_promotion_bytes == 0);  // the plan's default: 256
  for (const auto& [m, n, k, want] : {std::tuple{4096, 4096, 4104, 128},  // K % 16 == 8: every other row inside a sector
                                      {1, 16048, 14232, 128},             // M = 1 too (the rule does not look at M)
                                      {33, 4096, 1448, 128},
                                      {4096, 4096, 4112, 0},              // 32-byte rows off a 128-byte line: 256
                                      {4096, 4096, 4096, 0},
                                      {7, 448, 8, 128}}) {
    INFO(m << " x " << n << " x " << k);
    CHECK(misaligned_l2_promotion(make_plan({m, n, k}, kWide, {}, false, 132)) == want);
    CHECK(misaligned_l2_promotion(make_plan({m, n, k}, kWide, {}, true, 132)) == 0);  // step 28's copy: aligned rows
  }
  // e4m3 rows are K bytes: inside a sector where K % 32 != 0 (the FP8 steps' K % 16 == 0 leaves K % 32 == 16).
  CHECK(misaligned_l2_promotion(make_plan({4096, 4096, 4112}, kFp8, {}, false, 132)) == 128);
  CHECK(misaligned_l2_promotion(make_plan({4096, 4096, 4128}, kFp8, {}, false, 132)) == 0);
}

TEST_CASE("family plan: a parallel reduction's slices take the fixup's place where K is split", "[cpu][family]") {
  const Spec quad{.bn = 128, .cluster_m = 2, .cluster_n = 2}, quad_psk{.bn = 128, .cluster_m = 2, .cluster_n = 2, .parallel_reduce = true};
  CHECK(refusal(quad_psk) == nullptr);
  CHECK(refusal(Spec{.bn = 16, .swap = true, .parallel_reduce = true}) != nullptr);  // a swapped tile's split keeps the fixup
  CHECK(menu::name(menu::fit(quad_psk)) == "pp128x128-c2x2-psk-s6");
  // 256 x 256 x 16384 on 132 SMs: one 2 x 2 cluster tile, 33 units, split-K into 33 segments of 8 K tiles.
  const SplitPolicy planned{.wave_limits = true, .split_k = true, .planned = true};
  const Plan r = make_plan({256, 256, 16384}, quad_psk, planned, false, 132);
  const Plan f = make_plan({256, 256, 16384}, quad, planned, false, 132);
  CHECK(r.reduce_segments == 33);
  CHECK(r.split.blocks == 33);
  CHECK(r.split.dp_tiles == 0);
  CHECK(f.reduce_segments == 0);
  CHECK(f.split.blocks == r.split.blocks);  // the same split; only where its pieces meet differs
  CHECK(r.split_bytes == size_t(33) * 256 * 256 * 4);  // 33 fp32 slices of C, no counters
  CHECK(r.counters_offset == 0);
  CHECK(r.workspace_bytes == r.split_bytes);
  CHECK(f.split_bytes == size_t(2) * 33 * 4 * 128 * 128 * 4 + size_t(4) * 4);  // 2P slots of four tiles, four counters
  // Priced without the fixup's kFixupKTiles, with the slices' bytes and a launch: better here.
  CHECK(dispatch::efficiency(r, 132) > dispatch::efficiency(f, 132));
  // Where the grid is not split-K (many tiles: stream-K, or whole tiles) the entry is its twin.
  for (const auto& [m, n, k] : {std::tuple{4096, 4096, 4096}, {8192, 8192, 8192}, {256, 256, 256}}) {
    CAPTURE(m, n, k);
    const Plan a = make_plan({m, n, k}, quad_psk, planned, false, 132), b = make_plan({m, n, k}, quad, planned, false, 132);
    CHECK(a.reduce_segments == 0);
    CHECK(a.split_bytes == b.split_bytes);
    CHECK(a.split.blocks == b.split.blocks);
  }
  // Every -psk entry of the menu has its twin there, and a grid of two tiles with a long K reduces.
  int psk = 0;
  for (size_t i = 0; i < menu::kBf16.size(); ++i) {
    const Spec s = menu::kBf16[i].spec;
    if (!s.parallel_reduce) continue;
    ++psk;
    Spec t = s;
    t.parallel_reduce = false;
    INFO(menu::name(s));
    CHECK(menu::entry_of(t) >= 0);
    CHECK(menu::plan(menu::kBf16[i], 2 * s.bm * s.cluster_m, 2 * s.bn * s.cluster_n, 32768, 132).reduce_segments >= 2);
  }
  CHECK(psk == 4);  // pp64x64, co128x128, co128x256, pp128x128-c2x2
}

TEST_CASE("family plan: the menu's stream-K only where the split tiles' panels fit in L2", "[cpu][family]") {
  const SplitPolicy steps{.wave_limits = true, .split_k = true}, menu_rule{.wave_limits = true, .split_k = true, .l2_fit = true};
  const Spec co256{.bn = 256, .consumers = Consumers::cooperative, .stages = 4};
  // 1135 x 19936 x 21376 on a 128 x 256 tile: 9 x 78 = 702 tiles, 5 waves and 42; stream-K takes 174
  // tiles, whose 9 tile rows and 20 tile columns are 1152 + 5120 rows of 21376 bf16: 268 MB, past L2.
  const Plan sk = make_plan({1135, 19936, 21376}, co256, steps, false, 132);
  CHECK(sk.split.sk_tiles == 174);
  CHECK(split_panel_bytes(sk) == int64_t(1135 + 5120) * 21376 * 2);  // A's 9 tile rows are M's 1135
  const Plan whole = make_plan({1135, 19936, 21376}, co256, menu_rule, false, 132);
  CHECK(whole.split.sk_tiles == 0);
  CHECK(whole.split.blocks == 132);
  CHECK(whole.split_bytes == 0);
  // 6144^3 on 128 x 128: 2304 tiles, 17 waves and 60, so stream-K takes 192; in the grouped order they
  // are the last group's 16 tile rows and 12 columns: 3584 rows of 6144, 44 MB, which fit: it stays.
  const Plan sq = make_plan({6144, 6144, 6144}, kWide, menu_rule, false, 132);
  CHECK(sq.split.sk_tiles == 192);
  CHECK(split_panel_bytes(sq) == int64_t(16 * 128 + 12 * 128) * 6144 * 2);
  CHECK(split_panel_bytes(sq) <= kStreamKL2Bytes);
  // Split-K under one wave is not stream-K of a last wave: its segments walk K together.
  CHECK(make_plan({256, 256, 16384}, kWide, {.wave_limits = true, .split_k = true, .planned = true, .l2_fit = true}, false, 132).split.sk_tiles > 0);
  // The closed form against a walk over the split items in the kernel's order, on random shapes and
  // every entry but the narrow swapped ones (clusters and wide swapped tiles included), on 132 and 120 SMs.
  std::mt19937 rng(46);
  int walked = 0;
  for (int i = 0; i < 3000; ++i) {
    const int m = 1 + int(rng() % 20000), n = 1 + int(rng() % 20000), k = 8 * (1 + int(rng() % 4000));
    const menu::Entry& e = menu::kBf16[rng() % menu::kBf16.size()];
    if (e.one_column) continue;
    const Plan pl = make_plan({m, n, k}, e.spec, steps, false, rng() % 2 ? 132 : 120);
    if (pl.split.sk_tiles == 0) continue;
    const Spec& sp = pl.spec;
    const int ctm = (pl.tiles_m + sp.cluster_m - 1) / sp.cluster_m, ctn = (pl.tiles_n + sp.cluster_n - 1) / sp.cluster_n;
    std::vector<bool> row(size_t(ctm), false), col(size_t(ctn), false);
    int64_t rows = 0, cols = 0;
    for (int t = pl.split.dp_tiles; t < pl.items; ++t) {
      const gemm::schedule::TileCoord c = gemm::schedule::grouped(t, ctm, ctn, kGroupM / sp.cluster_m);
      if (!row[size_t(c.m)]) row[size_t(c.m)] = true, ++rows;
      if (!col[size_t(c.n)]) col[size_t(c.n)] = true, ++cols;
    }
    const int64_t want = (std::min<int64_t>(rows * sp.cluster_m * sp.bm, pl.km) + std::min<int64_t>(cols * sp.cluster_n * sp.bn, pl.kn)) *
                         int64_t(k) * elem_bytes(sp);
    CAPTURE(m, n, k, menu::name(sp), pl.split.dp_tiles, pl.items);
    CHECK(split_panel_bytes(pl) == want);
    ++walked;
  }
  CHECK(walked > 300);
  // The menu's unswapped and wide swapped entries take the rule, its narrow swapped ones (step 24's
  // idle rule) and the hand rule (steps 24-28) do not.
  for (const menu::Entry& e : menu::kBf16) {
    INFO(menu::name(e.spec));
    CHECK(e.split.l2_fit == !e.one_column);
    CHECK((e.one_column && !e.spec.swap) == false);
  }
  CHECK(menu::hand_plan(1135, 19936, 21376, 132).split.sk_tiles > 0);
}

TEST_CASE("family plan: an SM count below 1 counts as 1", "[cpu][family]") {
  const Plan p = make_plan({1000, 1000, 1000}, kWide, {}, false, 0);
  CHECK(p.split.blocks == 1);
  check_partition(p.split, p.k_tiles);
}

TEST_CASE("family config: which Specs the parts assemble, and their shared memory", "[cpu][family]") {
  for (const Spec s : {kWide, kNarrow, kSwapped8, kFp8, kFp8Coop, Spec{.bn = 16, .swap = true},
                       Spec{.bn = 256, .consumers = Consumers::cooperative, .stages = 4}, Spec{.bn = 8}, Spec{.bn = 96},
                       Spec{.bn = 64, .bm = 64}, Spec{.bn = 160, .consumers = Consumers::cooperative, .stages = 3, .bm = 256}}) {
    INFO(menu::name(s));
    CHECK(refusal(s) == nullptr);
    CHECK(smem_bytes(s) <= 227 * 1024);
  }
  // 6 stages of 128 x 64 + 128 x 64 bf16 (32 KB), four 8 KB epilogue boxes, the barriers, the slack.
  CHECK(smem_bytes(kWide) == 6 * 32768 + 4 * 8192 + 1024 + 1024);
  // A tile whose BN is not a multiple of 64 is stored in narrower boxes: 64 x 32 at BN = 96 (4 KB each).
  CHECK(epi_n(Spec{.bn = 96}) == 32);
  CHECK(epi_n(Spec{.bn = 80}) == 16);
  CHECK(epi_n(Spec{.bn = 56}) == 8);
  CHECK(smem_bytes(Spec{.bn = 96}) == 6 * (128 + 96) * 128 + 4 * 4096 + 1024 + 1024);
  CHECK(refusal(Spec{.bn = 12}) != nullptr);                         // wgmma N is a multiple of 8
  CHECK(refusal(Spec{.bn = 264}) != nullptr);                        // ... at most 256
  CHECK(refusal(Spec{.accum = Accum::promoted}) != nullptr);         // bf16 is not promoted
  CHECK(refusal(Spec{.elem = Elem::e4m3}) != nullptr);               // e4m3 needs scales
  CHECK(refusal(Spec{.elem = Elem::e4m3, .accum = Accum::two_sets, .scales = Scales::block}) != nullptr);  // two sets: one slab a consumer
  CHECK(refusal(Spec{.elem = Elem::e4m3, .accum = Accum::two_sets, .scales = Scales::block, .stages = 4, .bm = 64}) == nullptr);  // ping-pong 64 rows (36)
  // Swapped, block scales follow the fragment's columns (A's rows): any BN, but not in a cluster.
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 16, .swap = true, .accum = Accum::two_sets, .scales = Scales::block,
                     .stages = 8, .bm = 64}) == nullptr);
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 16, .swap = true, .accum = Accum::two_sets, .scales = Scales::block,
                     .stages = 8, .bm = 64, .cluster_m = 2}) != nullptr);
  // ... and its BN / 4 scales a thread count against the registers: 128 wide with two sets spilled 1 KB.
  CHECK(sum_regs(Spec{.elem = Elem::e4m3, .bn = 64, .swap = true, .accum = Accum::two_sets, .scales = Scales::block, .bm = 64}) ==
        32 + 64 + 2 * 16);
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 128, .swap = true, .accum = Accum::two_sets, .scales = Scales::block,
                     .stages = 4, .bm = 64}) != nullptr);
  // ... and they travel in the ring (step 40): BN of sfa and 4 of sfb a stage, counted in its shared memory;
  // no other configuration carries scales there, and theirs adds nothing past the barriers' rounding.
  constexpr Spec kSwapBlock{.elem = Elem::e4m3, .bn = 64, .swap = true, .accum = Accum::two_sets, .scales = Scales::block, .bm = 64};
  CHECK(scales_in_ring(kSwapBlock));
  CHECK(ring_scale_floats(kSwapBlock) == 64 + 4);
  CHECK(ring_scale_lanes(kSwapBlock) == 32);
  CHECK_FALSE(scales_in_ring(Spec{.elem = Elem::e4m3, .bn = 64, .swap = true, .accum = Accum::two_sets, .scales = Scales::per_tensor, .bm = 64}));
  CHECK_FALSE(scales_in_ring(kFp8Coop));
  CHECK(ring_scale_lanes(kFp8Coop) == 0);
  Spec per_tensor = kSwapBlock;
  per_tensor.scales = Scales::per_tensor;
  for (int st : {2, 8, 12})
    CHECK(smem_bytes_at(kSwapBlock, st) >= smem_bytes_at(per_tensor, st) + 4 * st * (64 + 4) - 1024);
  CHECK(smem_bytes_at(kSwapBlock, 12) > smem_bytes_at(per_tensor, 12));
  // Step 42: the 128-row tile's scales in the ring when it asks (Spec::ring_scales): its 128 sfa and one
  // sfb (in 4 floats) a stage, which cost the sixth stage of 32 KB; block scales only.
  Spec ring = kFp8Coop;
  ring.ring_scales = true;
  CHECK(scales_in_ring(ring));
  CHECK(ring_scale_floats(ring) == 128 + 4);
  CHECK(ring_scale_lanes(ring) == 32);
  CHECK(empty_arrivals(ring) == 8 * 32);  // every lane of both consumers' warps arrives for its own reads
  CHECK(stages_that_fit(kFp8Coop) == 6);
  CHECK(stages_that_fit(ring) == 5);
  CHECK(refusal(menu::fit(ring)) == nullptr);
  CHECK(refusal(ring) != nullptr);  // 6 stages: the scales leave no room for the sixth
  Spec ring_per_tensor = ring;
  ring_per_tensor.scales = Scales::per_tensor;
  REQUIRE(refusal(ring_per_tensor) != nullptr);
  CHECK(std::string(refusal(ring_per_tensor)).find("only block scales travel in the ring") != std::string::npos);
  CHECK(refusal(Spec{.bn = 256, .consumers = Consumers::cooperative, .stages = 6}) != nullptr);  // 6 stages of 48 KB: over 227 KB
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 192, .scales = Scales::per_tensor, .stages = 4}) == nullptr);  // any wgmma N
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 64, .accum = Accum::promoted, .scales = Scales::block}) != nullptr);  // one B block a tile
  // The sums must fit a consumer's registers: 128 x 256 ping-pong is 256 fp32 a thread (of 232).
  CHECK(std::string(refusal(Spec{.bn = 256, .stages = 4})).find("registers") != std::string::npos);
  CHECK(sum_regs(Spec{.bn = 160}) == 160);
  CHECK(sum_regs(kFp8Coop) == 64 + 2 * 64);  // step 34: one slab of sums beside two sets
  // BM: ping-pong 64 or 128, cooperative 128 or 256; slabs per consumer follow.
  CHECK(refusal(Spec{.bm = 256}) != nullptr);
  CHECK(refusal(Spec{.consumers = Consumers::cooperative, .bm = 64}) != nullptr);
  CHECK(slabs(Spec{.bm = 64}) == 1);
  CHECK(slabs(Spec{.consumers = Consumers::cooperative, .bm = 256}) == 2);
  // Clusters: two blocks along M or N, or 2 x 2; along M each multicasts half of B's rows, whole swizzle atoms.
  CHECK(refusal(Spec{.cluster_m = 2, .cluster_n = 2}) == nullptr);
  CHECK(refusal(Spec{.cluster_m = 4}) != nullptr);
  CHECK(empty_arrivals(Spec{.cluster_m = 2, .cluster_n = 2}) == 16);  // one consumer's 4 warps in each of 4 blocks
  CHECK(slot_floats(Spec{.cluster_m = 2, .cluster_n = 2}) == 4 * 128 * 128);
  CHECK(refusal(Spec{.bn = 8, .swap = true, .cluster_m = 2}) != nullptr);  // 4 rows: not a whole 8-row atom
  CHECK(refusal(Spec{.bn = 16, .swap = true, .cluster_m = 2}) == nullptr);
  // Block scales in a pair along M (make fp8-variants): the pair shares B's tile, so its scale row too. Along N:
  // not built (a partner past N's edge would read B's scales past their end).
  CHECK(refusal(Spec{.elem = Elem::e4m3, .consumers = Consumers::cooperative, .accum = Accum::two_sets,
                     .scales = Scales::block, .stages = 4, .cluster_m = 2}) == nullptr);
  CHECK(refusal(Spec{.elem = Elem::e4m3, .consumers = Consumers::cooperative, .accum = Accum::promoted,
                     .scales = Scales::block, .stages = 4, .cluster_n = 2}) != nullptr);
  CHECK(empty_arrivals(Spec{.cluster_m = 2}) == 8);  // one consumer's 4 warps, in each of the two blocks
  // stmatrix writes 64-wide boxes only; swapped, boxes of 16 rows of C (two 8-column blocks of C^T).
  CHECK(refusal(Spec{.bn = 96, .stmatrix = true}) != nullptr);
  CHECK(refusal(Spec{.stmatrix = true}) == nullptr);
  CHECK(refusal(Spec{.bn = 144, .swap = true, .consumers = Consumers::cooperative, .stages = 5, .stmatrix = true}) == nullptr);
  CHECK(refusal(Spec{.bn = 24, .swap = true, .stmatrix = true}) != nullptr);
  // The most stages that fit: 128 x 128 bf16 (32 KB a stage) holds 6, 64 x 96 (20 KB) holds 10.
  CHECK(stages_that_fit(kWide) == 6);
  CHECK(stages_that_fit(Spec{.bn = 96, .bm = 64}) == 10);
}

TEST_CASE("family plan: a cluster shares cluster tiles out over half the SMs", "[cpu][family]") {
  // 8192^2 on 128 x 128 tiles in pairs along M: 32 x 64 cluster tiles of two on 66 clusters.
  const Plan c = make_plan({8192, 8192, 8192}, Spec{.cluster_m = 2}, {}, false, 132);
  CHECK(c.tiles_m == 64);
  CHECK(c.items == 32 * 64);
  CHECK(c.split.tiles == 32 * 64);
  CHECK(c.split.blocks <= 66);
  check_partition(c.split, c.k_tiles);
  // An odd tile count along the cluster's axis rounds up: the last pair has a partner past the edge.
  const Plan odd = make_plan({2 * 128 + 1, 1024, 512}, Spec{.cluster_m = 2}, {}, false, 132);
  CHECK(odd.tiles_m == 3);
  CHECK(odd.items == 2 * 8);
  const Plan odd_n = make_plan({1024, 3 * 128, 512}, Spec{.consumers = Consumers::cooperative, .bm = 256, .cluster_n = 2}, {}, false, 132);
  CHECK(odd_n.tiles_m == 4);
  CHECK(odd_n.tiles_n == 3);
  CHECK(odd_n.items == 4 * 2);
  // A split cluster tile's slot holds both blocks' partial tiles, and each block counts its own.
  const Spec cs{.cluster_m = 2};
  CHECK(slot_floats(cs) == 2 * 128 * 128);
  CHECK(counters_per_tile(cs) == 2);
  // 16 cluster tiles of 256 K tiles on 66 units: under a quarter wave, 50 idle units: stream-K.
  const Plan sk = make_plan({16 * 128 * 2, 128, 16384}, cs, {}, false, 132);
  CHECK(sk.items == 16);
  REQUIRE(sk.split.sk_tiles > 0);
  CHECK(sk.split_bytes == stream_k::slots_bytes(sk.split, 2 * 128 * 128) + size_t(sk.split.sk_tiles) * 2 * 4);
  check_partition(sk.split, sk.k_tiles);
  // BM = 64 doubles the tile rows.
  CHECK(make_plan({1000, 1000, 64}, Spec{.bn = 96, .bm = 64}, {}, false, 132).tiles_m == 16);
}

TEST_CASE("family menu: every entry assembles, fits and has its own name", "[cpu][family][menu]") {
  std::vector<std::string> names;
  for (const menu::Entry& e : menu::kBf16) {
    INFO(menu::name(e.spec));
    CHECK(refusal(e.spec) == nullptr);
    CHECK(e.spec.stages == stages_that_fit(e.spec));
    CHECK(e.spec.stages >= 2);
    CHECK(smem_bytes(e.spec) <= kSmemBytes);
    CHECK(e.spec.elem == Elem::bf16);
    names.push_back(menu::name(e.spec));
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  CHECK(menu::name(Spec{.bn = 160, .stages = 5}) == "pp128x160-s5");
  CHECK(menu::name(Spec{.bn = 128, .consumers = Consumers::cooperative, .stages = 4, .bm = 256, .cluster_n = 2}) == "co256x128-c2n-s4");
  CHECK(menu::name(Spec{.bn = 128, .cluster_m = 2, .cluster_n = 2}) == "pp128x128-c2x2-s6");
  // What the menu spans (issue 46): non-power-of-two BN, BM of 64 and 256, clusters, swapped widths.
  auto has = [](auto pred) { return std::any_of(menu::kBf16.begin(), menu::kBf16.end(), [&](const menu::Entry& e) { return pred(e.spec); }); };
  CHECK(has([](Spec s) { return !s.swap && (s.bn & (s.bn - 1)) != 0; }));
  CHECK(has([](Spec s) { return s.bm == 64; }));
  CHECK(has([](Spec s) { return s.bm == 256; }));
  CHECK(has([](Spec s) { return s.cluster_m == 2; }));
  CHECK(has([](Spec s) { return s.cluster_n == 2; }));
  CHECK(has([](Spec s) { return cluster_size(s) == 4; }));
  CHECK(has([](Spec s) { return s.swap && s.bn == 8; }));
  CHECK(has([](Spec s) { return s.swap && s.bn % 64 != 0 && s.bn > 64; }));  // cuBLAS's orientation, M in steps of 8
  // Its own refusals: a narrow swapped tile only for M <= its width; a wide one takes any M.
  const menu::Entry sw = menu::swapped(16), wide = menu::tile({}),
                    wide_sw = menu::wide_swapped({.bn = 144, .consumers = Consumers::cooperative});
  CHECK(menu::refusal(sw, 17, 4096, 4096) != nullptr);
  CHECK(menu::refusal(sw, 16, 4096, 4096) == nullptr);
  CHECK(menu::refusal(wide_sw, 572, 23520, 3352) == nullptr);
  // There its tiles are C^T's: 184 rows of 128 along N by 4 columns of 144 along M (576 rows of C for
  // 572, where 128-row tiles cover 640).
  const Plan ws = menu::plan(wide_sw, 572, 23520, 3352, 132);
  CHECK(ws.km == 23520);
  CHECK(ws.kn == 572);
  CHECK(ws.tiles_m == 184);
  CHECK(ws.tiles_n == 4);
  CHECK(menu::refusal(wide, 1, 1, 8) == nullptr);
  CHECK(menu::refusal(wide, 0, 1, 8) != nullptr);
  // Its steps add the rules every TMA kernel shares (K % 8 == 0), and the menu's own, in the kernel's
  // orientation (a swapped entry's tiles lie over N x M).
  const std::vector<gemm::Step> steps = menu::bf16_steps();
  REQUIRE(steps.size() == menu::kBf16.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO(steps[i].name);
    CHECK(steps[i].unsupported(4096, 4096, 4100).has_value());
    CHECK(steps[i].unsupported(8, 4096, 4096).has_value() == false);
    CHECK(steps[i].unsupported(menu::kBf16[i].one_column ? 65 : 4096, 4096, 4096).has_value() == menu::kBf16[i].one_column);
  }
}

TEST_CASE("a swapped tile's stmatrix epilogue: each lane's transposed row lands where TMA reads C's row", "[cpu][family]") {
  // stmatrix.x4.trans, modelled (PTX ISA, "stmatrix"): lane l holds row l/4, columns 2(l%4), +1 of each
  // of the four 8 x 8 matrices; the row that lane 8i + q addresses receives column q of matrix i. The
  // fragment of C^T (wgmma's D, m64nN: warp w holds rows 16w + l/4 (+8), columns 8j + 2(l%4) (+1)) goes
  // in as ptx::store_dt_box16_sw128_stmatrix passes it; the box is read back as a TMA store with the
  // 128-byte swizzle reads it (swizzle::byte_offset<128>), and must be C's rows 16 jj .. + 15.
  const auto ct = [](int r, int c) { return r * 1000 + c; };  // C^T's element (slab row r, column c)
  for (int jj = 0; jj < 3; ++jj) {
    std::vector<int> box(16 * 64, -1);  // 2-byte slots
    for (int w = 0; w < 4; ++w)
      for (int i = 0; i < 4; ++i) {   // matrix i: the fragment's block (j = 2 jj + i/2, h = i%2)
        const int j = 2 * jj + i / 2, h = i % 2;
        for (int q = 0; q < 8; ++q) {  // its transposed row q, at the address lane 8i + q gives
          const uint32_t at = swizzle::dt_box16_row_offset(w, 8 * i + q);
          REQUIRE(at % 16 == 0);
          REQUIRE(at + 16 <= 16 * 128);
          for (int a = 0; a < 8; ++a) {  // column q of matrix i: row a of it is held by lanes 4a .. 4a + 3
            int& slot = box[size_t(at / 2 + uint32_t(a))];
            CHECK(slot == -1);  // no slot written twice
            slot = ct(16 * w + 8 * h + a, 8 * j + q);
          }
        }
      }
    int right = 0;
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 64; ++n) right += box[size_t(swizzle::byte_offset<128>(uint32_t(m * 128 + 2 * n)) / 2)] == ct(n, 16 * jj + m);
    CHECK(right == 16 * 64);  // C[16 jj + m][n] = C^T[n][16 jj + m], every element of the box
  }
}

TEST_CASE("family menu: no kernel of the menu spills or has its wgmmas serialized (its ptxas report)", "[cpu][family][menu]") {
  const std::filesystem::path report = gemm_test::binary_dir().parent_path() / "ptxas" / "family_menu.txt";
  if (!std::filesystem::exists(report)) {
    gemm_test::mark_skipped("no build/ptxas/family_menu.txt (build build/obj/family/menu.o first)");
    return;
  }
  std::ifstream in(report);
  std::string line, entry;
  int kernels = 0;
  while (std::getline(in, line)) {
    INFO(line);
    CHECK(line.find("C7515") == std::string::npos);  // ptxas serialized a kernel's wgmmas (the line names it)
    // The menu's GEMM kernels (not the parallel reduction's split_k_reduce, family/reduce.cuh).
    if (line.find("Compiling entry function") != std::string::npos && line.find("gemm_kernel") != std::string::npos) {
      entry = line;
      ++kernels;
    }
    if (line.find("bytes spill stores") != std::string::npos) {
      INFO(entry << "\n" << line);
      CHECK(line.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos);
    }
  }
  CHECK(kernels == int(menu::kBf16.size()));
}

namespace {
constexpr size_t kMenu = menu::kBf16.size();
/// A measured row for the dispatch tests: the hand rule's ratio and {entry, ratio} pairs.
dispatch::Measured<kMenu> row(int m, int n, int k, float hand, std::initializer_list<std::pair<int, float>> ratios) {
  dispatch::Measured<kMenu> r;
  r.m = m, r.n = n, r.k = k, r.hand = hand;
  for (const auto& [e, x] : ratios) r.ratio[size_t(e)] = x;
  r.lm = std::log(double(m)), r.ln = std::log(double(n)), r.lk = std::log(double(k));
  return r;
}
int pick(const std::vector<dispatch::Measured<kMenu>>& t, int m, int n, int k) {
  return dispatch::pick(t.data(), t.size(), menu::kBf16, m, n, k, 132);
}
}  // namespace

TEST_CASE("family dispatch: efficiency sees padding, waves and idle SMs", "[cpu][family][menu]") {
  const auto eff = [](int e, int m, int n, int k) { return dispatch::efficiency(menu::plan(menu::kBf16[size_t(e)], m, n, k, 132), 132); };
  const int pp64x64 = menu::entry_of({.bn = 64, .bm = 64}), wide = menu::entry_of({.bn = 128});
  REQUIRE(pp64x64 >= 0);
  REQUIRE(wide >= 0);
  const std::vector<std::tuple<int, int, int>> shapes = {{1, 1024, 1024}, {4096, 4096, 4096}, {67, 1472, 26192}, {5000, 5000, 5000}};
  for (const int e : {pp64x64, wide})
    for (const auto& [m, n, k] : shapes) {
      CAPTURE(e, m, n, k);
      CHECK(eff(e, m, n, k) > 0);
      CHECK(eff(e, m, n, k) <= 1.0);
    }
  // A 64-row tile at M = 67 needs a second row of tiles: 46 of them, between a quarter wave and one.
  // Unsplit (the entry's own policy: split-K under a quarter wave only), 46 SMs run 410 K tiles each
  // and 86 idle (the random set's worst shape once: 0.38x cuBLAS).
  const menu::Entry& e64 = menu::kBf16[size_t(pp64x64)];
  const Plan unsplit = make_plan({67, 1472, 26192}, e64.spec, e64.split, false, 132);
  CHECK(unsplit.split.blocks == 46);
  CHECK(dispatch::efficiency(unsplit, 132) < 0.5 * eff(pp64x64, 64, 1024, 16384));
  // menu::plan prices the split as step 26 does: two segments a tile, 92 blocks, and a better plan.
  CHECK(menu::plan(e64, 67, 1472, 26192, 132).split.blocks == 92);
  CHECK(eff(pp64x64, 67, 1472, 26192) > 1.3 * dispatch::efficiency(unsplit, 132));
  // A row timed with the unsplit plan (as the tuner records it: 0 split tiles on 46 blocks) is credited
  // with that plan, not today's: carried to the same shape, its ratio rises by today's efficiency over
  // the timed one.
  dispatch::Measured<menu::kBf16.size()> timed;
  timed.m = 67, timed.n = 1472, timed.k = 26192;
  timed.ratio[size_t(pp64x64)] = 0.38f, timed.sk_tiles[size_t(pp64x64)] = 0, timed.blocks[size_t(pp64x64)] = 46;
  timed.lm = std::log(67.0), timed.ln = std::log(1472.0), timed.lk = std::log(26192.0);
  CHECK(dispatch::timed_plan(e64, timed, size_t(pp64x64), 132).split.blocks == 46);
  const auto c67 = dispatch::carry(&timed, 1, menu::kBf16, 67, 1472, 26192, 132);
  CHECK(c67.entry[size_t(pp64x64)] == Approx(0.38 * eff(pp64x64, 67, 1472, 26192) / dispatch::efficiency(unsplit, 132)));
  CHECK(c67.entry[size_t(pp64x64)] > 0.38 * 1.3);
  // A 128-row tile: one row of 23 tiles, split over 115 blocks.
  CHECK(eff(wide, 67, 1472, 26192) > 0.9 * eff(wide, 64, 1024, 16384));
  // 4096^2 on 128 x 128 tiles: 1024 tiles on 132 SMs, stream-K evens the last wave: nearly the floor.
  CHECK(eff(wide, 4096, 4096, 4096) > 0.9);
}

TEST_CASE("family dispatch: the nearest measured shapes' ratios, carried to the query", "[cpu][family][menu]") {
  const int wide = menu::entry_of({.bn = 128}), narrow_m = menu::entry_of({.bn = 96, .bm = 64}),
            pp64x64 = menu::entry_of({.bn = 64, .bm = 64}), pp128x64 = menu::entry_of({.bn = 64}),
            swap16 = menu::entry_of({.bn = 16, .swap = true});
  REQUIRE(std::min({wide, narrow_m, pp64x64, pp128x64, swap16}) >= 0);
  const std::vector table = {
      row(4096, 4096, 4096, 1.0f, {{wide, 1.05f}, {narrow_m, 0.9f}}),      // aligned, large
      row(96, 4096, 4096, 0.9f, {{wide, 0.85f}, {narrow_m, 0.97f}}),       // aligned, M = 96
      row(16, 4096, 4096, 0.95f, {{wide, 0.5f}, {swap16, 1.02f}}),         // aligned, M = 16
      row(4096, 4096, 4104, 0.8f, {{wide, 0.85f}, {narrow_m, 0.9f}}),      // K % 16 == 8
      row(64, 1024, 16384, 0.6f, {{pp64x64, 0.87f}, {pp128x64, 0.75f}}),   // small M, long K
  };
  // At a measured shape the carried ratios are the measured ones: the best entry, or the hand rule
  // where no entry beats it by kMargin.
  CHECK(pick(table, 4096, 4096, 4096) == wide);
  CHECK(pick(table, 96, 4096, 4096) == narrow_m);
  CHECK(pick(table, 16, 4096, 4096) == swap16);
  auto close = table;
  close[0].ratio[size_t(wide)] = 1.005f;  // within 1 % of the hand rule's 1.0
  CHECK(pick(close, 4096, 4096, 4096) == dispatch::kHandRule);
  // Near neighbours; the misaligned class takes its own row even where an aligned one is as near.
  CHECK(pick(table, 5000, 3000, 6000) == wide);
  CHECK(pick(table, 100, 4096, 4096) == narrow_m);
  CHECK(pick(table, 4096, 4096, 4120) == narrow_m);
  // An entry that refuses the query is not carried: the swapped 16-wide tile takes M <= 16 only, so at
  // M = 20 (nearest row M = 16) the best carried ratio that takes it is wide's 0.5 against the hand
  // rule's 0.95: the hand rule.
  CHECK(pick(table, 20, 4096, 4096) == dispatch::kHandRule);
  // The step a distance cannot see: at 67 x 1472 x 26192 the nearest row is 64 x 1024 x 16384, where a
  // 64 x 64 tile won; carried, it needs a second row of tiles (above), so the 128-row tile runs.
  CHECK(pick(table, 64, 1024, 16384) == pp64x64);
  CHECK(pick(table, 67, 1472, 26192) == pp128x64);
  const auto c = dispatch::carry(table.data(), table.size(), menu::kBf16, 67, 1472, 26192, 132);
  CHECK(c.inside);
  CHECK(c.from_m == 64);
  CHECK(c.entry[size_t(pp64x64)] < 0.7);
  CHECK(c.entry[size_t(wide)] < 0);  // not measured there
  // Outside the table's reach (4x under, 2x over its range), or no table: the hand rule.
  CHECK(pick(table, 8192, 8192, 8192) == wide);
  CHECK(pick(table, 4096, 4096, 33000) == dispatch::kHandRule);  // K past 2 x 16384
  CHECK(pick(table, 65536, 65536, 65536) == dispatch::kHandRule);
  CHECK(pick(table, 4096, 200, 4096) == dispatch::kHandRule);  // N under 1024 / 4
  CHECK(!dispatch::carry(table.data(), table.size(), menu::kBf16, 4096, 200, 4096, 132).inside);
  CHECK(dispatch::pick(table.data(), 0, menu::kBf16, 4096, 4096, 4096, 132) == dispatch::kHandRule);
  // A class with no measurement falls back to the nearest row of any class (N % 8 != 0 here).
  CHECK(pick(table, 4096, 4095, 4096) == wide);
  CHECK(dispatch::alignment_class(4095, 4104) == 3);
  // A pitch on a sector but off the 128-byte line (K % 64 != 0) is a class of its own, which speaks
  // where the table has rows of it; a table without them answers as for an aligned pitch (not from the
  // nearer K % 16 == 8 row: 4112 lies nearer 4104 than 4096).
  CHECK(dispatch::alignment_class(4096, 4112) == 4);
  CHECK(dispatch::alignment_class(4096, 4096) == 0);
  CHECK(dispatch::alignment_class(4095, 4112) == 6);
  CHECK(pick(table, 4096, 4096, 4112) == wide);
  auto off_line = table;
  off_line.push_back(row(4096, 4096, 4128, 0.7f, {{wide, 0.6f}, {narrow_m, 0.75f}}));
  CHECK(pick(off_line, 4096, 4096, 4112) == narrow_m);
  CHECK(pick(off_line, 4096, 4096, 4096) == wide);  // the aligned query keeps its own row
  // Two rows equally near: each entry's ratios carried from both, averaged (geometric, equal weights).
  const std::vector halves = {row(96, 4096, 4096, 0.9f, {{narrow_m, 1.0f}, {wide, 0.8f}}),
                              row(96, 4096, 16384, 0.9f, {{narrow_m, 0.8f}, {wide, 1.0f}})};
  const auto carry = [](const std::vector<dispatch::Measured<kMenu>>& t, int m, int n, int k) {
    return dispatch::carry(t.data(), t.size(), menu::kBf16, m, n, k, 132);
  };
  const auto both = carry(halves, 96, 4096, 8192), low = carry({halves[0]}, 96, 4096, 8192),
             high = carry({halves[1]}, 96, 4096, 8192);
  for (const int e : {narrow_m, wide}) {
    CAPTURE(e);
    CHECK(both.entry[size_t(e)] == Approx(std::sqrt(low.entry[size_t(e)] * high.entry[size_t(e)])));
  }
  CHECK(both.hand == Approx(std::sqrt(low.hand * high.hand)));
  // Nearer one row (K = 7000 is nearer 4096 in log), that row weighs more: the average lies between
  // the two rows' carried ratios, nearer the low row's; the nearest row is the one named.
  const auto near_low = carry(halves, 96, 4096, 7000), only_low = carry({halves[0]}, 96, 4096, 7000),
             only_high = carry({halves[1]}, 96, 4096, 7000);
  CHECK(near_low.from_k == 4096);
  const double lo = std::log(only_low.entry[size_t(narrow_m)]), hi = std::log(only_high.entry[size_t(narrow_m)]),
               mid = std::log(near_low.entry[size_t(narrow_m)]);
  CHECK(lo > hi);
  CHECK(mid < lo);
  CHECK(mid > 0.5 * (lo + hi));
  // At a measured row the row speaks alone for itself.
  const auto at_row = carry(halves, 96, 4096, 4096);
  CHECK(at_row.entry[size_t(narrow_m)] == Approx(1.0));
  // An entry the nearest row did not measure is not carried from farther rows.
  const std::vector gap = {row(96, 4096, 4096, 0.9f, {{narrow_m, 1.0f}}), row(96, 4096, 16384, 0.9f, {{narrow_m, 0.8f}, {wide, 1.0f}})};
  CHECK(carry(gap, 96, 4096, 7000).entry[size_t(wide)] < 0);
  CHECK(carry(gap, 96, 4096, 12000).entry[size_t(wide)] > 0);
}

TEST_CASE("family dispatch: the pick does not depend on the order of the table's rows", "[cpu][family][menu]") {
  // Queries at powers of two lie halfway (in log) between the grid's points, so rows are often equally
  // near: taken in (M, N, K) order, they give the same answer from the table reversed. Checked on the
  // whole table and on its grid rows alone (scripts/tune.py's default grid: N of 256 ... 16384, K of 1024,
  // 4096 or 16384, plus 8 or 32), where the ties are many; the drawn rows (tune.py --grid draw) lie off
  // the grid and break most of them.
  const dispatch::TunedTable t = dispatch::tuned_for(dispatch::h100::kTunedGpu);
  REQUIRE(t.size > 0);
  const auto on_grid = [](const dispatch::Measured<kMenu>& r) {
    const bool n_ok = r.n == 256 || r.n == 1024 || r.n == 4096 || r.n == 8192 || r.n == 16384;
    bool k_ok = false;
    for (const int k0 : {1024, 4096, 16384}) k_ok = k_ok || r.k == k0 || r.k == k0 + 8 || r.k == k0 + 32;
    return n_ok && k_ok;
  };
  std::vector<dispatch::Measured<kMenu>> all(t.rows, t.rows + t.size), grid;
  std::copy_if(all.begin(), all.end(), std::back_inserter(grid), on_grid);
  REQUIRE(grid.size() < all.size());
  for (const auto* table : {&all, &grid}) {
    const std::vector<dispatch::Measured<kMenu>>& fwd = *table;
    const std::vector<dispatch::Measured<kMenu>> rev(fwd.rbegin(), fwd.rend());
    int shapes = 0, tied = 0;
    for (const int m : {1, 3, 12, 48, 100, 181, 512, 700, 3000, 8192})
      for (const int n : {512, 2048, 3000, 8192})
        for (const int k : {2048, 2056, 2080, 8192, 8200}) {
          CAPTURE(fwd.size(), m, n, k);
          const auto a = dispatch::carry(fwd.data(), fwd.size(), menu::kBf16, m, n, k, 132);
          const auto b = dispatch::carry(rev.data(), rev.size(), menu::kBf16, m, n, k, 132);
          CHECK(a.from_m == b.from_m);
          CHECK(a.from_n == b.from_n);
          CHECK(a.from_k == b.from_k);
          CHECK(a.hand == Approx(b.hand));
          for (size_t e = 0; e < kMenu; ++e) CHECK(a.entry[e] == Approx(b.entry[e]));
          ++shapes;
          // whether two rows (of any class) lie equally near this query: the case the order decides
          const double q[3] = {std::log(double(m)), std::log(double(n)), std::log(double(k))};
          std::vector<double> d;
          for (const auto& r : fwd) d.push_back(dispatch::log_distance(q, r));
          std::sort(d.begin(), d.end());
          tied += d.size() > 1 && d[1] - d[0] < 1e-12;
        }
    CHECK(shapes == 200);
    // the test exercises ties: on the grid rows alone, 100 of the 200 when it was written
    if (table == &grid) CHECK(tied > 20);
  }
}

TEST_CASE("family dispatch: a table's names resolve against the menu; unknown names speak for nothing", "[cpu][family][menu]") {
  const int wide = menu::entry_of({.bn = 128});
  const std::array<const char*, 2> names = {"no-such-entry", "pp128x128-s6"};
  const std::array<dispatch::TunedShape, 1> rows = {{{3, 4, 16, 0.9f, {{{1.2f, 0, 0}, {1.05f, 0, 3}}}}}};
  const auto got = dispatch::resolve(rows, names, menu::kBf16);
  CHECK(got[0].m == 3);
  CHECK(got[0].hand == 0.9f);
  CHECK(got[0].ratio[size_t(wide)] == 1.05f);
  CHECK(got[0].blocks[size_t(wide)] == 3);  // the split it was timed with travels with its ratio
  CHECK(std::count_if(got[0].ratio.begin(), got[0].ratio.end(), [](float x) { return x > 0; }) == 1);
  CHECK(dispatch::pick(got.data(), 1, menu::kBf16, 3, 4, 16, 132) == wide);
}

TEST_CASE("step 29 at a shape its table timed picks what was measured fastest there", "[cpu][family][menu]") {
  // At a row's own shape every entry's carried ratio is its measured one, if the query's plan is the plan
  // it was timed with: the same split and, for a cluster entry, the same SMs (an H100 holds 30 clusters of
  // four, 120 SMs: planned on 132, a 2 x 2 tile was carried at 0.996 where it measured 0.651). So the pick
  // there is the measured winner, or the hand rule where it was within kMargin. The H100's table was
  // timed with today's splits except where the menu's stream-K now needs its panels to fit in L2
  // (SplitPolicy::l2_fit): rows where any entry's plan today is not the one timed are left out, and
  // they are few.
  const dispatch::TunedTable t = dispatch::tuned_for(dispatch::h100::kTunedGpu);
  REQUIRE(t.size == dispatch::h100::kTunedBf16.size());
  CHECK(dispatch::tuned_for("a GPU nobody tuned on").size == dispatch::kTunedBf16.size());  // the default (H200) table
  const auto esms = dispatch::table_sms(t.rows, t.size, menu::kBf16, 132);
  CHECK(esms[size_t(menu::entry_of({.bn = 128, .cluster_m = 2, .cluster_n = 2}))] == 120);
  CHECK(esms[size_t(menu::entry_of({.bn = 128, .cluster_m = 2}))] == 132);
  int wrong = 0, replanned = 0;
  for (size_t i = 0; i < t.size; ++i) {
    const auto& r = t.rows[i];
    bool same = true;
    for (size_t e = 0; e < r.ratio.size(); ++e) {
      if (!(r.ratio[e] > 0) || r.blocks[e] == 0) continue;
      const Plan today = menu::plan(menu::kBf16[e], r.m, r.n, r.k, esms[e]);
      same = same && today.split.sk_tiles == r.sk_tiles[e] && today.split.blocks == r.blocks[e];
    }
    if (!same) {
      ++replanned;
      continue;
    }
    int best = dispatch::kHandRule;
    for (size_t e = 0; e < r.ratio.size(); ++e)
      if (r.ratio[e] > 0 && (best < 0 || r.ratio[e] > r.ratio[size_t(best)])) best = int(e);
    if (best >= 0 && r.hand > 0 && r.ratio[size_t(best)] <= r.hand * (1 + dispatch::kMargin)) best = dispatch::kHandRule;
    const int got = dispatch::pick(t.rows, t.size, menu::kBf16, r.m, r.n, r.k, 132, &esms);
    if (got != best) {
      ++wrong;
      UNSCOPED_INFO(r.m << "x" << r.n << "x" << r.k << ": picked " << got << ", measured fastest " << best);
    }
  }
  CHECK(wrong == 0);
  INFO(replanned << " of " << t.size << " rows timed with a plan that is not today's");
  CHECK(replanned * 5 < int(t.size));  // 69 of 675 when the rule came: most rows are still checked
}

TEST_CASE("menu: the 64-row pairs plan whole pairs of tiles, one round each at 268 x 1552 x 3576", "[cpu][family][menu]") {
  // M = 268 is five tile rows of 64, N = 1552 is 25, 17 or 13 tile columns of 64, 96 or 128, and K = 3576
  // is 56 K tiles. The 64 x 64 pair along N (cuBLAS's pairing there: A's tile shared) makes 5 x 13 = 65
  // cluster tiles, the 64 x 96 and 64 x 128 pairs along M (B's tile shared; the last pair's partner past
  // M) 3 x 17 = 51 and 3 x 13 = 39: each fits 66 pairs of SMs in one round of 56 K tiles. A 64 x 64 pair
  // along M would make 75 and run a second round (docs/notebook/hopper.md, "Small grids at a misaligned pitch").
  int pairs = 0;
  for (const menu::Entry& e : menu::kBf16) {
    if (e.spec.bm != 64 || cluster_size(e.spec) != 2) continue;
    ++pairs;
    INFO(menu::name(e.spec));
    const Plan p = menu::plan(e, 268, 1552, 3576, 132);
    CHECK(p.tiles_m == 5);
    CHECK(p.items == (e.spec.cluster_n == 2 ? p.tiles_m * ((p.tiles_n + 1) / 2) : 3 * p.tiles_n));
    CHECK(p.split.blocks * 2 <= 132);  // the grid's units are pairs
    CHECK(busiest_k_tiles(p) == 56);
  }
  CHECK(pairs == 3);
}

TEST_CASE("step 29's tables: a column for every menu entry, and they are what gen_tuned_table.py writes", "[cpu][family][menu]") {
  for (const menu::Entry& e : menu::kBf16) {
    const std::string n = menu::name(e.spec);
    INFO(n);
    const bool awaiting = std::count(menu::kAwaitingTune.begin(), menu::kAwaitingTune.end(), n) == 1;
    const bool awaiting_h200 = std::count(menu::kAwaitingTuneH200.begin(), menu::kAwaitingTuneH200.end(), n) == 1;
    CHECK(std::count(dispatch::kTunedEntries.begin(), dispatch::kTunedEntries.end(), n) == (awaiting || awaiting_h200 ? 0 : 1));
    CHECK(std::count(dispatch::h100::kTunedEntries.begin(), dispatch::h100::kTunedEntries.end(), n) == (awaiting ? 0 : 1));
  }
  for (const char* n : menu::kAwaitingTune) {  // each names an entry of the menu
    INFO(n);
    CHECK(std::any_of(menu::kBf16.begin(), menu::kBf16.end(), [&](const menu::Entry& e) { return menu::name(e.spec) == n; }));
  }
  for (const char* n : menu::kAwaitingTuneH200) {
    INFO(n);
    CHECK(std::any_of(menu::kBf16.begin(), menu::kBf16.end(), [&](const menu::Entry& e) { return menu::name(e.spec) == n; }));
  }
  if (!gemm_test::have_repo("scripts/gen_tuned_table.py")) return;
  const std::filesystem::path repo = gemm_test::repo_dir();
  const auto r = gemm_test::run_command("python3 '" + (repo / "scripts/gen_tuned_table.py").string() + "' --check");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("up to date") != std::string::npos);
  // tune.py --entries awaiting-h200 reads the same list from menu.hpp (scripts/step_constants.py).
  std::string want;
  for (const char* n : menu::kAwaitingTuneH200) want += std::string(want.empty() ? "" : ",") + n;
  const auto py = gemm_test::run_command("python3 -c \"import sys; sys.path.insert(0, '" + (repo / "scripts").string() +
                                         "'); import step_constants as s; print(','.join(s.menu_awaiting()))\"");
  INFO(py.output);
  CHECK(py.status == 0);
  std::string got = py.output;
  while (!got.empty() && (got.back() == '\n' || got.back() == '\r')) got.pop_back();
  CHECK(got == want);
}

TEST_CASE("family steps refuse an M, N or K whose round-up to whole tiles would overflow a 32-bit int", "[cpu][family]") {
  int family_steps = 0;
  for (const gemm::Step& s : gemm::registered_steps()) {
    if (s.fixture || !s.persistent || s.dtype == gemm::Dtype::fp32 || s.id < std::string("24")) continue;
    ++family_steps;
    CAPTURE(s.id);
    // 2147483600 rows are 2^24 tiles (under the schedule's limit), but M + 255 passes INT_MAX.
    const auto why = s.unsupported(2147483600, 8, 16);
    REQUIRE(why.has_value());
    CHECK_THAT(*why, Catch::Contains("2^31 - 256"));
    const auto why_n = s.unsupported(64, 2147483600, 16);
    REQUIRE(why_n.has_value());
    // K too: 2147483632 (a multiple of 16) rounds up past INT_MAX to whole K tiles (plan.hpp's k_tiles).
    const auto why_k = s.unsupported(64, 64, 2147483632);
    REQUIRE(why_k.has_value());
    CHECK_THAT(*why_k, Catch::Contains("2^31 - 256"));
    CHECK_FALSE(s.unsupported(64, 4096, 4096).has_value());
  }
  CHECK(family_steps >= 12);  // 24-35
}
