// CUTLASS reference "cutlass_pingpong_128x128x64_c1x1": Hopper warp-specialized persistent GEMM,
// ping-pong schedule (two consumer warpgroups each own a whole 128x128 tile and alternate: one runs its
// mainloop while the other runs its epilogue), K tile 64, no cluster, TMA store epilogue.
// Expected SASS: HGMMA.64x128x16.F32.BF16. See sm90_gemm.cuh for the problem layout.
#include "sm90_gemm.cuh"

namespace {

using Gemm = gemm::cutlass_ref::detail::Sm90Bf16Gemm<
    cute::Shape<cute::_128, cute::_128, cute::_64>, cute::Shape<cute::_1, cute::_1, cute::_1>,
    cutlass::gemm::KernelTmaWarpSpecializedPingpong, cutlass::epilogue::TmaWarpSpecialized>;

constexpr const char* kName = "cutlass_pingpong_128x128x64_c1x1";

void run(const gemm::Bf16Gemm& p, void* workspace, int device, int sm_count, cudaStream_t stream) {
  Gemm::run(kName, p, workspace, device, sm_count, stream);
}

const bool registered = gemm::cutlass_ref::detail::register_config(
    {kName, &Gemm::refusal, &Gemm::workspace_bytes, &run});

}  // namespace
