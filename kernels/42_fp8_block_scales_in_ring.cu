// Step 42 — the 128-row tile's block scales in the ring, on step 41. One lesson: step 40's ring scales
// pay on the large tile too. Step 36's 128 x 128 tile (41's for M > 64) loads each K tile's scales from
// global memory (LDG) as a K tile's wgmmas are issued, and multiplies them (sfa * sfb) between the next
// full-barrier wait and the next wgmmas: where the L2 answers later than that, the tensor cores wait.
// ncu at 4096^3 (H100, 2026-12-08): tensor pipe 59.6 % busy (cuBLASLt 72 %), a third of all warps'
// stall cycles on L1TEX (2.1 of 5.9 a warp between issues). Now warp 1 of the producer warpgroup copies
// the tile's 128 `sfa` values and its one `sfb` into the stage (copy_ring_scales, step 40's) and the
// consumers read them from shared memory after the same full-barrier wait as the boxes. The ring's
// scales cost its sixth stage: 5 stages of 32 KB (menu::fit).
// Prediction: at M > 64 the L1TEX stalls mostly gone and the tensor pipe toward cuBLASLt's 72 %: 4096^3
// and 8192^3 from 0.94x cuBLASLt block-scaled to about 1.0x on an H100, from about 1.0x to 1.05x on the
// H200; M <= 64 unchanged (41's kernels and plan).
// SASS: the 128-row kernel's loop: no LDG; LDS of the scales after each full wait; LDGSTS.E.ZFILL and
// ARRIVES.LDGSTSBAR.64 in the producer, as the swapped kernels have (make diff B=42).
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=42 M=4096 N=4096 K=4096
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step42 {

namespace fam = gemm::family;
constexpr char ID[] = "42";

#ifndef STEP42_RING_SCALES
#define STEP42_RING_SCALES true  // make fp8-variants builds false: 41's loads at these 5 stages, to measure the stages alone
#endif

// Step 41's configurations, the 128-row tile's scales in the ring (menu::fit: the stages that fit beside them, 5).
constexpr fam::Spec block_spec() {
  fam::Spec s = fam::menu::fit({.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative, .accum = fam::Accum::two_sets,
                                .scales = fam::Scales::block, .ring_scales = true});
  s.ring_scales = STEP42_RING_SCALES;
  return s;
}
struct Block : fam::Config<block_spec()> {};
template <int W>
struct Swapped : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .bn = W, .swap = true, .accum = fam::Accum::two_sets,
                                             .scales = fam::Scales::block, .bm = 64})> {};
constexpr int kSwapMaxM = 64;  ///< M <= this runs swapped: all of M in one tile column

/// The policy: step 41's (family::fixup_k_tiles prices a swapped tile's fixup; under one wave, split-K
/// into s equal segments where family::split_pays says; a wave or more, 23's wave rule).
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
    .name = "fp8_block_scales_in_ring",
    .parent = "41",
    .technique = "block-scaled FP8, the 128-row tile's scales copied into the ring with their stage (128 sfa and one sfb a K tile, cp.async by the producer's warp 1) and read from shared memory after the full wait: no scale load in the K loop",
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

}  // namespace step42
