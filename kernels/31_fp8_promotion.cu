// Step 31 — FP8 promotion: step 30 with the tensor cores' accumulators emptied into fp32 registers on
// the CUDA cores every promote_every k32 wgmmas (default 4: once per K tile of 128; the configuration's
// Accum::promoted, family/mainloop.cuh). The wgmmas accumulate into tc (one m64 slab's 64 floats);
// after wgmma.wait_group 0, 64 FADDs add tc into acc, the slab's fp32 sums, and the next group's first
// wgmma starts tc afresh with scale-d = 0 (free:
// a predicate on an instruction issued anyway, where zeroing tc is 64 more instructions before the
// fence). acc (2 slabs x 64) + tc (64) = 192 fp32 per thread: a second tc, to overlap one slab's
// promotion with the other's wgmmas, would make 256, past the 255-register limit, so the slabs share
// tc in turn and each group ends in a full drain. Per-tensor scales still in the epilogue.
// Why: the FP8 tensor cores add each k32 group with 14 significant bits (DeepSeek-V3 report, arXiv
// 2412.19437, sec. 3.3.2; measured here by lab/fp8_accumulator.cu: truncating), so step 30's error grows
// with K (rel ~ 2^-13 sqrt(K)/8 modelled as round-to-nearest: 11 x 2^-13 at K = 8192); promoted every
// 128 K it stays ~1.6 x 2^-13 at any K (fp32 adds 2^-24): 5-7x less at K = 4096-8192, about cuBLASLt's
// 6.9e-4 rel RMS against the bf16 product instead of its fast accumulation's 2.4-3.0e-3 (docs/fp8.md).
// Prediction: each slab group (4 wgmmas, 256 tensor clocks at 8192 FLOP/clk) now drains and waits ~64
// FADD issue clocks plus the wgmma pipeline's fill and drain, ~100 clocks: ~0.7-0.85x step 30 unless
// step 30 is stalled on its loads anyway; the ping-pong's other consumer fills part of the gap.
// SASS: per K tile 8 QGMMAs in 2 groups of 4, each behind WARPGROUP.DEPBAR.LE gsb0, 0x0, then 64
// FADDs (128 in the loop); the group's first QGMMA reads RZ, !UPT (scale-d = 0). make diff B=31.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=31 M=8192 N=8192 K=8192
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step31 {

namespace fam = gemm::family;
constexpr char ID[] = "31";

// k32 wgmmas per promotion: 4 = once per K tile (DeepSeek-V3's interval of 128 elements of K). The
// other divisors of BK / WGMMA_K (2, 1) promote more often: the accuracy lab's builds
// (make promote-variants: build/bin/variant_31_pe1, _pe2).
#ifndef STEP31_PROMOTE_EVERY
#define STEP31_PROMOTE_EVERY 4
#endif
// The configuration this step instantiates: 30's, with each K tile's partial promoted into fp32 registers.
struct PerTensor : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .accum = fam::Accum::promoted,
                                         .scales = fam::Scales::per_tensor, .promote_every = STEP31_PROMOTE_EVERY}> {};

/// The policy: step 23's, the one tile and 23's stream-K rule on `sms` SMs.
fam::Plan plan(int m, int n, int k, int sms) { return fam::make_plan({m, n, k}, PerTensor::spec, {}, false, sms); }

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, PerTensor::BM, PerTensor::BN);
}

// Registered launcher: C (M x N, row-major bf16) = scale_a * scale_b * A (M x K, row-major e4m3) *
// B (N x K, row-major e4m3)^T, each K tile's k32 wgmmas accumulated by the tensor cores and then added
// into fp32 registers (promotion every promote_every k32 steps), as plan() says; per-tensor scales as
// in step 30. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_promotion",
    .parent = "30",
    .technique = "FP8 promotion: the wgmma partials of each K tile added into fp32 registers (FADD), per-tensor scales",
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

}  // namespace step31
