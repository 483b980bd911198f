// Step 30 — FP8: step 23's kernel on e4m3 operands with one scale per tensor, as a configuration of the
// family (common/kernel_lib/family/; step 24 says how a step names its configurations and its policy).
// What changes is what one-byte elements change: a 128-byte swizzle row is now 128 elements, so BK =
// 128 (the ring's 32 KB stages hold twice the K); wgmma.m64n128k32.f32.e4m3.e4m3 takes K = 32 per
// instruction, so a K tile is still 4 wgmmas per m64 slab, and the k-th slice is still 32 bytes further
// on in the descriptor; TMA boxes of 1-byte elements; both operands K-major, the only layout FP8 wgmma
// reads (the TN layout the series uses already). The scales: D = scale_a * scale_b * (A B^T), one
// multiply per accumulator in the epilogue after the fixup. The tensor cores keep the accumulators for
// the whole of K (cuBLASLt's "fast accumulation"): no promotion yet. The policy is step 23's.
// Why: FP8's tensor rate is twice bf16's (8192 FLOP per SM clock; 1979 TFLOP/s at the datasheet clock).
// Prediction: each K tile now does 2x the FLOPs in the same time on the same 32 KB, so the TMA loads
// must sustain twice step 23's rate; with the 128x128 tiles' 128 FLOP per byte loaded that is where it
// stalls. Expect 1.5-1.9x step 23 (about 1000-1250 TFLOP/s at 4096^3 and 8192^3), 0.8-0.95x cuBLASLt
// per-tensor (1294 / 1352 TFLOP/s, measured here before the step), further behind its fast
// accumulation (1402 / 1398), the like-for-like reference.
// SASS: 23's with QGMMA.64x128x32.F32.E4M3.E4M3 in place of HGMMA.64x128x16.F32.BF16 (8 per K tile),
// and 128 FMULs by the scale before each tile's stores (make diff B=30).
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=30 M=8192 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step30 {

namespace fam = gemm::family;
constexpr char ID[] = "30";

// The configuration this step instantiates: 23's 128 x 128 ping-pong tile, e4m3, per-tensor scales.
struct PerTensor : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .scales = fam::Scales::per_tensor}> {};

/// The policy: step 23's, the one tile and 23's stream-K rule on `sms` SMs.
fam::Plan plan(int m, int n, int k, int sms) { return fam::make_plan({m, n, k}, PerTensor::spec, {}, false, sms); }

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, PerTensor::BM, PerTensor::BN);
}

// Registered launcher: C (M x N, row-major bf16) = scale_a * scale_b * A (M x K, row-major e4m3) *
// B (N x K, row-major e4m3)^T, accumulated by the tensor cores (about 14 significant bits per k32
// group), as plan() says; p.scale_a and p.scale_b point to one float each in device memory
// (Scaling::per_tensor). family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_wgmma",
    .parent = "23",
    .technique = "FP8 e4m3 wgmma m64n128k32 (BK 128), per-tensor scales applied in the epilogue, bf16 C",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, PerTensor>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::per_tensor,
    .accumulation = fam::step_accumulation<PerTensor>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {PerTensor::BM, PerTensor::BN, PerTensor::BK, PerTensor::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true},
});

}  // namespace step30
