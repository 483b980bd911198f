// Step 29 — a measured dispatch, on step 28. One lesson: hand rules on a two-tile menu do not carry to
// shapes nobody tuned them for (28: about 0.89x the best reference off its sweep); a library times a
// wide menu on a grid of shapes and picks by measurement. This step runs the family's menu
// (family/menu.hpp: BM 64-256, BN 40-256 and not only powers of two, clusters of two, stmatrix, swapped
// widths 8-64). `make tune` times every entry on a grid (results/tuning/; the table,
// family/tuned_bf16.hpp, is generated from it by scripts/gen_tuned_table.py); a shape takes the nearest
// timed shape in log (M, N, K) within its alignment class, and each entry's ratio there carried to it
// by the plan's arithmetic (family/dispatch.hpp: efficiency(), a roofline of the plan that sees padded
// tiles, waves, splits and idle SMs). Where step 28's rule, carried the same way, is within 1 %, where
// the table is silent (a shape 4x under or 2x over its range) or the pick would pass the tile limit,
// 28's rule runs on the menu's kernels (menu::hand_plan), copy included.
// Prediction: large squares within 1-2 % (clusters and 160-wide tiles win there by 1-10 % in the
// tuner); M = 65-127 moves to 64-row tiles (0.67-0.85x to about 0.95x, bounded by HBM); K % 16 == 8
// takes cluster pairs that move fewer L2 sectors per FLOP (0.71x to about 0.87x in the tuner).
// SASS: the menu's kernels, gemm_kernel<gemm::family::menu::Kernel<I>> for each entry I (make diff B=29).
// Supports: K % 8 == 0, any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=29 M=96 N=4096 K=4096
#include <optional>
#include <string>
#include <utility>

#include "../common/kernel_lib/family/dispatch.hpp"
#include "../common/kernel_lib/family/menu_launch.cuh"
#include "../common/kernel_lib/family/tuned_bf16.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step29 {

namespace fam = gemm::family;
namespace menu = gemm::family::menu;
namespace hand = gemm::tile_menu;  // step 28's rules (step 28 calls this namespace `menu`)
constexpr char ID[] = "29";

/// The table, each row's ratios resolved against the menu once.
const auto kTable = fam::dispatch::resolve(fam::dispatch::kTunedBf16, fam::dispatch::kTunedEntries, menu::kBf16);

/// The policy: the plan for C = A * B^T (M x N x K) on `sms` SMs: the measured table's pick
/// (dispatch::pick), planned as the menu plans that entry (its split policy, no copy; a cluster's units
/// capped at the clusters that fit), or the hand rule where the table says so, has no row, or the
/// picked tile would pass the schedule's tile limit.
fam::Plan plan(int m, int n, int k, int sms) {
  const int e = fam::dispatch::pick(kTable.data(), kTable.size(), menu::kBf16, m, n, k, sms);
  if (e == fam::dispatch::kHandRule) return menu::hand_plan(m, n, k, sms);
  const fam::Spec s = menu::kBf16[size_t(e)].spec;
  if (s.swap ? gemm::tma_persistent_gemm_refusal(n, m, k, s.bm, s.bn) : gemm::tma_persistent_gemm_refusal(m, n, k, s.bm, s.bn))
    return menu::hand_plan(m, n, k, sms);
  return menu::plan(menu::kBf16[size_t(e)], m, n, k, menu::plan_sms_of(size_t(e), sms));
}

/// Step 28's limits (its hand rule is the fallback of every shape).
std::optional<std::string> unsupported(int m, int n, int k) {
  if (m <= hand::kSwapMaxM) return gemm::tma_persistent_gemm_refusal(n, m, k, fam::kBM, hand::kSwapMaxM);
  return gemm::tma_persistent_gemm_refusal(m, n, k, fam::kBM, 64);
}

/// The launcher over every entry's kernel (the plan names one of them).
template <size_t... I>
constexpr gemm::Bf16Launcher launcher(std::index_sequence<I...>) {
  return &fam::step_launch<ID, plan, menu::Kernel<I>...>;
}

// Registered launcher: C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major
// bf16)^T, fp32 accumulation, as plan() says. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "measured_dispatch",
    .parent = "28",
    .technique = "the family's wide menu picked per shape from the tuner's measurements (nearest measured shape in log M, N, K; family/dispatch.hpp)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = launcher(std::make_index_sequence<menu::kBf16.size()>()),  // (family/launch.cuh)
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {fam::kBM, 128, 64, menu::kBf16[size_t(menu::entry_of({.bn = 128}))].spec.stages},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true, .swap_sized = true, .pad_pitch = true, .measured = true},
});

}  // namespace step29
