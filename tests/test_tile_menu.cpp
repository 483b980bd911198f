// The tile menu (common/kernel_lib/tile_menu.hpp, step 25 on) on the CPU: the pick is the swapped tile
// exactly for M <= 64, otherwise the cheaper of the two unswapped tiles by the documented estimate
// (ties to 128 x 128), on every shape of a grid of M and N for several SM counts; the worked examples
// of the header and the book; and the estimate's ingredients (rounds, tile counts) by hand.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "../common/kernel_lib/stream_k.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

using namespace gemm::tile_menu;

namespace {
std::string shape(int64_t m, int64_t n, int sms) {
  return std::to_string(m) + " x " + std::to_string(n) + " on " + std::to_string(sms) + " SMs";
}
}  // namespace

TEST_CASE("tile menu: rounds and tile counts by hand", "[cpu][tile_menu]") {
  CHECK(rounds(1, 132) == 1);
  CHECK(rounds(132, 132) == 1);
  CHECK(rounds(133, 132) == 2);
  CHECK(rounds(1024, 132) == 8);
  CHECK(tile_count(4096, 4096, 128) == 1024);
  CHECK(tile_count(4096, 4096, 64) == 2048);
  CHECK(tile_count(129, 65, 64) == 4);  // 2 x 2, ragged on both sides
  CHECK(tile_count(1, 1, 64) == 1);
  // The swapped tile is costed on C^T: 16 x 8192 is 64 tiles of 128 rows of B by 64 of A.
  CHECK(estimate_pct(16, 8192, 132, {true, 64}) == kNarrowCostPct);
  CHECK(estimate_pct(4096, 4096, 132, {false, 128}) == 800);
  CHECK(estimate_pct(4096, 4096, 132, {false, 64}) == 16 * kNarrowCostPct);
}

TEST_CASE("tile menu: an SM count below 1 counts as 1 (no division by zero)", "[cpu][tile_menu]") {
  CHECK(rounds(10, 0) == 10);
  CHECK(rounds(10, -3) == 10);
  CHECK(choose(256, 4096, 4096, 0).bn == choose(256, 4096, 4096, 1).bn);
}

TEST_CASE("tile menu: a narrow tile costs more than half a wide one and less than a whole", "[cpu][tile_menu]") {
  // Below half, the narrow tile would win every grid with a partial last wave; at 100 or more, never.
  STATIC_REQUIRE(kNarrowCostPct > 50);
  STATIC_REQUIRE(kNarrowCostPct < 100);
}

TEST_CASE("tile menu: swapped exactly for M <= 64, else the cheaper estimate, ties to 128 x 128", "[cpu][tile_menu]") {
  int narrow_picks = 0, wide_picks = 0;
  for (int sms : {1, 2, 66, 114, 132}) {
    for (int64_t m = 1; m <= 4200; m += (m < 300 ? 1 : 37)) {
      for (int64_t n = 1; n <= 17000; n += (n < 600 ? 7 : 389)) {
        const Tile t = choose(m, n, 4096, sms);
        INFO(shape(m, n, sms));
        if (m <= kSwapMaxM) {
          REQUIRE(t.swap);
          REQUIRE(t.bn == 64);
          continue;
        }
        REQUIRE_FALSE(t.swap);
        const int64_t wide = estimate_pct(m, n, sms, {false, 128}), narrow = estimate_pct(m, n, sms, {false, 64});
        if (narrow < wide) {
          REQUIRE(t.bn == 64);
          ++narrow_picks;
        } else {
          REQUIRE(t.bn == 128);
          ++wide_picks;
        }
      }
    }
  }
  // Both tiles are picked somewhere (a menu whose choice never changes would test nothing).
  CHECK(narrow_picks > 0);
  CHECK(wide_picks > 0);
}

