// Step 13 — warp specialization, on step 12: the 128x128 tile, now with a ring of STAGES shared-
// memory stages and two roles. Warpgroup 0 is the producer: one thread waits for a stage to be
// empty, arms its "full" mbarrier with the stage's byte count and issues the two TMA copies.
// Warpgroup 1 is the consumer: it waits for "full", runs the stage's wgmmas, waits for them, and
// arrives on "empty" (one arrival per consumer warp). Attacks step 12's exposed load latency: up to
// STAGES K tiles are in flight while the tensor cores work, and no block-wide barrier is left.
// Phase parity: stage s is reused every STAGES tiles, so K tile kt waits for parity
// (kt / STAGES) & 1 on full[s]; the producer waits for the opposite parity on empty[s], which a
// fresh barrier satisfies at once (the first pass needs no consumer release).
// Prediction: ~1.2-1.3x step 12 at 8192 (a public ladder: 426 -> 524 TFLOP/s).
// SASS: producer SYNCS.PHASECHK (empty), SYNCS.ARRIVE.TRANS64, 2x UTMALDG.2D; consumer
// SYNCS.PHASECHK (full), 8x HGMMA.64x128x16.F32.BF16, SYNCS.ARRIVE.TRANS64.A1T0 (empty).
// Supports: K % 8 == 0, any M, N >= 1 (zero-fill, clipped stores), ceil(N / BN) <= 65535. sm_90a.
// Run: make run STEP=13 M=4096 N=4096 K=4096
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

namespace step13 {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4;
constexpr int THREADS = 256;  // warpgroup 0: producer, warpgroup 1: consumer
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr int CONSUMER_WARPS = 4;  // arrivals that empty a stage
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM % WGMMA_M == 0 && BK % WGMMA_K == 0, "the tile is whole wgmma m64 blocks and k16 steps");
static_assert(WGMMA_N % 8 == 0 && WGMMA_N <= 256 && BM <= 256, "wgmma N and TMA box limits");
static_assert(THREADS == 2 * 128, "one producer and one consumer warpgroup");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[STAGES][BM * BK];  // each stage 16 KB: stays 1024-byte aligned
  alignas(1024) __nv_bfloat16 b[STAGES][BN * BK];
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base

__global__ void __launch_bounds__(THREADS, 1)
gemm_warp_specialization(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                         const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  if (threadIdx.x == 0) {
    for (int st = 0; st < STAGES; ++st) {
      ptx::mbarrier_init(&s.full[st], 1);
      ptx::mbarrier_init(&s.empty[st], CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: after this the roles never wait for each other's threads
  const int k_tiles = (K + BK - 1) / BK;

  if (threadIdx.x / 128 == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int st = kt % STAGES;
        GEMM_TRACE_NOW(t_wait);
        ptx::mbarrier_wait_parity(&s.empty[st], ((kt / STAGES) & 1) ^ 1);
        GEMM_TRACE(producer_wait, kt, t_wait);  // trace builds only (make trace): no code otherwise
        ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES);
        ptx::tma_load_2d(s.a[st], &tmap_a, kt * BK, m0, &s.full[st]);
        ptx::tma_load_2d(s.b[st], &tmap_b, kt * BK, n0, &s.full[st]);
      }
    }
  } else {  // consumer warpgroup
    float acc[BM / WGMMA_M][WGMMA_N / 2] = {};
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % STAGES;
      GEMM_TRACE_NOW(t_wait);
      ptx::mbarrier_wait_parity(&s.full[st], (kt / STAGES) & 1);
      GEMM_TRACE(consumer_wait, kt, t_wait);
      GEMM_TRACE_NOW(t_mma);
#pragma unroll
      for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / WGMMA_K; ++kk)
#pragma unroll
        for (int i = 0; i < BM / WGMMA_M; ++i)
          ptx::wgmma_m64n128k16_bf16(acc[i], ptx::make_desc_k_sw128(s.a[st] + i * WGMMA_M * BK + kk * WGMMA_K),
                                     ptx::make_desc_k_sw128(s.b[st] + kk * WGMMA_K), 1);
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();  // this warp's view of the stage's wgmmas is complete ...
      GEMM_TRACE(mma, kt, t_mma);
#pragma unroll
      for (int i = 0; i < BM / WGMMA_M; ++i) ptx::wgmma_fence_operands(acc[i]);
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[st]);  // ... so the warp releases the stage
    }
    GEMM_TRACE_NOW(t_epi);
#pragma unroll
    for (int i = 0; i < BM / WGMMA_M; ++i) ptx::store_d_fragment_bf16(acc[i], C, M, N, m0 + i * WGMMA_M, n0);
    GEMM_TRACE(epilogue, k_tiles, t_epi);
  }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_warp_specialization, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const dim3 grid((p.m + BM - 1) / BM, (p.n + BN - 1) / BN);
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_warp_specialization, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) { return gemm::tma_gemm_refusal(m, n, k, BM, BN); }

const bool registered = gemm::register_step({
    .id = "13",
    .name = "warp_specialization",
    .parent = "12",
    .technique = "producer warpgroup (TMA) + consumer warpgroup (wgmma), 4-stage full/empty ring",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
});

}  // namespace step13
