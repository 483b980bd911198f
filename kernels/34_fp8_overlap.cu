// Step 34 — the promotion off the critical path, on step 33. One lesson: step 33's cooperative
// consumer keeps 64 sums a thread (one m64 slab), which leaves room for two sets of tensor-core
// accumulators (Accum::two_sets, family/mainloop_two_sets.cuh). An item's i-th K tile goes into
// tc[i % 2]; then wait_group 1 waits only for K tile i - 1's group, whose partial is scaled and promoted
// while i's run: the tensor cores always have a group queued (step 23's wait, with the promotion in its
// shadow). The first K tile is peeled and the loop unrolled by two (the set is a register name).
// Prediction: at 4096^3 a K loop of 32 K tiles (16 K clocks at 8192 FLOP/clk) against an epilogue of
// ~1 K clocks: within ~10 % of step 30's 1285 TFLOP/s, ~1.7-1.8x step 32 (688 -> ~1150-1250); error = 32's.
// SASS: per K tile 4 QGMMA.64x128x32 into one of two register sets, WARPGROUP.DEPBAR.LE gsb0, 0x1 (no
// 0x0 in the K loop), 64 FFMA of the other set; the loop unrolled by 2.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles; a K
// tail block (K % 128) uses its own scales. sm_90a.
// Run: make run STEP=34 M=8192 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step34 {

namespace fam = gemm::family;
constexpr char ID[] = "34";

// The configuration this step instantiates: 33's, with two sets of tensor-core accumulators.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::block}> {};
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
    .name = "fp8_overlap",
    .parent = "33",
    .technique = "the promotion overlapped: two tensor-core accumulator sets, wait_group 1, one K tile promoted under the next one's wgmmas",
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

}  // namespace step34
