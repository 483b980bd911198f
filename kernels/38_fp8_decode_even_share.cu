// Step 38 — decode reads B on every SM, on step 37. One lesson: where the tile grid is one tile row
// (M <= BM: 64 rows for M <= 64, 128 up to 128), a block's time is the bytes of B it reads, so an SM
// with no work is HBM bandwidth nobody draws. Step 37 runs such grids as whole tiles or equal split-K
// segments: at N = K = 4096, 32 blocks of 32 K tiles on 132 SMs; at (7168, 16384) 112 blocks of 64;
// at (24576, 1536) two rounds of 12. It ran 0.73-0.94x cuBLASLt per-tensor at M <= 128 (H200,
// results/nvidia_h200_fp8_shapes.csv). Here a one-row grid takes stream-K's even share of its K tiles
// over every SM (SplitPolicy::even_share, family/plan.hpp) where that shortens the busiest SM's K tiles
// (family::busiest_k_tiles), with no price on the fixup. Step 26 kept equal segments so that blocks
// sharing a panel walk K in step; here every block reads its own panel of B, and A (M x K) fits in L2.
// Prediction (time ~ the busiest SM's K tiles): N = K = 4096: 32 -> 8, up to 4x, capped by HBM and the
// launch: past 1.0x; (7168, 16384): 64 -> 55, 1.16x: 0.77-0.88x -> 0.89-1.02x; (24576, 1536): 24 ->
// 18, up to 1.33x less the fixup of 192 split tiles: 0.84-0.94x -> about 1.0-1.1x; (2112, 7168) and
// M > 128: unchanged (8 -> 8 K tiles: 37's plan).
// SASS: the same two kernels as 37 (the configurations are 37's); only the host's plan changes.
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=38 M=16 N=7168 K=16384
#include <optional>
#include <string>

#include "../common/kernel_lib/family/launch.cuh"
#include "../common/kernel_lib/family/menu.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step38 {

namespace fam = gemm::family;
constexpr char ID[] = "38";

// The configurations this step instantiates: 37's two.
struct Block : fam::Config<fam::Spec{.elem = fam::Elem::e4m3, .consumers = fam::Consumers::cooperative,
                                     .accum = fam::Accum::two_sets, .scales = fam::Scales::per_tensor}> {};
// (menu::fit: the most stages its shared memory holds, 8 of 24 KB.)
struct Short : fam::Config<fam::menu::fit({.elem = fam::Elem::e4m3, .accum = fam::Accum::two_sets, .scales = fam::Scales::per_tensor, .bm = 64})> {};
constexpr int kShortMaxM = Short::BM;  ///< M <= this runs the 64-row tile (one tile row either way)

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs. The tile: Short for M <= 64, else
/// Block. A grid of one tile row (M <= the tile's BM): stream-K's even share over every SM
/// (SplitPolicy::even_share) where it shortens the busiest SM's K tiles (family::busiest_k_tiles), else
/// 37's plan. Taller: step 37's plan (split-K under one wave into
/// s = tile_menu::split_factor equal segments where ceil(k_tiles / s) + kFixupKTiles < k_tiles, or
/// under a quarter wave where family::choose_split's idle rule says; a wave or more: 23's wave rule).
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m <= kShortMaxM ? Short::spec : Block::spec;
  const bool split = fam::split_pays({m, n, k}, spec, sms);  // (family/plan.hpp)
  const fam::Plan p37 = fam::make_plan({m, n, k}, spec, {.wave_limits = true, .split_k = true, .planned = split}, false, sms);
  if (m > spec.bm) return p37;
  const fam::Plan even = fam::make_plan({m, n, k}, spec, {.even_share = true}, false, sms);
  return fam::busiest_k_tiles(even) < fam::busiest_k_tiles(p37) ? even : p37;
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
    .name = "fp8_decode_even_share",
    .parent = "37",
    .technique = "decode reads B on every SM: a grid of one tile row shares its K tiles evenly over all SMs (stream-K wherever the last wave is partial, no fixup price)",
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

}  // namespace step38
