// Step 32 — FP8 block scaling: step 31 with DeepSeek-V3's fine-grained scales (Scales::block): one
// per 1 x 128 block of A (a row's 128 K) and one per 128 x 128 block of B. BK = 128 and BN = 128, so
// a K tile of a tile meets exactly one scale per row of A and one of B: the promotion multiplies each
// K tile's partial by sfa[kb][row] * sfb[nb][kb] as it adds it into the fp32 sums (the FADDs become
// FFMAs), and the epilogue has no scale left. The scales are plain loads by the consumer threads, each
// of its 4 rows of A (2 per m64 slab, the D fragment's rows) and the one sfb, issued a K tile ahead so
// the L2 latency hides under the current tile's wgmmas; no shared memory (the ring's 6 stages and the
// epilogue boxes leave under 1 KB of the 227) and no alignment demand on M (a TMA box of sfa rows
// would need M % 4 == 0).
// Why: one outlier no longer costs a whole tensor its precision: each block's largest |x| lands on
// 448 (docs/fp8.md). The partials are scaled fp32 before the fixup, so stream-K sums them as before.
// Prediction: 5 loads and 4 FMULs per K tile per thread beside 8 QGMMAs and 128 FFMAs: within ~3 % of
// step 31 (cuBLASLt block-scaled ran 1180 / 1213 TFLOP/s to per-tensor 1294 / 1352 here before); the
// error of real data drops, the error against the oracle of the dequantized product stays 31's.
// SASS: 31's loop with 128 FFMA in place of the FADDs, plus LDG.E (sfa, sfb) and FMUL (sfa * sfb);
// no FMUL after the loop. make diff B=32.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles; a K
// tail block (K % 128) uses its own scales. sm_90a.
// Run: make run STEP=32 M=8192 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step32 {

namespace fam = gemm::family;
constexpr char ID[] = "32";

// The configuration this step instantiates: 31's, each K tile's partial scaled by its blocks' scales.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .accum = fam::Accum::promoted, .scales = fam::Scales::block}> {};
static_assert(Block::BK == 128 && Block::BN == 128, "one scale block per K tile (1 x 128 of A, 128 x 128 of B) and one of B per tile's N");

/// The policy: step 23's, the one tile and 23's stream-K rule on `sms` SMs.
fam::Plan plan(int m, int n, int k, int sms) { return fam::make_plan({m, n, k}, Block::spec, {}, false, sms); }

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, Block::BM, Block::BN);
}

// Registered launcher: C (M x N, row-major bf16) = sum over K blocks kb of (A (M x K, row-major
// e4m3) * B (N x K, row-major e4m3)^T over kb's 128 K) with row i, column j scaled by sfa[kb][i] *
// sfb[j / 128][kb] (Scaling::block, registry.hpp: sfa ceil(K/128) x M floats, M contiguous; sfb
// ceil(N/128) x ceil(K/128) floats; device memory); a K tail block of K % 128 columns is zero-filled by
// TMA and scaled by its own K block's scales. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_block_scaled",
    .parent = "31",
    .technique = "FP8 block scales (1x128 A, 128x128 B): each K tile's partial scaled by sfa * sfb as it is promoted (FFMA)",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, Block>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::block,
    .accumulation = fam::step_accumulation<Block>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Block::BM, Block::BN, Block::BK, Block::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true},
});

}  // namespace step32
