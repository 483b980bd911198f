// Step 36 — the short tile's promotion in the shadow of its next wgmmas, on step 35. One lesson: step
// 34's two sets of tensor-core accumulators fit any consumer that holds one m64 slab, and 35's 64-row
// ping-pong consumer holds one. Under 35's split-K a decode GEMM's block holds one item, so one of its
// two ping-pong consumers works and the other never gets an item; that one consumer drained the tensor
// cores before every promotion (31's wait_group 0), so each K tile cost the wgmmas' latency, then 64
// FFMAs, then the next wgmmas (measured: 0.78x cuBLASLt block-scaled at M = 16 on (7168, 16384), 0.80x
// at M = 64, B read at 2.2 TB/s). With two sets, K tile i's wgmmas go into tc[i % 2] and wait_group 1
// retires only K tile i - 1's group, promoted while i's runs (34's loop; the order barrier passed after
// the item's last full wait, as 22 does).
// Prediction: M <= 64 on (7168, 16384) from 0.78-0.80x to about 0.95x (the loop bound by the wgmmas
// and the loads, not their latency plus the FFMAs); M > 64 unchanged (34's kernel, 35's plans).
// SASS: the short kernel's hottest loop: two K tiles of 4 QGMMA.64x128x32 each, WARPGROUP.DEPBAR.LE
// gsb0, 0x1 and no 0x0 in it, 128 FFMA (35's short loop had one K tile and a 0x0 drain).
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=36 M=16 N=7168 K=16384
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step36 {

namespace fam = gemm::family;
constexpr char ID[] = "36";

// The configurations this step instantiates: 34's, and 35's 64-row ping-pong tile with 34's two sets.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::block}> {};
// (menu::fit: the most stages its shared memory holds, 8 of 24 KB.)
struct Short : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .accum = fam::Accum::two_sets, .scales = fam::Scales::block, .bm = 64})> {};
constexpr int kShortMaxM = Short::BM;  ///< M <= this runs the 64-row tile (one tile row either way)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs. The tile: Short for M <= 64, else
/// Block. Under one wave, split-K into s = tile_menu::split_factor equal segments (s >= 2) where
/// ceil(k_tiles / s) + kFixupKTiles < k_tiles, or under a quarter wave where family::choose_split's
/// idle rule says; a wave or more: 23's wave rule, as in 34.
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m <= kShortMaxM ? Short::spec : Block::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms);  // (family/plan.hpp)
  return fam::make_plan({m, n, k}, spec, {.wave_limits = true, .split_k = true, .planned = split}, false, sms);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, Short::BM, Short::BN);  // the tile count of the smaller tile
}

// Registered launcher: C (M x N, row-major bf16) = sum over K blocks kb of (A (M x K, row-major
// e4m3) * B (N x K, row-major e4m3)^T over kb's 128 K) with row i, column j scaled by sfa[kb][i] *
// sfb[j / 128][kb] (Scaling::block, registry.hpp; device memory), as plan() says; a K tail block is
// zero-filled by TMA and scaled by its own scales. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_short_two_sets",
    .parent = "35",
    .technique = "the 64-row ping-pong tile of small M with two sets of tensor-core accumulators: each K tile promoted under the next one's wgmmas (34's loop)",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, Block, Short>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::block,
    .accumulation = fam::step_accumulation<Block, Short>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Block::BM, Block::BN, Block::BK, Block::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .split_k = true},
});

}  // namespace step36
