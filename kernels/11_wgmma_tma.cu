// Step 11 — wgmma + TMA: the first tensor-core step, on step 10. One warpgroup (128 threads) owns a
// 64x64 tile of C. Per K tile of 64, thread 0 arms an mbarrier with the tile's byte count and issues
// two TMA copies (A: 64 rows x 64 K, B: 64 rows x 64 K) that land in shared memory with the 128-byte
// swizzle; everyone waits on the barrier's phase parity, then the warpgroup issues four
// wgmma.m64n64k16 (64x64 fp32 accumulators in registers, 32 per thread) reading both operands
// straight from shared memory through matrix descriptors. Attacks step 10's limit: every FFMA there
// needed shared-memory operands in registers; HGMMA does 64x64x16 per instruction.
// Read common/kernel_lib/ptx/ (mbarrier, tma, wgmma with its descriptor, epilogue: the fragment
// store) and common/kernel_lib/tma.cpp (tensor maps) with this file; docs/hopper_part1.md walks it.
// Prediction: ~250-300 TFLOP/s at 8192 (load latency fully exposed: one stage, load -> wait ->
// compute -> sync; only co-resident blocks overlap it); ~10x step 10.
// SASS: UTMALDG.2D, SYNCS.PHASECHK.TRANS64.TRYWAIT, HGMMA.64x64x16.F32.BF16.
// Supports: K % 8 == 0 (16-byte TMA row stride), any M, N >= 1: TMA zero-fills the out-of-bounds
// part of a tile (ragged M, N, K tail), stores clipped; ceil(N / BN) <= 65535 (grid y). sm_90a, CC 9.0.
// Run: make run STEP=11 M=4096 N=4096 K=4096
#include <cuda_bf16.h>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/ptx/epilogue.cuh"
#include "../common/kernel_lib/ptx/mbarrier.cuh"
#include "../common/kernel_lib/ptx/smem.cuh"
#include "../common/kernel_lib/ptx/tma.cuh"
#include "../common/kernel_lib/ptx/trace.cuh"
#include "../common/kernel_lib/ptx/wgmma.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step11 {

constexpr int BM = 64, BN = 64, BK = 64;
constexpr int THREADS = 128;  // one warpgroup
constexpr int WGMMA_K = 16;
constexpr uint32_t TILE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);  // what one K tile's TMAs deliver
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM == 64, "one wgmma m64 covers the tile's rows");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[BM * BK];  // 128-byte swizzled tiles start on 1024-byte boundaries
  alignas(1024) __nv_bfloat16 b[BN * BK];
  uint64_t full;  // mbarrier: "the K tile has landed"
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base

__global__ void __launch_bounds__(THREADS)
gemm_wgmma_tma(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&s.full, 1);  // one arrival (thread 0's expect_tx) + TILE_BYTES transactions
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  float acc[BN / 2] = {};  // this thread's share of the 64x64 fp32 tile (wgmma D fragment)
  const int k_tiles = (K + BK - 1) / BK;
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (threadIdx.x == 0) {
      ptx::mbarrier_arrive_expect_tx(&s.full, TILE_BYTES);
      ptx::tma_load_2d(s.a, &tmap_a, kt * BK, m0, &s.full);  // coordinates: (K, row)
      ptx::tma_load_2d(s.b, &tmap_b, kt * BK, n0, &s.full);
    }
    GEMM_TRACE_NOW(t_wait);
    ptx::mbarrier_wait_parity(&s.full, kt & 1);  // phase kt completes once TILE_BYTES have landed
    GEMM_TRACE(consumer_wait, kt, t_wait);  // trace builds only (make trace): no code otherwise
    GEMM_TRACE_NOW(t_mma);
    ptx::wgmma_fence_operands(acc);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // k16 slice kk starts 32 bytes further into each row
      ptx::wgmma_m64n64k16_bf16(acc, ptx::make_desc_k_sw128(s.a + kk * WGMMA_K),
                                ptx::make_desc_k_sw128(s.b + kk * WGMMA_K), 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();  // the wgmmas have read sA / sB ...
    GEMM_TRACE(mma, kt, t_mma);
    ptx::wgmma_fence_operands(acc);
    __syncthreads();       // ... in every warp, before thread 0 lets the next TMA overwrite them
  }
  GEMM_TRACE_NOW(t_epi);
  ptx::store_d_fragment_bf16(acc, C, M, N, m0, n0);
  GEMM_TRACE(epilogue, k_tiles, t_epi);
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_wgmma_tma, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const dim3 grid((p.m + BM - 1) / BM, (p.n + BN - 1) / BN);
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_wgmma_tma, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) { return gemm::tma_gemm_refusal(m, n, k, BM, BN); }

const bool registered = gemm::register_step({
    .id = "11",
    .name = "wgmma_tma",
    .parent = "10",
    .technique = "wgmma m64n64k16 + TMA (128B swizzle, mbarrier), 64x64 tile, one stage",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, 1},
    .threads = THREADS,
});

}  // namespace step11
