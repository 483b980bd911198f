// Step 39 — 128-byte L2 promotion at a misaligned pitch, on step 29. One lesson: a tensor map also
// says how much L2 fetches from DRAM around a miss (cuTensorMapEncodeTiled's l2Promotion), and where
// rows start inside a 32-byte sector (K % 16 == 8) 256 bytes over-fetch. Every map from step 11 on asks
// for 256 (two K tiles of a 128-byte row). At K % 16 == 8 each 128-byte box row spans two lines, and
// ncu at 4096 x 4096 x 4104 on an H100 (co128x256-c2m-s4, results/profiles/nvidia_h100_promotion.md)
// read 216 MB from DRAM where the aligned pitch read 180, the tensor pipe 78 % busy against 93 %; with
// 128 bytes (what CUTLASS's maps ask) 179 MB, 92 %: 189 us against 217. Over 35 such shapes (4104
// and the random set's 34) 128-byte maps took step 29 from 0.930x to 0.960x cuBLAS (tuner, H100), but
// cost 2-5 % where M or N is at most 32 and K long: a grid that streams the other operand once, where
// the larger promotion may serve as a prefetch (not profiled). So: 128 bytes where rows start inside a
// sector and M, N > 32; else 29's maps. Nothing in a kernel changes.
// Prediction: K % 16 == 8 from 29's 0.930x cuBLAS to about 0.96x (tuner, H100); aligned unchanged.
// SASS: step 29's kernels, unchanged (the promotion is in the tensor map, a kernel parameter).
// Supports: K % 8 == 0, any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=39 M=4096 N=4096 K=4104
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "../common/kernel_lib/family/measured.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace step39 {

namespace fam = gemm::family;
namespace menu = gemm::family::menu;
namespace hand = gemm::tile_menu;
constexpr char ID[] = "39";
constexpr int kL2PromotionBytes = 128;  ///< where it pays, L2 fetches 128 bytes around a miss, not 256
/// M or N at most this (step 27's narrowest swapped tiles) streams the other operand once: 256 bytes stay.
constexpr int kStreamMaxRows = 32;

/// The policy: step 29's plan (family/measured.cuh), its A and B maps at 128-byte L2 promotion where
/// the rows it reads start inside a 32-byte sector (no padded copy, k % 16 != 0) and neither M nor N is
/// at most kStreamMaxRows (there 29's 256 bytes stay).
fam::Plan plan(int m, int n, int k, int sms) {
  fam::Plan p = fam::measured_plan(m, n, k, sms);
  const bool in_sector = p.pitch == 0 && k % hand::kSectorElems != 0;
  if (in_sector && std::min(m, n) > kStreamMaxRows) p.l2_promotion_bytes = kL2PromotionBytes;
  return p;
}

/// Step 28's limits, as 29's.
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
    .name = "l2_promotion",
    .parent = "29",
    .technique = "step 29's dispatch with A's and B's tensor maps at 128-byte L2 promotion where rows start inside a sector (M, N > 32): no DRAM over-fetch",
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

}  // namespace step39
