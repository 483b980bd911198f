// Step 22 — ping-pong consumers, on step 18. In steps 14-21 the two consumer warpgroups split every
// 128x256 tile, so they reach its end together and both run their epilogues while the tensor cores
// wait (about 2 us per tile in step 18's trace at 8192^3). Here each consumer owns whole 128x128 tiles
// (two m64n128k16 wgmmas per k16 step, the same 128 accumulators per thread) and the two take
// alternate tiles of the block's sequence; the producer loads tile j before tile j + 1, so the
// mainloops follow one another and each consumer's epilogue runs during the other's mainloop (CUTLASS's
// "ping-pong" schedule). What that needs: a consumer skips the other's K tiles in the ring
// (PipeState::advance_by) and, before its mainloop, waits on an order barrier until every warp of the
// other has passed its last full-barrier wait (else it could test a stage's parity a round early and
// read a stage that is not yet its own); a lone consumer keeps one wgmma group queued
// (wgmma.wait_group 1); a stage's empty barrier counts the 4 warps of the one consumer that read it.
// Cost: 1.33x the L2->SM bytes and 1.2x the shared-memory operand reads per FLOP of 128x256 tiles.
// Prediction: no tile-boundary idle time: +1-3 % of cycles where K = 4096, about +1 % at K = 8192,
// less the extra traffic's energy at the power cap.
// SASS: HGMMA.64x128x16 (8 per K tile), WARPGROUP.DEPBAR.LE gsb0, 0x1 in the K loop, and the order
// barriers' extra SYNCS waits before each mainloop.
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=22 M=16384 N=4096 K=4096
#include <cuda_bf16.h>

#include <algorithm>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/pipeline.cuh"
#include "../common/kernel_lib/ptx/barrier.cuh"
#include "../common/kernel_lib/ptx/epilogue.cuh"
#include "../common/kernel_lib/ptx/fence.cuh"
#include "../common/kernel_lib/ptx/mbarrier.cuh"
#include "../common/kernel_lib/ptx/setmaxnreg.cuh"
#include "../common/kernel_lib/ptx/smem.cuh"
#include "../common/kernel_lib/ptx/tma.cuh"
#include "../common/kernel_lib/ptx/trace.cuh"
#include "../common/kernel_lib/ptx/wgmma.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/schedule.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step22 {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 6;  // one consumer's tile; 6 stages of 32 KB
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group: sqrt(2 tiles per SM * 132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr int M_SLABS = BM / WGMMA_M;  // m64 slabs per consumer tile: one accumulator fragment each
constexpr int CONSUMER_WARPS = 4;      // arrivals that empty a stage: the warps of the one consumer that read it
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM % WGMMA_M == 0, "a consumer's tile is a whole number of m64 slabs");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(WGMMA_N == 128, "the wgmma wrapper used below is m64n128k16");
static_assert(WGMMA_M == EPI_BOX && BN % EPI_BOX == 0, "a slab is a row of whole epilogue boxes");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register split must fit the SM's 64K registers");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[STAGES][BM * BK];  // 16 KB per stage: stays 1024-byte aligned
  alignas(1024) __nv_bfloat16 b[STAGES][BN * BK];  // 16 KB per stage
  alignas(1024) __nv_bfloat16 c[CONSUMERS][EPI_BUFS][EPI_BOX * EPI_BOX];  // 8 KB per box, 128B-swizzled
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
  uint64_t order[CONSUMERS];  // consumer c may start its next mainloop: all 4 warps of the other passed their last full wait
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_pingpong(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
              const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
              bool tma_epilogue, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  if (threadIdx.x == 0) {
    for (int st = 0; st < STAGES; ++st) {
      ptx::mbarrier_init(&s.full[st], 1);
      ptx::mbarrier_init(&s.empty[st], CONSUMER_WARPS);
    }
    for (int c = 0; c < CONSUMERS; ++c) ptx::mbarrier_init(&s.order[c], CONSUMER_WARPS);  // every warp of the other consumer
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
      for (int t = blockIdx.x; t < tiles; t += gridDim.x) {  // every tile of the block, both consumers' in turn
        const gemm::schedule::TileCoord tile = gemm::schedule::grouped(t, tiles_m, tiles_n, GROUP_M);
        const int m0 = tile.m * BM, n0 = tile.n * BN;
        for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
          const int st = ring.stage;
          GEMM_TRACE_NOW(t_wait);  // trace builds only (make trace): no code otherwise
          ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
          GEMM_TRACE(producer_wait, (t / gridDim.x) * k_tiles + kt, t_wait);  // K tiles counted across tiles
          ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES);
          ptx::tma_load_2d(s.a[st], &tmap_a, kt * BK, m0, &s.full[st]);
          ptx::tma_load_2d(s.b[st], &tmap_b, kt * BK, n0, &s.full[st]);
        }
      }
    }
  } else {  // consumer me = wg - 1: the block's tiles j = me, me + 2, ..., each 128 x 128 whole
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int me = wg - 1;
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    const uint64_t evict_first = ptx::l2_policy_evict_first();  // C's stores: the first lines L2 gives up
    pipe::PipeState<STAGES> ring;  // the producer's walk, less the other consumer's tiles
    if (me == 1) ring.advance_by(k_tiles);  // tile j = 0 is consumer 0's
    float acc[M_SLABS][WGMMA_N / 2] = {};  // zeroed once: every tile's first wgmma overwrites it (scale-d = 0)
    int mine = 0;  // this consumer's tiles so far
    for (int t = blockIdx.x + me * gridDim.x; t < tiles; t += CONSUMERS * gridDim.x, ++mine) {
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * BN;
      // The order barriers: tile j waits for the other consumer's tile j - 1 to pass its last full wait
      // (consumer 0's first tile has none before it). Each barrier completes one phase per tile.
      if (me == 1) ptx::mbarrier_wait_parity(&s.order[1], uint32_t(mine & 1));
      else if (mine > 0) ptx::mbarrier_wait_parity(&s.order[0], uint32_t((mine - 1) & 1));
      int held = -1;  // the stage of the previous K tile, released once its wgmmas are done
      for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
        const int st = ring.stage;
        GEMM_TRACE_NOW(t_wait);
        ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
        GEMM_TRACE(consumer_wait, (t / gridDim.x) * k_tiles + kt, t_wait);
        GEMM_TRACE_NOW(t_mma);
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // scale-d = 0 on the tile's first k16 step: D = A*B
#pragma unroll
          for (int i = 0; i < M_SLABS; ++i)
            ptx::wgmma_m64n128k16_bf16(acc[i], ptx::make_desc_k_sw128(s.a[st] + i * WGMMA_M * BK + kk * WGMMA_K),
                                       ptx::make_desc_k_sw128(s.b[st] + kk * WGMMA_K), kt > 0 || kk > 0);
        ptx::wgmma_commit();
        if (kt == k_tiles - 1 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.order[1 - me]);  // this warp is past its last full wait
        ptx::wgmma_wait<1>();  // K tile kt - 1's group is complete; kt's keeps the tensor cores busy ...
        GEMM_TRACE(mma, (t / gridDim.x) * k_tiles + kt, t_mma);
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
        if (held >= 0 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);  // ... so kt - 1's stage is free
        held = st;
      }
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);
      ring.advance_by(k_tiles);  // past the other consumer's next tile
      // The other consumer's mainloop runs while these stores do.
      GEMM_TRACE_NOW(t_epi);
      if (!tma_epilogue) {
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
          ptx::store_d_fragment_bf16(acc[i], C, M, N, int64_t(m0) + i * WGMMA_M, n0);
        continue;
      }
