// The family's host side (common/kernel_lib/family/, steps 24 on) on the CPU: the one split rule
// (choose_split) at the worked examples of steps 21-26 and as a partition of every split tile's K tiles
// on random shapes; the plan (make_plan): the kernel's problem, tile grid, pitch and workspace layout;
// and which Specs the parts can assemble.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../common/kernel_lib/family/plan.hpp"

using namespace gemm::family;
using gemm::stream_k::Split;

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

TEST_CASE("family plan: an SM count below 1 counts as 1", "[cpu][family]") {
  const Plan p = make_plan({1000, 1000, 1000}, kWide, {}, false, 0);
  CHECK(p.split.blocks == 1);
  check_partition(p.split, p.k_tiles);
}

TEST_CASE("family config: which Specs the parts assemble, and their shared memory", "[cpu][family]") {
  for (const Spec s : {kWide, kNarrow, kSwapped8, kFp8, kFp8Coop, Spec{.bn = 16, .swap = true}, Spec{.bn = 256, .stages = 4}}) {
    INFO("bn " << s.bn << " stages " << s.stages);
    CHECK(refusal(s) == nullptr);
    CHECK(smem_bytes(s) <= 227 * 1024);
  }
  // 6 stages of 128 x 64 + 128 x 64 bf16 (32 KB), four 8 KB epilogue boxes, the barriers, the slack.
  CHECK(smem_bytes(kWide) == 6 * 32768 + 4 * 8192 + 1024 + 1024);
  CHECK(refusal(Spec{.bn = 12}) != nullptr);                         // wgmma N is a multiple of 8
  CHECK(refusal(Spec{.bn = 264}) != nullptr);                        // ... at most 256
  CHECK(refusal(Spec{.bn = 8}) != nullptr);                          // unswapped: whole 64-wide epilogue boxes
  CHECK(refusal(Spec{.accum = Accum::promoted}) != nullptr);         // bf16 is not promoted
  CHECK(refusal(Spec{.elem = Elem::e4m3}) != nullptr);               // e4m3 needs scales
  CHECK(refusal(Spec{.elem = Elem::e4m3, .accum = Accum::two_sets, .scales = Scales::block}) != nullptr);  // two sets: cooperative
  CHECK(refusal(Spec{.elem = Elem::e4m3, .swap = true, .accum = Accum::promoted, .scales = Scales::block}) != nullptr);
  CHECK(refusal(Spec{.bn = 256, .stages = 6}) != nullptr);           // 6 stages of 48 KB do not fit 227 KB
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 192, .scales = Scales::per_tensor, .stages = 4}) == nullptr);  // any wgmma N
  CHECK(refusal(Spec{.elem = Elem::e4m3, .bn = 64, .accum = Accum::promoted, .scales = Scales::block}) != nullptr);  // one B block a tile
}