TEST_CASE("tile menu: K does not change the pick", "[cpu][tile_menu]") {
  for (int64_t m : {1, 64, 65, 256, 1024, 4096})
    for (int64_t n : {1, 256, 4096, 14336})
      for (int64_t k : {8, 4096, 65536}) {
        INFO(shape(m, n, 132) + " K = " + std::to_string(k));
        const Tile a = choose(m, n, k, 132), b = choose(m, n, 8, 132);
        CHECK(a.swap == b.swap);
        CHECK(a.bn == b.bn);
      }
}

TEST_CASE("tile menu: the header's worked examples on 132 SMs", "[cpu][tile_menu]") {
  struct Case {
    int64_t m, n;
    bool swap;
    int bn;
  };
  const Case cases[] = {
      {1, 4096, true, 64},      {64, 14336, true, 64},    // decode: swapped
      {256, 4096, false, 64},   // 64 wide tiles in one round on 64 SMs; 128 narrow ones in one round
      {1024, 1024, false, 64},  // the same grid
      {4096, 256, false, 64},   // 64 wide tiles again, the other way round
      {128, 14336, false, 128}, // 112 wide tiles: one round; 224 narrow: two
      {4096, 4096, false, 128}, // 8 rounds against 16
      {8192, 8192, false, 128},
      {65, 4096, false, 64},    // just above the swap bound: 32 wide tiles, 64 narrow
      {4096, 768, false, 128},  // 192 wide tiles, 2 rounds (200) against 384 narrow, 3 rounds (231 at 77)
      {11264, 192, false, 64},  // 176 wide tiles and 264 narrow ones: 2 rounds each, so the cheaper tile
      {65536, 64, false, 64},   // N <= 64: the same tile count either way
  };
  for (const Case& c : cases) {
    INFO(shape(c.m, c.n, 132));
    const Tile t = choose(c.m, c.n, 4096, 132);
    CHECK(t.swap == c.swap);
    CHECK(t.bn == c.bn);
  }
}

// ---- step 26: the plan prices the split --------------------------------------------------------

TEST_CASE("split plan: the split factor and K tiles per block by hand", "[cpu][tile_menu]") {
  CHECK(k_tiles_of(1) == 1);
  CHECK(k_tiles_of(64) == 1);
  CHECK(k_tiles_of(14336) == 224);
  CHECK(split_factor(32, 224, 132) == 4);      // 132 / 32 = 4 segments a tile, 128 blocks
  CHECK(split_k_tiles(32, 224, 132) == 56);
  CHECK(split_factor(64, 1024, 132) == 2);     // 128 blocks, never 132 blocks at 132 K offsets
  CHECK(split_k_tiles(64, 1024, 132) == 512);
  CHECK(split_factor(67, 1024, 132) == 1);     // more than half a wave: no split fits
  CHECK(split_factor(2, 64, 132) == 16);       // 66 segments would be under kMinPiece K tiles: 64 / 4
  CHECK(split_factor(4, 4, 132) == 1);         // one piece of K tiles a tile
  CHECK(split_factor(10, 100, 0) == 1);        // sms < 1 counts as 1
  CHECK(split_factor(0, 100, 132) == 25);      // no tiles: no division by zero
  CHECK(plan_estimate_pct(1024, 1024, 65536, 132, {{false, 128}, true}) == (512 + kSplitFixupKTiles) * 100);
  CHECK(plan_estimate_pct(1024, 1024, 65536, 132, {{false, 64}, false}) == 1024 * kNarrowCostPct);
}

