// Step 28 — a row pitch off the 32-byte sector, on step 27. One lesson: TMA loads each K tile as one
// 128-byte row (64 bf16) from each of the tile's rows. When K's row pitch, 2K bytes, is not a multiple
// of 32, every other one of those rows starts inside a 32-byte L2 sector and touches five, and steps
// 24-27 run 5000^3 at half of cuBLAS (ncu: about 3x the L2 requests of K = 4992). Where that is so and the
// GEMM is compute-bound (tile_menu::repack_pitch: K % 16 == 8, 1/M + 1/N <= 1/1152, 2.5e10 FLOP or
// more), the plan has the launcher first copy A and B to a pitch of a whole number of K tiles (K rounded
// up to 64) in the workspace with cudaMemcpy2DAsync, then run 27's plan on the copies; the tensor maps
// keep K as the extent, so TMA zero-fills the pad and it is never read. The copy is in every timed launch.
// Prediction (5000^3, 2026-12-03 sweep: 27 at 0.498x cuBLAS, 746 us; step 25's K = 5056 probe: 0.924x):
// copies move 200 MB, about 60 us at ~3.4 TB/s, and the GEMM then runs at the aligned speed, about
// 0.92x cuBLAS: about 400 + 60 us, 0.80x cuBLAS. Unchanged wherever repack_pitch is false (every
// other sweep shape: their K is a multiple of 64).
// SASS: the kernels are 27's (the same six configurations); only the host changes (make diff B=28).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=28 M=5000 N=5000 K=5000
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step28 {

namespace fam = gemm::family;
namespace menu = gemm::tile_menu;
constexpr char ID[] = "28";

// The configurations this step instantiates (one kernel each).
struct Wide : fam::Config<fam::Spec{.bn = 128}> {};                  // 128 x 128 ping-pong: step 23's
struct Narrow : fam::Config<fam::Spec{.bn = 64}> {};                 // 128 x 64: twice the tiles
template <int TN>
struct Swapped : fam::Config<fam::Spec{.bn = TN, .swap = true}> {};  // 128 x TN tiles of C^T, TN = swap_bn(M)
static_assert(Wide::BM == menu::kBM && Narrow::BN == 64, "the menu costs the tiles this step runs");
static_assert(Swapped<64>::BN == menu::kSwapMaxM, "a swapped problem's M fits one tile column: B is read once");
static_assert(Wide::BK == menu::kPitchElems, "the copies' pitch, a whole number of K tiles, is the one repack_pitch costs");
#ifndef STEP28_ALWAYS_REPACK
#define STEP28_ALWAYS_REPACK 0  // 1: copy wherever K % 16 != 0, whatever the shape (for measuring repack_pitch)
#endif

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
/// as in 25, under a quarter wave where the idle-time rule does (kept from 25, not measured). A and B
/// are read from copies at a padded pitch where tile_menu::repack_pitch says (rows inside a 32-byte
/// sector, a compute-bound shape); the plan puts the copies after the split's part of the workspace.
fam::Plan plan(int m, int n, int k, int sms) {
  const menu::Plan mp = menu::plan(m, n, k, sms);
  const fam::Spec spec = mp.tile.swap ? swapped_spec(m) : mp.tile.bn == Narrow::BN ? Narrow::spec : Wide::spec;
  const bool pad = STEP28_ALWAYS_REPACK ? k % menu::kSectorElems != 0 : menu::repack_pitch(m, n, k);
  return fam::make_plan({m, n, k}, spec, {.wave_limits = !mp.tile.swap, .split_k = true, .planned = mp.split}, pad, sms);
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
    .name = "pad_pitch",
    .parent = "27",
    .technique = "rows that start inside a 32-byte sector copied to a 128-byte pitch first where the GEMM is compute-bound (tile_menu::repack_pitch)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &fam::step_launch<ID, plan, Wide, Narrow, Swapped<8>, Swapped<16>, Swapped<32>, Swapped<64>>,  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Wide::BM, Wide::BN, Wide::BK, Wide::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true, .swap_sized = true, .pad_pitch = true},
});

}  // namespace step28
