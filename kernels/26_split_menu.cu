// Step 26 — the menu prices the split, on step 25. One lesson: step 25 picked the tile by whole-tile
// rounds and left stream-K to the split rule on the chosen grid, which never splits a grid of sms / 4
// to sms tiles (23's wave limit, measured at K = 4096). So at 128 x 4096 x 14336 it ran 64 narrow
// tiles on 64 SMs, 224 K tiles each; at 1024 x 1024 x 65536, 128 narrow tiles of 1024 K tiles. Now
// tile_menu::plan costs each tile whole and, below half a wave, split-K: s = floor(SMs / tiles) equal
// K segments per tile, one block each (ceil(k_tiles / s) K tiles plus a fixup of kSplitFixupKTiles),
// and takes the cheapest; the split follows it (SplitPolicy::planned, and 25's quarter-wave rule).
// Equal segments, not stream-K's even share over every SM: the blocks of a segment walk K in step, so
// tiles sharing a panel of A or B read it from L2 together. The split pays where K is long.
// Prediction (against step 25, 2026-12-03 sweep, by the plan's own estimates): 128 x 4096 x 14336:
// the wide split in 4, 120 / 172 of 25's time (~51 -> ~36 us); 1024 x 1024 x 65536: the wide split in
// 2 on 128 SMs, 576 / 788 (~270 -> ~197 us); every other sweep shape: 25's plan, 25's time.
// SASS: the kernels are 25's (the same three configurations); only the host's choice changes (make
// diff B=26).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=26 M=1024 N=1024 K=65536
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step26 {

namespace fam = gemm::family;
namespace menu = gemm::tile_menu;
constexpr char ID[] = "26";

// The configurations this step instantiates (one kernel each).
struct Wide : fam::Config<fam::Spec{.bn = 128}> {};                  // 128 x 128 ping-pong: step 23's
struct Narrow : fam::Config<fam::Spec{.bn = 64}> {};                 // 128 x 64: twice the tiles
struct Swapped : fam::Config<fam::Spec{.bn = 64, .swap = true}> {};  // 128 x 64 tiles of C^T
static_assert(Wide::BM == menu::kBM && Narrow::BN == 64, "the menu costs the tiles this step runs");
static_assert(Swapped::BN == menu::kSwapMaxM, "a swapped problem's M fits one tile column: B is read once");

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs: the menu's tile and split
/// (tile_menu::plan). Below one wave the grid splits K into equal segments where the plan says so and,
/// as in 25, under a quarter wave where the idle-time rule does (kept from 25, not measured).
fam::Plan plan(int m, int n, int k, int sms) {
  const menu::Plan mp = menu::plan(m, n, k, sms);
  const fam::Spec spec = mp.tile.swap ? Swapped::spec : mp.tile.bn == Narrow::BN ? Narrow::spec : Wide::spec;
  return fam::make_plan({m, n, k}, spec, {.wave_limits = !mp.tile.swap, .split_k = true, .planned = mp.split}, false, sms);
}

/// 23's limits, for the problem the kernel runs on the menu's tile (swapped: C^T's tiles). The tile
/// count is judged for the narrowest tile, so the answer does not depend on the GPU's SM count.
std::optional<std::string> unsupported(int m, int n, int k) {
  if (m <= menu::kSwapMaxM) return gemm::tma_persistent_gemm_refusal(n, m, k, Swapped::BM, Swapped::BN);
  return gemm::tma_persistent_gemm_refusal(m, n, k, Narrow::BM, Narrow::BN);
}

// Registered launcher: C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major
// bf16)^T, fp32 accumulation, as plan() says. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "split_menu",
    .parent = "25",
    .technique = "the menu prices the split: below half a wave, each tile whole or split-K in equal segments, fixup included (tile_menu::plan)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &fam::step_launch<ID, plan, Wide, Narrow, Swapped>,  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Wide::BM, Wide::BN, Wide::BK, Wide::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true},
});

}  // namespace step26
