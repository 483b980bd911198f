// Step 25 — a tile shape per problem, on step 24. One lesson: the policy picks the consumer tile
// from a menu by a pure host function (common/kernel_lib/tile_menu.hpp, unit-tested and drawn), the
// choice cuBLAS makes inside among its hundreds of kernels. The menu is swapped 128 x 64 (M <= 64, step
// 24's), 128 x 128 (23's) and 128 x 64 unswapped (a third configuration, Narrow), which doubles the
// tiles of a grid that leaves SMs idle. A ping-pong block runs one mainloop at a time, so the kernel
// takes ceil(tiles / SMs) rounds of one tile's K loop; the menu picks 128 x 64 where twice the tiles
// cost fewer rounds-times-tile-cost: 256 x 4096 (64 tiles of 128 x 128 in one round on 64 SMs; 128
// narrow tiles, one round on 128 SMs), 1024 x 1024 x 65536; not 4096^3 (8 rounds against 16). Step
// 24's split rule then runs on the chosen grid, unchanged.
// Prediction: where the narrow tile is picked, 128 x 128's time x kNarrowCostPct (77 %, measured; the
// bases are the first probe's forced 128 x 128 runs): 256 x 4096 x 4096 ~27 -> ~21 us, 256 x 4096 x
// 14336 ~68 -> ~53 us. Unchanged (the same kernel, 128 x 128) wherever the narrow grid needs too many
// more rounds (rounds x 77 >= wide rounds x 100: 4096^3, 4096 x 768), and at M <= 64.
// SASS: a third kernel, gemm_kernel<step25::Narrow>, runs HGMMA.64x64x16.F32.BF16 (8 per K tile) with
// the TMA store epilogue; Wide and Swapped are 24's (make diff B=25).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=25 M=256 N=4096 K=14336
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step25 {

namespace fam = gemm::family;
namespace menu = gemm::tile_menu;
constexpr char ID[] = "25";

// The configurations this step instantiates (one kernel each).
struct Wide : fam::Config<fam::Spec{.bn = 128}> {};                  // 128 x 128 ping-pong: step 23's
struct Narrow : fam::Config<fam::Spec{.bn = 64}> {};                 // 128 x 64: twice the tiles
struct Swapped : fam::Config<fam::Spec{.bn = 64, .swap = true}> {};  // 128 x 64 tiles of C^T
static_assert(Wide::BM == menu::kBM && Narrow::BN == 64, "the menu costs the tiles this step runs");
static_assert(Swapped::BN == menu::kSwapMaxM, "a swapped problem's M fits one tile column: B is read once");
#ifndef STEP25_FORCE_BN
#define STEP25_FORCE_BN 0  // 0: the menu picks; 64 or 128: that tile for every M > kSwapMaxM (for measuring the menu)
#endif

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs: the menu's tile (tile_menu::choose;
/// STEP25_FORCE_BN, when set at build time, overrides it for M > kSwapMaxM so each tile can be
/// measured everywhere), then 24's split on that tile's grid.
fam::Plan plan(int m, int n, int k, int sms) {
  const menu::Tile t = menu::choose(m, n, k, sms);
  const int bn = STEP25_FORCE_BN != 0 && !t.swap ? STEP25_FORCE_BN : t.bn;
  const fam::Spec spec = t.swap ? Swapped::spec : bn == Narrow::BN ? Narrow::spec : Wide::spec;
  return fam::make_plan({m, n, k}, spec, {.wave_limits = !t.swap}, false, sms);
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
    .name = "tile_menu",
    .parent = "24",
    .technique = "a tile per problem: swapped 128x64, 128x128 or 128x64 picked by a wave-quantization cost model (tile_menu::choose)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &fam::step_launch<ID, plan, Wide, Narrow, Swapped>,  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Wide::BM, Wide::BN, Wide::BK, Wide::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true},
});

}  // namespace step25
