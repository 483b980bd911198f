// Step 41 — block-scaled FP8 at decode shapes, idle SMs put to work, on step 40. One lesson: price the fixup by
// its bytes. Under one wave, step 40 splits a swapped grid only where a segment plus 21's fixup price,
// 32 K tiles, is shorter than K: at 64 x 4096 x 7168 its 64 tiles of 56 K tiles run on 64 of 132 SMs,
// and at 16 x 7168 x 16384 its 112 tiles on 112. A decode GEMM is bound by reading B, and an idle SM is
// a stream of B not read (step 24's reason). The fixup of a 64 x W tile of C^T writes and reads back
// 64 W fp32 partials, 1-2 stages' bytes (family::fixup_k_tiles), not 32. Priced so, the grid splits into
// equal K segments where two or more fit (64 tiles: 128 blocks of 28 K tiles).
// Prediction: at 64 tiles (64 x 4096 x 7168, 1 x 4096 x 7168) 1.3-2x step 40's speed: 64 blocks of
// step 38 drew 2.16 TB/s, under half the H200's; elsewhere unchanged. Measured (H100, 2026-12-07):
// step 40's time over 41's 1.26x and 1.14x there; 1.084x cuBLASLt and 0.880x its per-tensor stand-in
// (docs/fp8.md, step 41). Stream-K where no second segment fits (112 tiles) ran 3-5 % slower: dropped.
// SASS: step 40's kernels (the plan alone changes): the swapped loop's QGMMA.64xWx32, LDS of the scales,
// LDGSTS.E.ZFILL and ARRIVES.LDGSTSBAR.64.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=41 M=64 N=4096 K=7168
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step41 {

namespace fam = gemm::family;
constexpr char ID[] = "41";

// Step 40's configurations: 36's 128-row tile for M > 64, a swapped 64 x 16, 32 or 64 tile with its
// block scales in the ring for M <= 64.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::block}> {};
template <int W>
struct Swapped : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .bn = W, .swap = true, .accum = fam::Accum::two_sets,
                                             .scales = fam::Scales::block, .bm = 64})> {};
#ifndef STEP41_SWAP_MAX_M
#define STEP41_SWAP_MAX_M 64  // make fp8-variants builds 128: M <= 128 swapped on 64 x 64 tiles of C^T, two tile
#endif                        // columns past 64 (cuBLASLt's per-tensor tiles at M = 128 take 64 of M), to measure
constexpr int kSwapMaxM = STEP41_SWAP_MAX_M;  ///< M <= this runs swapped: all of M in one tile column (64)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs, step 40's with the fixup of a
/// swapped tile (M <= 64) priced by its bytes (family::fixup_k_tiles: 1 K tile for 64 x 16, 2 for 64 x 32
/// and 64 x 64): under one wave, split-K into s equal segments where
/// family::split_pays says at that price; a wave or more, 23's wave rule. M > 64: step 40's (36's).
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m > kSwapMaxM ? Block::spec : m <= 16 ? Swapped<16>::spec : m <= 32 ? Swapped<32>::spec : Swapped<64>::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms, spec.swap ? fam::fixup_k_tiles(spec) : fam::kFixupKTiles);  // (family/plan.hpp)
  return fam::make_plan({m, n, k}, spec, {.wave_limits = true, .split_k = true, .planned = split}, false, sms);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  // 64 x 16 tiles of C: at least as many as any plan of this step makes (swapped: C^T's 64 x W), a bound.
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, Swapped<16>::BM, Swapped<16>::BN);
}

// Registered launcher: C (M x N, row-major bf16) = sum over K blocks kb of (A (M x K, row-major
// e4m3) * B (N x K, row-major e4m3)^T over kb's 128 K) with row i, column j scaled by sfa[kb][i] *
// sfb[j / 128][kb] (Scaling::block, registry.hpp; device memory), as plan() says; swapped, the kernel
// computes C^T and stores it transposed. A K tail block is zero-filled by TMA and scaled by its own
// scales. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_decode_every_sm",
    .parent = "40",
    .technique = "block-scaled FP8 at M <= 64, idle SMs put to work: the split-K fixup priced by its bytes (1-2 K tiles for a 64 x W tile, not 32), so a swapped grid under one wave splits K instead of idling SMs",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, Block, Swapped<16>, Swapped<32>, Swapped<64>>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::block,
    .accumulation = fam::step_accumulation<Block, Swapped<16>>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Block::BM, Block::BN, Block::BK, Block::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .split_k = true, .swap_sized = true},
});

}  // namespace step41
