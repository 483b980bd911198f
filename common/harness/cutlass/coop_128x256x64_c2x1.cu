// CUTLASS reference "cutlass_coop_128x256x64_c2x1": Hopper warp-specialized persistent GEMM, cooperative
// schedule (two consumer warpgroups share each 128x256 tile, 64 rows each), K tile 64, clusters of
// 2x1 CTAs (the pair shares B tiles through TMA multicast), TMA store epilogue. The counterpart of
// step 14's tile. Expected SASS: HGMMA.64x256x16.F32.BF16. See sm90_gemm.cuh for the problem layout.
#include "sm90_gemm.cuh"

namespace {

using Gemm = gemm::cutlass_ref::detail::Sm90Bf16Gemm<
    cute::Shape<cute::_128, cute::_256, cute::_64>, cute::Shape<cute::_2, cute::_1, cute::_1>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative>;

constexpr const char* kName = "cutlass_coop_128x256x64_c2x1";

void run(const gemm::Bf16Gemm& p, void* workspace, int device, int sm_count, cudaStream_t stream) {
  Gemm::run(kName, p, workspace, device, sm_count, stream);
}

const bool registered = gemm::cutlass_ref::detail::register_config(
    {kName, &Gemm::refusal, &Gemm::workspace_bytes, &run});

}  // namespace
