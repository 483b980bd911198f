// Step 38 — decode reads B on every SM, on step 37. One lesson: where the tile grid is one tile row
// (M <= BM: 64 rows for M <= 64, 128 up to 128), a block's time is the bytes of B it reads, and an SM
// with no work is bandwidth nobody draws. Step 37 gives such a grid whole tiles or equal split-K
// segments: 112 blocks for 132 SMs at N = 7168 (56 tiles, two segments each), two rounds of 192 tiles
// at N = 24576, K = 1536 (too short to split), 119 blocks at N = 2112 (17 tiles, seven segments). It
// ran 0.73-0.94x cuBLASLt per-tensor at M <= 128 on the H200 (results/nvidia_h200_fp8_shapes.csv).
// Here a one-row grid takes stream-K's even share of its K tiles over all 132 SMs wherever the last
// wave is partial (SplitPolicy::even_share, family/plan.hpp), with no price on the fixup: A is one tile
// row, so no two blocks share a panel of B, and the reason step 26 kept split-K's equal segments (the
// blocks of a panel walking K in step, for L2) is gone. Taller grids keep 37's plan.
// Prediction (H200, time ~ the most bytes any SM reads): at (7168, 16384) 132/112 = 1.18x faster,
// 0.77-0.88x -> 0.90-1.03x; at (24576, 1536) up to 2/1.45 = 1.38x less the fixup of 192 split tiles,
// 0.84-0.94x -> about 1.0-1.15x; at (2112, 7168) 132/119 = 1.11x, 0.74-0.82x -> 0.80-0.90x (there the
// K loop is short and the launch and fixup weigh more); a wave of M > 128 unchanged.
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
/// Block. A grid of one tile row (M <= the tile's BM): stream-K's even share over every SM wherever the
/// last wave is partial (SplitPolicy::even_share). Taller: step 37's plan (split-K under one wave into
/// s = tile_menu::split_factor equal segments where ceil(k_tiles / s) + kFixupKTiles < k_tiles, or
/// under a quarter wave where family::choose_split's idle rule says; a wave or more: 23's wave rule).
fam::Plan plan(int m, int n, int k, int sms) {
  const fam::Spec spec = m <= kShortMaxM ? Short::spec : Block::spec;
  if (m <= spec.bm) return fam::make_plan({m, n, k}, spec, {.even_share = true}, false, sms);
  const int64_t tiles = ((int64_t(m) + spec.bm - 1) / spec.bm) * ((int64_t(n) + spec.bn - 1) / spec.bn);
  const int64_t k_tiles = (int64_t(k) + fam::bk(spec) - 1) / fam::bk(spec);
  const int64_t s = gemm::tile_menu::split_factor(tiles, k_tiles, sms);
  const bool split = tiles < sms && s >= 2 && (k_tiles + s - 1) / s + fam::kFixupKTiles < k_tiles;
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
