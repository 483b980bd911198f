// Step 33 — cooperative consumers for FP8 block scaling, on step 32. One lesson: step 32's consumer
// owns a 128 x 128 tile: two m64 slabs of 64 fp32 sums per thread plus one set of tensor-core
// accumulators (192 registers), and each group of 4 wgmmas ends in wgmma.wait_group 0 while the FFMAs
// run; the ping-pong's other consumer, on its own tile, is what fills the tensor cores meanwhile. Now
// the two consumers share each tile, one m64 slab each (cooperative, as step 14; Consumers::cooperative):
// both read every stage (8 warps free it), each promotes only its own slab, and each sums and counts
// its own slab's split pieces. A thread keeps 64 sums instead of 128, which is the room step 34 needs
// for a second set of tensor-core accumulators. The cover changes hands: the other consumer's wgmmas
// on the same stage, instead of on another tile, run while one promotes; the epilogue (two boxes per
// consumer) is no longer under another tile's K loop.
// Prediction: per K tile each consumer's group is half of 32's (4 wgmmas, 64 FFMAs), two in flight:
// about step 32's speed (0.9-1.05x), a little less where tiles are short (the unhidden epilogue).
// SASS: per K tile 4 QGMMA.64x128x32 (one slab: half of 32's 8), WARPGROUP.DEPBAR.LE gsb0, 0x0, 64
// FFMA; no order barriers; the fixup's counters one per tile and consumer.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles; a K
// tail block (K % 128) uses its own scales. sm_90a.
// Run: make run STEP=33 M=8192 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step33 {

namespace fam = gemm::family;
constexpr char ID[] = "33";

// The configuration this step instantiates: 32's, its two consumers sharing each tile, a slab each.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::promoted, .scales = fam::Scales::block}> {};
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
    .name = "fp8_cooperative",
    .parent = "32",
    .technique = "FP8 block scales on cooperative consumers: each promotes one m64 slab of the shared tile (64 sums a thread)",
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

}  // namespace step33
