// Step 38 — per-tensor FP8 at small M, swapped, on step 37. One lesson: step 24's swap is legal for e4m3.
// FP8 wgmma reads both operands K-major, and so do both tiles of a swapped product: C^T = B * A^T puts
// B's rows on wgmma's M side and A's on its N side with nothing transposed. Step 37 pads M <= 64 to a
// 64-row tile of 128 columns; at M = 16 three quarters of its wgmma rows are padding, and its 24 KB
// stages hold 8 K tiles. Swapped, M fits one column of 16, 32 or 64 (wgmma N), each stage is 8 KB of B
// and at most 8 KB of A, so the ring holds 12-19 K tiles, and B's 64-row tiles make twice the tiles to
// spread over 132 SMs. cuBLASLt's per-tensor kernel at 16 x 7168 x 16384 is such a tile: 64 x 16, 16
// stages (docs/notebook/fp8.md, "Next at decode").
// Prediction: M <= 64 from step 37's 0.77-0.93x cuBLASLt (H200) to about 1.0x; M > 64 unchanged (37's
// kernel and plan). Measured on an H100 as a build of 37 (2026-12-06): 0.99-1.07x, where 37 ran 0.81-1.01x.
// SASS: the swapped kernels' loop: two K tiles of 4 QGMMA.64xWx32 (W = 16, 32, 64), DEPBAR.LE gsb0, 0x1,
// W FADD a thread a loop (W / 2 a K tile), no FFMA and no LDG; C leaves through transposed register stores.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=38 M=16 N=2112 K=7168
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step38 {

namespace fam = gemm::family;
constexpr char ID[] = "38";

// The configurations this step instantiates: 37's 128-row tile for M > 64, and for M <= 64 a swapped
// 64-row tile of C^T whose W columns hold all of M (menu::fit: the most stages its shared memory holds).
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::per_tensor}> {};
template <int W>
struct Swapped : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .bn = W, .swap = true, .accum = fam::Accum::two_sets,
                                             .scales = fam::Scales::per_tensor, .bm = 64})> {};
#ifndef STEP38_SWAP_MAX_M
#define STEP38_SWAP_MAX_M 64  // make fp8-variants builds 128 (two tile columns of C^T past 64), to measure
#endif
#ifndef STEP38_FIXUP_BY_BYTES
#define STEP38_FIXUP_BY_BYTES 0  // make fp8-variants builds 1: step 41's price of a swapped tile's fixup, to measure
#endif
constexpr int kSwapMaxM = STEP38_SWAP_MAX_M;  ///< M <= this runs swapped: all of M in one tile column (64)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs, step 37's with the tile swapped at
/// M <= 64 (the narrowest of 16, 32, 64 that holds M). Under one wave, split-K into s equal segments
/// where family::split_pays says (it counts the kernel's tiles: C^T's); a wave or more, 23's wave rule.
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m > kSwapMaxM ? Block::spec : m <= 16 ? Swapped<16>::spec : m <= 32 ? Swapped<32>::spec : Swapped<64>::spec;
  const int fixup = STEP38_FIXUP_BY_BYTES && spec.swap ? fam::fixup_k_tiles(spec) : fam::kFixupKTiles;
  const bool split = fam::split_pays({m, n, k}, spec, sms, fixup);  // (family/plan.hpp)
  return fam::make_plan({m, n, k}, spec, {.wave_limits = true, .split_k = true, .planned = split}, false, sms);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  // 64 x 16 tiles of C: at least as many as any plan of this step makes (swapped: C^T's 64 x W), a bound.
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, Swapped<16>::BM, Swapped<16>::BN);
}

// Registered launcher: C (M x N, row-major bf16) = scale_a * scale_b * (A (M x K, row-major e4m3) *
// B (N x K, row-major e4m3)^T) (Scaling::per_tensor, registry.hpp: the two scales in device memory), as
// plan() says; swapped, the kernel computes C^T and stores it transposed. family/launch.cuh: the
// workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_small_m_swap",
    .parent = "37",
    .technique = "per-tensor FP8 at M <= 64 swapped (C^T = B A^T, both operands still K-major): 64-row tiles of B by 16, 32 or 64 columns of M, 12-19 stages",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, Block, Swapped<16>, Swapped<32>, Swapped<64>>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::per_tensor,
    .accumulation = fam::step_accumulation<Block, Swapped<16>>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Block::BM, Block::BN, Block::BK, Block::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .split_k = true, .swap_sized = true},
});

}  // namespace step38
