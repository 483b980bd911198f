// Step 35 — FP8 takes the shape rules, on step 34. One lesson: the shape work of steps 24-28 is policy
// over the family, so a block-scaled FP8 step gets it by choosing configurations, not by a new kernel.
// Step 34 runs every shape on one 128 x 128 tile under 23's wave rule, which never splits a grid of a
// quarter to one wave: at 128 x 7168 x 16384 that is 56 tiles on 56 of 132 SMs, each with all 128 K
// tiles, reading B (117 MB, the whole cost at ~4.3 TB/s) through 56 SMs; at M = 16 each tile is 112
// rows of zeros. Here M <= 64 runs a 64-row ping-pong tile (one m64 slab, 31's promotion with 32's
// block scales: half the zero rows), and a grid under one wave splits K into s = floor(SMs / tiles)
// equal segments, one block each (step 26's split-K), wherever a segment plus the fixup (21's
// kFixupKTiles) is shorter than a whole tile's K loop (and, kept from 26, under a quarter wave where
// idle SMs would wait longer than the fixup).
// Prediction: 128 x 7168 x 16384 from 56 to 112 blocks of 64 K tiles: 0.74x -> about 0.95x cuBLASLt
// block-scaled; M = 16 on the same (N, K): 0.63x -> about 0.9x (HBM-bound on B); N = 2112, K = 7168:
// 17 tiles of 56 K tiles -> 119 blocks of 8; unchanged from 34 wherever the grid has a wave or more.
// SASS: 34's kernel, and a ping-pong one with one slab: QGMMA.64x128x32 and 64 FFMA per promotion.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=35 M=128 N=7168 K=16384
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu_launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step35 {

namespace fam = gemm::family;
constexpr char ID[] = "35";

#ifndef STEP35_CLUSTER_M
#define STEP35_CLUSTER_M 1  // make fp8-variants builds 2: 34's tile in pairs along M sharing B (step 17), to measure
#endif                      // at a wave or more with even tile rows (the split rule below counts tiles, not pairs)

// The configurations this step instantiates: 34's, and a 64-row ping-pong tile for small M.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::block,
                                     .cluster_m = STEP35_CLUSTER_M}> {};
// (menu::fit: the most stages its shared memory holds, 8 of 24 KB.)
struct Short : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .accum = fam::Accum::promoted, .scales = fam::Scales::block, .bm = 64})> {};
constexpr int kShortMaxM = Short::BM;  ///< M <= this runs the 64-row tile (one tile row either way)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs. The tile: Short for M <= 64, else
/// Block. Under one wave, split-K into s = tile_menu::split_factor equal segments (s >= 2) where
/// ceil(k_tiles / s) + kFixupKTiles < k_tiles, or under a quarter wave where family::choose_split's
/// idle rule says; a wave or more: 23's wave rule, as in 34.
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m <= kShortMaxM ? Short::spec : Block::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms);  // (family/plan.hpp)
  if (fam::cluster_size(spec) > 1) sms = fam::menu::plan_sms<Block>(sms);  // (the variant's pairs that fit at once)
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
    .name = "fp8_shapes",
    .parent = "34",
    .technique = "the shape rules on FP8: a 64-row tile for M <= 64 and split-K under one wave where a segment and the fixup beat a whole tile",
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

}  // namespace step35
