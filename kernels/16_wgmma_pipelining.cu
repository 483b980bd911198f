// Step 16 — one wgmma group in flight. Steps 13-15 end every K tile with wgmma.wait_group 0: the
// consumer drains the tensor-core queue before it releases the stage, so its next K tile's HGMMAs
// start only after the last one finished (the other consumer covers part of that gap). Now a consumer
// commits K tile kt's wgmmas, waits with wait_group 1 (K tile kt-1's group is complete, kt's keeps
// running) and releases kt-1's stage; a tile ends with wait_group 0 and the release of its last stage.
// The per-tile zeroing of the accumulators stays: it runs after that drain, and ptxas keeps the
// wgmmas unserialized (no C7515, unlike step 13's experiment in docs/hopper_ladder.md; .expect checks).
// Why this and not: a deeper ring (5 stages of 48 KB exceed 227 KB), ping-pong consumers (CUTLASS's
// ping-pong 128x128 ran 0.94x its cooperative 128x256 here), fewer arrivals (8 per stage, cheap).
// Expected (before measuring): ~1.02-1.05x step 15 at 8192 (the bubble per K tile is a wgmma latency).
// Measured (H200, make bench 2026-12-01, paired): 703.3 TFLOP/s at 4096 (0.898x cuBLAS), 682.1 at 8192
// (0.976x): the same ratio as step 15 (0.896 / 0.976). No gain: the other consumer already hid the drain.
// Supports: K % 8 == 0, any M, N >= 1 (zero-fill, clipped stores), fewer than 2^30 tiles. sm_90a.
// Run: make run STEP=16 M=8192 N=8192 K=8192
#include <cuda_bf16.h>

#include <algorithm>

#include "../common/check.hpp"
#include "../common/launch.hpp"
#include "../common/pipeline.cuh"
#include "../common/ptx/epilogue.cuh"
#include "../common/ptx/mbarrier.cuh"
#include "../common/ptx/setmaxnreg.cuh"
#include "../common/ptx/smem.cuh"
#include "../common/ptx/tma.cuh"
#include "../common/ptx/wgmma.cuh"
#include "../common/refusals.hpp"
#include "../common/registry.hpp"
#include "../common/schedule.hpp"
#include "../common/tma.hpp"

namespace step16 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group of the schedule: sqrt(132 SMs * BN / BM) ~ 16 (common/schedule.hpp)
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
gemm_wgmma_pipelining(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                      const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  if (threadIdx.x == 0) {
    for (int st = 0; st < STAGES; ++st) {
      ptx::mbarrier_init(&s.full[st], 1);
      ptx::mbarrier_init(&s.empty[st], CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: after this the roles never wait for each other's threads
  const int k_tiles = (K + BK - 1) / BK;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
  const int wg = threadIdx.x / 128;

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      pipe::PipeState<STAGES> ring;  // runs on across tiles: the next tile's loads start as soon as stages free up
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const gemm::schedule::TileCoord tile = gemm::schedule::grouped(t, tiles_m, tiles_n, GROUP_M);
        const int m0 = tile.m * BM, n0 = tile.n * BN;
        for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
          const int st = ring.stage;
          ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES);
          ptx::tma_load_2d(s.a[st], &tmap_a, kt * BK, m0, &s.full[st]);
          ptx::tma_load_2d(s.b[st], &tmap_b, kt * BK, n0, &s.full[st]);
        }
      }
    }
  } else {  // consumer wg - 1: rows (wg - 1) * 64 .. +63 of the tile, all 256 columns
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int slab = (wg - 1) * WGMMA_M;
    pipe::PipeState<STAGES> ring;  // the same walk as the producer's: one step per K tile of every tile
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * BN;
      float acc[WGMMA_N / 2] = {};
      int held = 0;  // the stage of the previous K tile, read by the group still in flight
      for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
        const int st = ring.stage;
        ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
        ptx::wgmma_fence_operands(acc);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / WGMMA_K; ++kk)
          ptx::wgmma_m64n256k16_bf16(acc, ptx::make_desc_k_sw128(s.a[st] + slab * BK + kk * WGMMA_K),
                                     ptx::make_desc_k_sw128(s.b[st] + kk * WGMMA_K), 1);
        ptx::wgmma_commit();
        ptx::wgmma_wait<1>();  // this warp's view of K tile kt-1's wgmmas is complete (kt's may run on) ...
        ptx::wgmma_fence_operands(acc);
        if (kt > 0 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);  // ... so the warp releases kt-1's stage
        held = st;
      }
      ptx::wgmma_wait<0>();  // the tile's last group: the accumulators are final ...
      ptx::wgmma_fence_operands(acc);
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);  // ... and its stage is released
      // Every stage of this tile is released: while these stores run, the producer fills the ring
      // with the next tile's K tiles.
      ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0) + slab, n0);
    }
  }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_wgmma_pipelining, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const int64_t tiles = int64_t((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  const dim3 grid(unsigned(std::min<int64_t>(tiles, gemm::sm_count())));  // one block per SM (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_wgmma_pipelining, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "16",
    .name = "wgmma_pipelining",
    .technique = "one wgmma group in flight per consumer (wait_group 1, then release the previous K tile's stage)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
});

}  // namespace step16
