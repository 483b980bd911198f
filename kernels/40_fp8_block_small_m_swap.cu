// Step 40 — block-scaled FP8 at small M, swapped, on step 36. One lesson: block scales follow the swap
// through the ring. Swapped (step 38's C^T = B * A^T on 64 x 16, 32 or 64 tiles), a slab's 64 rows are
// B's and lie in one 128-row block of B (one sfb value), but its columns are A's rows, each with its own
// sfa value: a thread's fragment spans BN / 4 columns, so each K tile needs BN / 4 scales a thread, where
// step 36's unswapped tile needs 2. Read by every consumer thread from global memory (a measurement
// build of 36, H100), they made the 64-wide tile 0.50x cuBLASLt at 64 x 4096 x 7168. Here a second
// producer warp's lanes copy the tile's BN sfa values and its sfb value into the stage with 4-byte cp.async
// (any M), each lane's arrive on the full barrier firing as its copies land (cp.async.mbarrier.arrive.noinc);
// the consumers read them from shared memory after the same wait that gives them the tiles, and each
// lane frees the stage itself (family/producer.cuh's copy_ring_scales, mainloop.cuh's
// BlockScales::load_ring and release_read_stage).
// Prediction: M <= 64 from 36's 0.74-1.07x cuBLASLt block-scaled (H100; M = 1 against the per-tensor
// stand-in) to at least 1.0x at every decode shape: the swapped tile's smaller stages and twice the
// tiles (step 38's gain), without the loads; M > 64 unchanged (36's kernel and plan). Measured (H200,
// 2026-12-07, warp 0 copying): 0.58-0.88x at four decode shapes, 1.23x at 64 x 2112 x 7168, where 36
// ran 0.76-1.13x: the prediction failed (docs/fp8.md, step 40). Warp 1 copying: 3-13 % faster (H100).
// SASS: the swapped loop: two K tiles of 4 QGMMA.64xWx32, DEPBAR.LE gsb0, 0x1, W FFMA a thread, LDS of
// the scales and no LDG; the producer's LDGSTS.E.ZFILL and ARRIVES.LDGSTSBAR.64.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=40 M=64 N=4096 K=7168
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step40 {

namespace fam = gemm::family;
constexpr char ID[] = "40";

// The configurations this step instantiates: 36's 128-row tile for M > 64, and for M <= 64 a swapped
// 64-row tile of C^T whose W columns hold all of M, its block scales in the ring (menu::fit: the most
// stages its shared memory holds).
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::block}> {};
template <int W>
struct Swapped : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .bn = W, .swap = true, .accum = fam::Accum::two_sets,
                                             .scales = fam::Scales::block, .bm = 64})> {};
constexpr int kSwapMaxM = 64;  ///< M <= this runs swapped: all of M in one tile column

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs, step 36's with the tile swapped at
/// M <= 64 (the narrowest of 16, 32, 64 that holds M). Under one wave, split-K into s equal segments
/// where family::split_pays says (it counts the kernel's tiles: C^T's); a wave or more, 23's wave rule.
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m > kSwapMaxM ? Block::spec : m <= 16 ? Swapped<16>::spec : m <= 32 ? Swapped<32>::spec : Swapped<64>::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms);  // (family/plan.hpp)
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
    .name = "fp8_block_small_m_swap",
    .parent = "36",
    .technique = "block-scaled FP8 at M <= 64 swapped: A's scales, one per column of C^T, copied into each stage by a second producer warp (4-byte cp.async, arriving as they land) and read from shared memory",
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

}  // namespace step40
