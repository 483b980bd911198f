// Step 37 — per-tensor FP8 on the shape rules, on step 36. One lesson: the family's shape rules do not
// depend on the scaling. Step 31 is the last per-tensor step and runs one 128 x 128 tile with 23's wave
// rule on every shape: at N = K = 4096 and M <= 128 that is 32 blocks for 132 SMs, and it ran 0.55-0.65x
// torch._scaled_mm (cuBLASLt per-tensor, H100, results/nvidia_h100_80gb_hbm3_torch.csv). Step 36's two
// configurations and plan, with `.scales = per_tensor` in place of `block`: the 64-row tile for M <= 64,
// split-K under one wave, and two sets of tensor-core accumulators in both. A per-tensor scale is one
// number for the whole sum, so the promotion is an FADD (31's) instead of 36's FFMA by sfa * sfb, the
// scale multiplies C once in the epilogue (30's, after a split's fixup), and no scale is loaded in the K loop.
// Prediction: at the decode shapes where step 31 ran 0.55-0.65x torch._scaled_mm, step 36's times less
// its scale loads: 0.70-0.86x or a little better (K = 4096 is too short to split: the gain there is the
// tile and the two-set loop); at 4096^3 and 8192^3 level with 31 or better (34's overlap).
// SASS: both kernels: two K tiles of 4 QGMMA.64x128x32 a loop with WARPGROUP.DEPBAR.LE gsb0, 0x1, the
// promotion 128 FADD, no FFMA, FMUL or LDG in the loop (36: 128 FFMA and 4 FMUL).
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=37 M=16 N=4096 K=4096
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step37 {

namespace fam = gemm::family;
constexpr char ID[] = "37";

// The configurations this step instantiates: 36's two, with one scale per tensor.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::per_tensor}> {};
// (menu::fit: the most stages its shared memory holds, 8 of 24 KB.)
struct Short : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .accum = fam::Accum::two_sets, .scales = fam::Scales::per_tensor, .bm = 64})> {};
constexpr int kShortMaxM = Short::BM;  ///< M <= this runs the 64-row tile (one tile row either way)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs, step 36's. The tile: Short for
/// M <= 64, else Block. Under one wave, split-K into s = tile_menu::split_factor equal segments (s >= 2)
/// where ceil(k_tiles / s) + kFixupKTiles < k_tiles, or under a quarter wave where family::choose_split's
/// idle rule says; a wave or more: 23's wave rule, as in 34.
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m <= kShortMaxM ? Short::spec : Block::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms);  // (family/plan.hpp)
  return fam::make_plan({m, n, k}, spec, {.wave_limits = true, .split_k = true, .planned = split}, false, sms);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, Short::BM, Short::BN);  // the tile count of the smaller tile
}

// Registered launcher: C (M x N, row-major bf16) = scale_a * scale_b * (A (M x K, row-major e4m3) *
// B (N x K, row-major e4m3)^T) (Scaling::per_tensor, registry.hpp: the two scales in device memory), as
// plan() says; a split tile's pieces sum unscaled partials, and the scales multiply the whole sum in the
// epilogue. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "fp8_per_tensor_shapes",
    .parent = "36",
    .technique = "per-tensor FP8 on the shape rules: 36's 64-row tile, split-K and two accumulator sets with one scale per tensor (FADD promotion, the scale in the epilogue)",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &fam::step_launch<ID, plan, Block, Short>,  // (family/launch.cuh)
    .scaling = gemm::Scaling::per_tensor,
    .accumulation = fam::step_accumulation<Block, Short>(),  // what sums the products: the results' column
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {Block::BM, Block::BN, Block::BK, Block::STAGES},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .split_k = true},
});

}  // namespace step37
