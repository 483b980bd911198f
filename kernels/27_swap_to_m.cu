// Step 27 — the swapped tile sized to M, on step 26. One lesson: steps 24-26 run every M <= 64
// swapped on a 128 x 64 tile of C^T, so at M = 1 a decode GEMM pays for 64 columns where it has one:
// the A box, the wgmmas and, where the grid is split, every fp32 partial a block stores for the fixup
// (32 KB per piece) and the last piece's consumer reads back, piece after piece, while the rest of the
// GPU waits. Now the tile is 128 x swap_bn(M), the narrowest wgmma N of 8, 16, 32, 64 that holds M
// (tile_menu::swap_bn): at M <= 8 a partial is 4 KB. (The family's fixup unrolls its loop
// FIXUP_BATCH times, 16 float4 of loads at each width, in the same order of adds; that batches only
// tiles of that many pieces, 8 at n8, and the split tiles of the sweep have 3-5.)
// Prediction (against step 26, by ncu's kernel time at 1 x 4096 x 4096: 20.5 us, cuBLAS's split-K
// kernel 13.0 + its reduction 3.1): the fixup's reads of 4-5 pieces of 32 KB per tile (the last
// block's tail, ~3-4 us) shrink 8x at M <= 8 and 2x at M = 32: M = 1 and 4 shapes ~15 % faster, M = 32
// ~5 %; nothing changes at M > 64 (the kernels and plan are 26's there).
// SASS: three more kernels, gemm_kernel<step27::Swapped<8>>, <16>, <32> (wgmma m64n8k16, m64n16k16,
// m64n32k16: HGMMA.64x8x16 ... in the dump); the others are 26's (make diff B=27).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=27 M=1 N=4096 K=4096
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step27 {

namespace fam = gemm::family;
namespace menu = gemm::tile_menu;
constexpr char ID[] = "27";

// The configurations this step instantiates (one kernel each).
struct Wide : fam::Config<fam::Spec{.bn = 128}> {};                  // 128 x 128 ping-pong: step 23's
struct Narrow : fam::Config<fam::Spec{.bn = 64}> {};                 // 128 x 64: twice the tiles
template <int TN>
struct Swapped : fam::Config<fam::Spec{.bn = TN, .swap = true}> {};  // 128 x TN tiles of C^T, TN = swap_bn(M)
static_assert(Wide::BM == menu::kBM && Narrow::BN == 64, "the menu costs the tiles this step runs");
static_assert(Swapped<64>::BN == menu::kSwapMaxM, "a swapped problem's M fits one tile column: B is read once");

/// The swapped configuration for M (1 <= m <= kSwapMaxM): its tile is swap_bn(M) wide.
fam::Spec swapped_spec(int m) {
  switch (menu::swap_bn(m)) {
    case 8: return Swapped<8>::spec;
    case 16: return Swapped<16>::spec;
    case 32: return Swapped<32>::spec;
    default: return Swapped<64>::spec;
  }
}

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs: the menu's tile and split
/// (tile_menu::plan). Below one wave the grid splits K into equal segments where the plan says so and,
/// as in 25, under a quarter wave where the idle-time rule does (kept from 25, not measured).
fam::Plan plan(int m, int n, int k, int sms) {
  const menu::Plan mp = menu::plan(m, n, k, sms);
  const fam::Spec spec = mp.tile.swap ? swapped_spec(m) : mp.tile.bn == Narrow::BN ? Narrow::spec : Wide::spec;
  return fam::make_plan({m, n, k}, spec, {.wave_limits = !mp.tile.swap, .split_k = true, .planned = mp.split}, false, sms);
}

/// 23's limits, for the problem the kernel runs on the menu's tile (swapped: C^T's tiles). The tile
/// count is judged for the narrowest tile, so the answer does not depend on the GPU's SM count.
std::optional<std::string> unsupported(int m, int n, int k) {
  if (m <= menu::kSwapMaxM) return gemm::tma_persistent_gemm_refusal(n, m, k, Swapped<64>::BM, Swapped<64>::BN);
  return gemm::tma_persistent_gemm_refusal(m, n, k, Narrow::BM, Narrow::BN);
}

// Registered launcher: C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major
// bf16)^T, fp32 accumulation, as plan() says. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "swap_to_m",
    .parent = "26",
    .technique = "the swapped tile sized to M: wgmma N of 8, 16, 32 or 64 (tile_menu::swap_bn), partials and fixup with it",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &fam::step_launch<ID, plan, Wide, Narrow, Swapped<8>, Swapped<16>, Swapped<32>, Swapped<64>>,  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Wide::BM, Wide::BN, Wide::BK, Wide::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true, .swap_sized = true},
});

}  // namespace step27
