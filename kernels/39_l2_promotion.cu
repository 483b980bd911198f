// Step 39 — 128-byte L2 promotion at a misaligned pitch, on step 29. One lesson: a tensor map also
// says how much L2 fetches from DRAM around a miss (cuTensorMapEncodeTiled's l2Promotion), and where
// rows start inside a 32-byte sector (K % 16 == 8), 256 bytes of it cost DRAM traffic. Every map from
// step 11 on asks for 256 (two K tiles of a 128-byte row); CUTLASS's ask for 128. ncu at 4096 x 4096
// x 4104 on an H100 (co128x256-c2m-s4, results/profiles/nvidia_h100_promotion.md): 216 MB from DRAM
// where the aligned pitch of 4112 read 180, the tensor pipe 78 % busy against 93 %; with 128-byte
// promotion 179 MB and 92 %, 189 us against 217. Why 256 bytes over-fetch only where every other row
// starts inside a sector is not measured. This step asks for 128 bytes exactly there (rows read in
// place, K % 16 == 8: family::misaligned_l2_promotion) and is step 29 everywhere else.
// Prediction (from that profile): K % 16 == 8 shapes whose tiles are compute-bound move towards their
// aligned neighbours; aligned shapes, and 28's padded copies, unchanged. Measured (H100) beside step 29:
// K % 16 == 8 from 0.928x to 0.960x cuBLAS in the tuner, from 0.861x to 0.885x the best reference on a
// held-out draw, aligned unchanged (docs/every_shape.md, step 39; results/nvidia_h100_80gb_hbm3_shapes.csv).
// SASS: step 29's kernels, unchanged (the promotion is in the tensor map, a kernel parameter).
// Supports: K % 8 == 0, any M, N >= 1, < 2^30 tiles. sm_90a.
// Run: make run STEP=39 M=7798 N=1392 K=1448, beside STEP=29

#include "../common/kernel_lib/family/measured.cuh"
#include "../common/kernel_lib/family/promotion.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step39 {

namespace fam = gemm::family;
namespace menu = gemm::family::menu;
constexpr char ID[] = "39";

/// The policy: step 29's plan (family/measured.cuh), its A and B maps at 128-byte L2 promotion where
/// the rows it reads start inside a 32-byte sector (family/promotion.hpp), else 29's 256 bytes.
fam::Plan plan(int m, int n, int k, int sms) {
  fam::Plan p = fam::measured_plan(m, n, k, sms);
  p.l2_promotion_bytes = fam::misaligned_l2_promotion(p);
  return p;
}

// Registered launcher: C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major
// bf16)^T, fp32 accumulation, as plan() says. family/launch.cuh: the workspace and the errors it throws.
const bool registered = gemm::register_step({
    .id = ID,
    .name = "l2_promotion",
    .parent = "29",
    .technique = "step 29's dispatch with A's and B's tensor maps at 128-byte L2 promotion where rows start inside a 32-byte sector (K % 16 == 8)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = menu::bf16_launcher<ID, plan>(),  // every entry's kernel (family/menu_launch.cuh)
    .unsupported = &fam::measured_unsupported,  // step 28's limits (its hand rule is every shape's fallback)
    .required_cc = 90,
    .workspace_bytes = &fam::step_workspace_bytes<plan>,  // the plan's
    .tile = {fam::kBM, 128, 64, menu::kBf16[size_t(menu::entry_of({.bn = 128}))].spec.stages},
    .threads = fam::kThreads,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true, .swap_sized = true, .pad_pitch = true, .measured = true},
});

}  // namespace step39
