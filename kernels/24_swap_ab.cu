// Step 24 — small M by swapping the operands, on step 23. From here on a step is a policy over the
// family (common/kernel_lib/family/: step 23's kernel assembled from the parts 11-23 teach, for a
// configuration chosen at compile time, launched from one plan computed on the host). Two lessons,
// said so. The swap: wgmma's M side is 64 rows a slab and 23's tile has two, so at M = 16 its 128-row
// A box is 16 rows of A and 112 of zero fill (8x the tensor work). For M <= SWAP_MAX_M the policy runs
// C^T = B * A^T: the configuration Swapped reads 128 rows of B on wgmma's M side and A on its N side
// with wgmma m64n64k16 (N is any multiple of 8 up to 256), so all of M fits one 64-wide tile column and
// B is read from HBM once. Both operands stay K-major (same tensor maps, same 128B swizzle); the
// accumulators hold a tile of C^T, stored transposed from registers (ptx::store_dt_fragment_bf16). The
// split: it drops 23's wave limits there (they were measured on compute-bound tiles): at 16 x 8192 x
// 8192 the 64 tiles' K tiles go to all 132 SMs (23: 64 SMs). Fixup and its fixed summation order: 23's.
// Prediction: memory-bound on B: at 16 x 8192 x 8192 its 128 MiB take 31 us at the 4.3 TB/s measured
// copy rate (69 TFLOP/s); expect 35-40 us, about 1.0x cuBLAS (23: ~0.55x, issue 30). M > 64: 23's.
// SASS: gemm_kernel<step24::Swapped> has HGMMA.64x64x16.F32.BF16 (8 per K tile), no UTMASTG, STG.E.U16
// stores; gemm_kernel<step24::Wide> is 23's kernel from the family's parts (make diff B=24).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=24 M=16 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step24 {

namespace fam = gemm::family;
constexpr char ID[] = "24";

// The configurations this step instantiates (one kernel each).
struct Wide : fam::Config<fam::Spec{.bn = 128}> {};                  // 128 x 128 ping-pong: step 23's
struct Swapped : fam::Config<fam::Spec{.bn = 64, .swap = true}> {};  // 128 x 64 tiles of C^T
constexpr int SWAP_MAX_M = 64;  // M <= this runs swapped: all of M in one wgmma N, so B is read once
static_assert(Swapped::BN == SWAP_MAX_M, "a swapped problem's M fits one tile column: B is read once");

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs. Swapped, the split keeps only the
/// idle-time rule: a swapped problem is bound by reading B from HBM, and an SM left idle is a stream of
/// B not read (the break-even stays 23's, not re-measured).
fam::Plan plan(int m, int n, int k, int sms) {
  const bool swap = m <= SWAP_MAX_M;
  return fam::make_plan({m, n, k}, swap ? Swapped::spec : Wide::spec, {.wave_limits = !swap}, false, sms);
}

/// 23's limits, for the problem the kernel runs (swapped: C^T's tiles of 128 x SWAP_MAX_M).
std::optional<std::string> unsupported(int m, int n, int k) {
  if (m <= SWAP_MAX_M) return gemm::tma_persistent_gemm_refusal(n, m, k, Swapped::BM, Swapped::BN);
  return gemm::tma_persistent_gemm_refusal(m, n, k, Wide::BM, Wide::BN);
}

// Registered launcher: C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major
// bf16)^T, fp32 accumulation, as plan() says. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "swap_ab",
    .parent = "23",
    .technique = "small M (<= 64) swapped: C^T = B*A^T with wgmma m64n64k16, every SM streams B (stream-K), transposed stores",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &fam::step_launch<ID, plan, Wide, Swapped>,  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Wide::BM, Wide::BN, Wide::BK, Wide::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true},
});

}  // namespace step24