TEST_CASE("split plan: the cheapest candidate, splits only below one wave, choose()'s tile where nothing splits", "[cpu][tile_menu]") {
  int splits = 0, wholes = 0;
  for (int sms : {1, 2, 66, 132})
    for (int64_t m = 65; m <= 4200; m += (m < 300 ? 7 : 113))
      for (int64_t n = 1; n <= 17000; n += (n < 600 ? 29 : 701))
        for (int64_t k : {8, 1032, 4096, 14336, 65536}) {
          INFO(shape(m, n, sms) + " K = " + std::to_string(k));
          const Plan p = plan(m, n, k, sms);
          REQUIRE_FALSE(p.tile.swap);
          const int64_t pct = plan_estimate_pct(m, n, k, sms, p);
          for (int bn : {128, 64})
            for (bool split : {false, true}) {
              if (split && split_factor(tile_count(m, n, bn), k_tiles_of(k), sms) < 2) continue;  // not a candidate
              REQUIRE(pct <= plan_estimate_pct(m, n, k, sms, {{false, bn}, split}));
            }
          if (p.split) {
            REQUIRE(2 * tile_count(m, n, p.tile.bn) <= sms);  // two segments a tile at least, one block each
            ++splits;
          } else {
            ++wholes;
            // Whole tiles everywhere: step 25's pick, unless a split candidate lost only on the tile.
            const Tile c = choose(m, n, k, sms);
            if (2 * tile_count(m, n, 128) > sms && 2 * tile_count(m, n, 64) > sms) REQUIRE(p.tile.bn == c.bn);
          }
        }
  CHECK(splits > 0);
  CHECK(wholes > 0);
  for (int64_t m : {1, 16, 64})  // M <= 64 stays step 24's swapped tile, its split the step's own rule
    CHECK(plan(m, 4096, 65536, 132).tile.swap);
}

TEST_CASE("split plan: the step-26 header's shapes on 132 SMs", "[cpu][tile_menu]") {
  struct Case {
    int64_t m, n, k;
    int bn;
    bool split;
  };
  const Case cases[] = {
      {128, 4096, 14336, 128, true},   // 32 wide tiles split in 4: 56 + 64 K tiles, against 224 x 0.77 narrow whole
      {65, 4096, 14336, 128, true},    // the same grid
      {1024, 1024, 65536, 128, true},  // split in 2: 512 + 64 against 1024 x 0.77
      {4096, 256, 16384, 128, true},
      {128, 4096, 4096, 64, false},    // K = 4096: the fixup is not paid back, step 25's narrow tile
      {256, 4096, 4096, 64, false},
      {256, 4096, 14336, 64, false},   // 172.48 (narrow whole) against 176 (wide, split in 2): whole
      {2048, 2048, 32768, 128, false}, // 256 tiles: a wave or more, the step's wave rule
      {4096, 4096, 4096, 128, false},
  };
  for (const Case& c : cases) {
    INFO(shape(c.m, c.n, 132) + " K = " + std::to_string(c.k));
    const Plan p = plan(c.m, c.n, c.k, 132);
    CHECK_FALSE(p.tile.swap);
    CHECK(p.tile.bn == c.bn);
    CHECK(p.split == c.split);
  }
}

TEST_CASE("swapped tile sized to M: the narrowest wgmma N of 8, 16, 32, 64 that holds M", "[cpu][tile_menu]") {
  for (int64_t m = 1; m <= kSwapMaxM; ++m) {
    INFO("M = " << m);
    const int bn = swap_bn(m);
    CHECK((bn == 8 || bn == 16 || bn == 32 || bn == 64));
    CHECK(m <= bn);                     // all of M in one tile column: B is read once
    CHECK((bn == 8 || m > bn / 2));     // and no narrower width would hold it
  }
  CHECK(swap_bn(1) == 8);
  CHECK(swap_bn(8) == 8);
  CHECK(swap_bn(9) == 16);
  CHECK(swap_bn(32) == 32);
  CHECK(swap_bn(33) == 64);
  CHECK(swap_bn(kSwapMaxM + 1) == kSwapMaxM);
}

