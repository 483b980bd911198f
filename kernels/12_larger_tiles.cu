// Step 12 — larger tiles, on step 11: 128x128 instead of 64x64, still one warpgroup and one stage.
// Each K tile now issues wgmma.m64n128k16 (N = 128, the whole tile width) twice per k16 slice, once
// per 64-row half of the tile; 128 fp32 accumulators per thread. Attacks step 11's arithmetic
// intensity: a 64x64 tile moves (64 + 64) * 64 * 2 bytes per 2 * 64 * 64 * 64 FLOP; at 128x128
// every byte loaded feeds twice as many FLOP, halving L2 / shared traffic per FLOP, and each HGMMA
// is twice as long, so issue overhead and the per-K-tile barrier round trip are spread over 4x the work.
// Prediction: ~1.3-1.5x step 11 at 8192 (a public ladder: 304 -> 426 TFLOP/s); the load latency
// is still exposed (no pipeline) and fewer blocks now share each SM.
// SASS: HGMMA.64x128x16.F32.BF16 (8 per K tile instead of 4 x 64x64).
// Supports: K % 8 == 0 (16-byte TMA row stride), any M, N >= 1 (TMA zero-fills out-of-bounds
// loads, stores are clipped); ceil(N / BN) <= 65535 (grid y). Built for sm_90a, runs on CC 9.0.
// Run: make run STEP=12 M=4096 N=4096 K=4096
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

namespace step12 {

constexpr int BM = 128, BN = 128, BK = 64;
constexpr int THREADS = 128;  // one warpgroup
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr uint32_t TILE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);  // what one K tile's TMAs deliver
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM % WGMMA_M == 0, "the tile's rows are whole wgmma m64 blocks");
static_assert(WGMMA_N % 8 == 0 && WGMMA_N <= 256, "wgmma N is a multiple of 8 up to 256");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(BM <= 256 && BN <= 256, "a TMA box extent is at most 256");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[BM * BK];  // 128-byte swizzled tiles start on 1024-byte boundaries
  alignas(1024) __nv_bfloat16 b[BN * BK];
  uint64_t full;  // mbarrier: "the K tile has landed"
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base

__global__ void __launch_bounds__(THREADS)
gemm_larger_tiles(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&s.full, 1);  // one arrival (thread 0's expect_tx) + TILE_BYTES transactions
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  float acc[BM / WGMMA_M][WGMMA_N / 2] = {};  // two m64n128 D fragments: rows 0-63 and 64-127
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
#pragma unroll
    for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // k16 slice kk starts 32 bytes further into each row
#pragma unroll
      for (int i = 0; i < BM / WGMMA_M; ++i)  // 64-row half i of sA starts 64 rows x 128 bytes in
        ptx::wgmma_m64n128k16_bf16(acc[i], ptx::make_desc_k_sw128(s.a + i * WGMMA_M * BK + kk * WGMMA_K),
                                   ptx::make_desc_k_sw128(s.b + kk * WGMMA_K), 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();  // the wgmmas have read sA / sB ...
    GEMM_TRACE(mma, kt, t_mma);
#pragma unroll
    for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
    __syncthreads();       // ... in every warp, before thread 0 lets the next TMA overwrite them
  }
  GEMM_TRACE_NOW(t_epi);
#pragma unroll
  for (int i = 0; i < BM / WGMMA_M; ++i) ptx::store_d_fragment_bf16(acc[i], C, M, N, m0 + i * WGMMA_M, n0);
  GEMM_TRACE(epilogue, k_tiles, t_epi);
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_larger_tiles, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const dim3 grid((p.m + BM - 1) / BM, (p.n + BN - 1) / BN);
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_larger_tiles, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) { return gemm::tma_gemm_refusal(m, n, k, BM, BN); }

const bool registered = gemm::register_step({
    .id = "12",
    .name = "larger_tiles",
    .parent = "11",
    .technique = "128x128 tile, wgmma m64n128k16 x2 per k16, one warpgroup, one stage",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, 1},
    .threads = THREADS,
});

}  // namespace step12