#pragma unroll
      for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
        for (int box = 0; box < BN / EPI_BOX; ++box) {
          __nv_bfloat16* buf = s.c[me][(i * (BN / EPI_BOX) + box) % EPI_BUFS];
          if (issuer) ptx::tma_store_wait_read<EPI_BUFS - 1>();  // the store that last read buf is done with it ...
          ptx::named_barrier_sync(wg, 128);                        // ... and the whole warpgroup knows it
          ptx::store_d_box_sw128(acc[i], box, buf);
          ptx::fence_proxy_async_shared();   // these generic-proxy writes, before the async-proxy TMA reads them
          ptx::named_barrier_sync(wg, 128);  // every thread's part of the box is written
          if (issuer) {
            ptx::tma_store_2d_hint(&tmap_c, buf, n0 + box * EPI_BOX, m0 + i * WGMMA_M, evict_first);  // clipped at M, N
            ptx::tma_store_commit();
          }
        }
      GEMM_TRACE(epilogue, (t / gridDim.x) * k_tiles + k_tiles - 1, t_epi);  // the boxes handed to TMA
    }
    if (issuer) ptx::tma_store_wait_all<0>();  // no store may read shared memory after the block exits
  }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register stores.
  const gemm::TmaMatrix c{p.c, uint64_t(p.m), uint64_t(p.n), EPI_BOX, EPI_BOX};
  const bool tma_epilogue = !gemm::tma_refusal(c).has_value();
  const CUtensorMap tmap_c = tma_epilogue ? gemm::make_tma_2d(c) : CUtensorMap{};
  gemm::opt_in_dynamic_smem(gemm_pingpong, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const int64_t tiles = int64_t((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  const dim3 grid(unsigned(std::min<int64_t>(tiles, gemm::sm_count())));  // one block per SM (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_pingpong, p.m, p.n, p.k, tmap_a, tmap_b,
                      tmap_c, tma_epilogue, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "22",
    .name = "pingpong",
    .parent = "18",
    .technique = "ping-pong consumers: each owns whole 128x128 tiles, one's epilogue under the other's mainloop",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
});

}  // namespace step22