TEST_CASE("split-K in equal segments: block b is segment b % s of tile b / s, never crossing a tile", "[cpu][tile_menu]") {
  for (int64_t tiles : {1, 4, 32, 48, 66})
    for (int64_t k_tiles : {8, 9, 64, 65, 1024})
      for (int sms : {16, 132}) {
        const int64_t s = split_factor(tiles, k_tiles, sms);
        if (s < 2) continue;
        const gemm::stream_k::Split sp = gemm::stream_k::make_split_k(tiles, k_tiles, s);
        INFO(tiles << " tiles of " << k_tiles << " K tiles, s = " << s);
        CHECK(sp.blocks == tiles * s);
        CHECK(sp.blocks <= sms);
        CHECK(sp.dp_tiles == 0);
        CHECK(sp.sk_tiles == tiles);
        CHECK(sp.iters == tiles * k_tiles);
        for (int b = 0; b < sp.blocks; ++b) {
          const int64_t t = b / s, j = b % s;
          CHECK(sp.start(b) == t * k_tiles + j * k_tiles / s);    // a segment boundary of its own tile
          CHECK(sp.start(b + 1) <= (t + 1) * k_tiles);           // and it ends inside that tile
          CHECK(sp.start(b + 1) - sp.start(b) >= kMinPiece);     // at least kMinPiece K tiles
          CHECK(sp.block_of(sp.start(b)) == b);
        }
      }
}

TEST_CASE("padded pitch: K rounded up to 64 elements, copied only off a sector and where the GEMM is compute-bound", "[cpu][tile_menu]") {
  CHECK(padded_pitch(1) == 64);
  CHECK(padded_pitch(64) == 64);
  CHECK(padded_pitch(5000) == 5056);
  CHECK(padded_pitch(4096) == 4096);
  CHECK(repack_pitch(5000, 5000, 5000));          // the sweep's ragged shape: 1/2500 <= 1/1152
  CHECK_FALSE(repack_pitch(5000, 5000, 4992));    // K on the line: nothing to copy
  CHECK_FALSE(repack_pitch(4000, 4000, 4000));    // 64 bytes off the line but on a sector: measured, the copy lost
  CHECK(repack_pitch(8200, 8200, 8200));          // 16 bytes off: inside a sector
  CHECK_FALSE(repack_pitch(8200, 8200, 8192));
  CHECK_FALSE(repack_pitch(1, 4096, 4104));       // memory-bound: the copy would triple the bytes
  CHECK_FALSE(repack_pitch(64, 16384, 5000));
  CHECK(repack_pitch(2504, 2504, 2504));          // 1/1252: measured, the copy paid (104 -> 94 us)
  CHECK(repack_pitch(2304, 2304, 2504));          // exactly 1/1152, 2.7e10 FLOP
  CHECK_FALSE(repack_pitch(2304, 2304, 2496));    // the same, on a sector
  CHECK_FALSE(repack_pitch(2008, 2008, 2008));    // 1/1004: measured, break-even (53 -> 54 us)
  CHECK_FALSE(repack_pitch(1024, 8192, 4104));    // 1/910: measured, break-even (189 -> 193 us)
  CHECK_FALSE(repack_pitch(2048, 2048, 3080));    // 1/1024: measured, break-even (74.5 -> 76.2 us)
  CHECK_FALSE(repack_pitch(2048, 2048, 32776));   // 1/1024: the copy paid (823 -> 685 us), long K: not modelled
  CHECK_FALSE(repack_pitch(2560, 2560, 1800));    // 1/1280 but 2.4e10 FLOP: too short a GEMM
  CHECK_FALSE(repack_pitch(256, 4096, 4104));     // memory-bound: measured, the copy lost (42 -> 72 us)
  CHECK_FALSE(repack_pitch(4096, 4096, 40));      // one K tile: too little GEMM to pay two copy launches
  for (int64_t m : {1, 100, 1536, 3072, 5000, 65536})
    for (int64_t n : {1, 100, 1536, 3072, 5000, 65536})
      for (int64_t k : {8, 1000, 4096, 5000, 100000}) {
        INFO(m << " x " << n << " x " << k);
        const bool r = repack_pitch(m, n, k);
        if (k % kSectorElems == 0) CHECK_FALSE(r);
        if (r) CHECK((m * n >= kRepackMinDim * (m + n) && 2.0 * m * n * k >= double(kRepackMinFlop)));
        CHECK(padded_pitch(k) % kPitchElems == 0);
        CHECK(padded_pitch(k) >= k);
        CHECK(padded_pitch(k) < k + kPitchElems);
      }
}
