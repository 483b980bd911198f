// SASS twin of step 13 whose consumer keeps one wgmma group in flight across K tiles
// (wgmma.wait_group 1) while its accumulators were zeroed by ordinary instructions before the loop.
// ptxas then cannot keep the asynchronous wgmma pipeline: it reports C7515 ("wgmma.mma_async
// instructions are serialized ...") and puts a WARPGROUP.DEPBAR after every HGMMA. Measured on the
// H200 (the same change applied to step 13): 424 TFLOP/s at 8192 instead of 564.
// Never linked or registered: tests/test_sass.cpp checks that step 13's rules flag it.
// twin-of: 13
// must-fail: ptxas lacks (?i)wgmma.*serializ
// must-fail: kernel count WARPGROUP\.DEPBAR.* == 1
// must-pass: kernel count HGMMA\.64x128x16\.F32\.BF16 == (BM/WGMMA_M)*(BK/WGMMA_K)
#include <cuda_bf16.h>

#include "../../common/kernel_lib/ptx/epilogue.cuh"
#include "../../common/kernel_lib/ptx/mbarrier.cuh"
#include "../../common/kernel_lib/ptx/wgmma.cuh"

namespace sass_twin {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4;
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;

__global__ void __launch_bounds__(128, 1)
hopper_serialized_wgmma(int M, int N, int K, __nv_bfloat16* C) {
  extern __shared__ __align__(1024) __nv_bfloat16 smem[];  // operands never loaded: SASS shape only
  __shared__ uint64_t full[STAGES], empty[STAGES];          // never initialised: SASS shape only
  __nv_bfloat16* sA = smem;
  __nv_bfloat16* sB = smem + STAGES * BM * BK;
  float acc[BM / WGMMA_M][WGMMA_N / 2] = {};
  for (int kt = 0; kt < (K + BK - 1) / BK; ++kt) {
    const int st = kt % STAGES;
    ptx::mbarrier_wait_parity(&full[st], (kt / STAGES) & 1);
#pragma unroll
    for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / WGMMA_K; ++kk)
#pragma unroll
      for (int i = 0; i < BM / WGMMA_M; ++i)
        ptx::wgmma_m64n128k16_bf16(acc[i], ptx::make_desc_k_sw128(sA + st * BM * BK + i * WGMMA_M * BK + kk * WGMMA_K),
                                   ptx::make_desc_k_sw128(sB + st * BN * BK + kk * WGMMA_K), 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<1>();  // the previous K tile's group is done; this one may still run
#pragma unroll
    for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
    if (kt > 0 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&empty[(kt - 1) % STAGES]);  // release K tile kt-1
  }
  ptx::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
#pragma unroll
  for (int i = 0; i < BM / WGMMA_M; ++i) ptx::store_d_fragment_bf16(acc[i], C, M, N, i * WGMMA_M, 0);
}

}  // namespace sass_twin
