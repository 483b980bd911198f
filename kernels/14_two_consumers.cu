// Step 14 — two consumer warpgroups, 128x256 tile, setmaxnreg, on step 13. Step 13's one consumer
// drained its wgmmas every K tile and nothing filled that bubble. Here two consumer warpgroups split
// a 128x256 tile, each running wgmma.m64n256k16 (the largest N) on its own 64 rows against the shared
// B stage: while one waits, the other's HGMMAs keep the tensor cores busy, and a tile of 128x256
// halves the bytes loaded per FLOP again (48 KB per stage, 4 stages). Registers: 384 threads at
// __launch_bounds__(384, 1) start with 168 each (65536 / 384, down to a multiple of 8); the producer
// gives most back (setmaxnreg.dec 40) and the consumers take them (setmaxnreg.inc 232, room for 128
// accumulators without spills): 128 * (40 + 2 * 232) = 64512 <= 65536 per SM.
// Prediction: ~1.2x step 13 at 8192 (a public ladder: 524 -> 641 TFLOP/s, 0.83x cuBLAS).
// SASS: HGMMA.64x256x16.F32.BF16, USETMAXREG (sass_annotations/14_two_consumers.md).
// Supports: K % 8 == 0, any M, N >= 1 (zero-fill, clipped stores), ceil(N / BN) <= 65535. sm_90a.
// Run: make run STEP=14 M=8192 N=8192 K=8192
#include <cuda_bf16.h>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/ptx/epilogue.cuh"
#include "../common/kernel_lib/ptx/mbarrier.cuh"
#include "../common/kernel_lib/ptx/setmaxnreg.cuh"
#include "../common/kernel_lib/ptx/smem.cuh"
#include "../common/kernel_lib/ptx/tma.cuh"
#include "../common/kernel_lib/ptx/trace.cuh"
#include "../common/kernel_lib/ptx/wgmma.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step14 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr int CONSUMER_WARPS = 4 * CONSUMERS;  // arrivals that empty a stage
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM == CONSUMERS * WGMMA_M, "each consumer warpgroup owns one m64 slab of the tile");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(WGMMA_N % 8 == 0 && WGMMA_N <= 256 && BM <= 256, "wgmma N and TMA box limits");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register split must fit the SM's 64K registers");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[STAGES][BM * BK];  // 16 KB per stage: stays 1024-byte aligned
  alignas(1024) __nv_bfloat16 b[STAGES][BN * BK];  // 32 KB per stage
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base

__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_two_consumers(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
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
  const int wg = threadIdx.x / 128;

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
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
  } else {  // consumer wg - 1: rows (wg - 1) * 64 .. +63 of the tile, all 256 columns
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int slab = (wg - 1) * WGMMA_M;
    float acc[WGMMA_N / 2] = {};
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int st = kt % STAGES;
      GEMM_TRACE_NOW(t_wait);
      ptx::mbarrier_wait_parity(&s.full[st], (kt / STAGES) & 1);
      GEMM_TRACE(consumer_wait, kt, t_wait);
      GEMM_TRACE_NOW(t_mma);
      ptx::wgmma_fence_operands(acc);
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / WGMMA_K; ++kk)
        ptx::wgmma_m64n256k16_bf16(acc, ptx::make_desc_k_sw128(s.a[st] + slab * BK + kk * WGMMA_K),
                                   ptx::make_desc_k_sw128(s.b[st] + kk * WGMMA_K), 1);
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();  // this warp's view of the stage's wgmmas is complete ...
      GEMM_TRACE(mma, kt, t_mma);
      ptx::wgmma_fence_operands(acc);
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[st]);  // ... so the warp releases the stage
    }
    GEMM_TRACE_NOW(t_epi);
    ptx::store_d_fragment_bf16(acc, C, M, N, m0 + slab, n0);
    GEMM_TRACE(epilogue, k_tiles, t_epi);
  }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_two_consumers, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const dim3 grid((p.m + BM - 1) / BM, (p.n + BN - 1) / BN);
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_two_consumers, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) { return gemm::tma_gemm_refusal(m, n, k, BM, BN); }

const bool registered = gemm::register_step({
    .id = "14",
    .name = "two_consumers",
    .parent = "13",
    .technique = "128x256 tile, two consumer warpgroups (wgmma m64n256k16), setmaxnreg 40/232",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
});

}  // namespace step14
