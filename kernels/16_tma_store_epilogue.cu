// Step 16 — the epilogue through shared memory and TMA stores, on step 15. Step 15's consumers store
// their 64x256 slab straight from registers (64 4-byte STG per thread, 16 bytes of 8 rows per warp
// store) and no wgmma runs meanwhile: ncu at 4096^3 saw that kernel's tensor pipe 83.5 % busy (cuBLAS
// 95 %). Now each consumer writes its slab as four 64x64 boxes into shared memory, 128B-swizzled
// (conflict-free 4-byte stores, common/kernel_lib/swizzle.hpp), and one thread hands each box to a TMA
// store that runs on while the consumer starts the next tile. Two 8 KB buffers per consumer
// alternate: before refilling one, its issuer waits until the store that read it is done
// (wait_group.read 1); a named barrier holds the warpgroup. TMA clips boxes at the edges; N % 8 != 0
// or a C not 16-byte aligned keeps 15's stores.
// Prediction: ~1.05-1.10x step 15 at 4096, ~1.03x at 8192 (half the epilogues per FLOP).
// SASS: UTMASTG.2D + UTMACMDFLUSH per box, 64 STS in the tile loop, BAR.SYNC with a register id.
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=16 M=8192 N=8192 K=8192
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
#include "../common/kernel_lib/ptx/wgmma.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/schedule.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step16 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group of the schedule: sqrt(132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr int CONSUMER_WARPS = 4 * CONSUMERS;  // arrivals that empty a stage
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM == CONSUMERS * WGMMA_M, "each consumer warpgroup owns one m64 slab of the tile");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(WGMMA_N % 8 == 0 && WGMMA_N <= 256 && BM <= 256, "wgmma N and TMA box limits");
static_assert(WGMMA_M == EPI_BOX && BN % EPI_BOX == 0, "a consumer's slab is a row of whole epilogue boxes");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register split must fit the SM's 64K registers");

struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[STAGES][BM * BK];  // 16 KB per stage: stays 1024-byte aligned
  alignas(1024) __nv_bfloat16 b[STAGES][BN * BK];  // 32 KB per stage
  alignas(1024) __nv_bfloat16 c[CONSUMERS][EPI_BUFS][EPI_BOX * EPI_BOX];  // 8 KB per box, 128B-swizzled
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_tma_store_epilogue(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                        const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                        bool tma_epilogue, __nv_bfloat16* C) {
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
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    pipe::PipeState<STAGES> ring;  // the same walk as the producer's: one step per K tile of every tile
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * BN;
      float acc[WGMMA_N / 2] = {};
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
        ptx::wgmma_wait<0>();  // this warp's view of the stage's wgmmas is complete ...
        ptx::wgmma_fence_operands(acc);
        if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[st]);  // ... so the warp releases the stage
      }
      // Every stage of this tile is released: while these stores run, the producer fills the ring
      // with the next tile's K tiles.
      if (!tma_epilogue) {
        ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0) + slab, n0);
        continue;
      }
#pragma unroll
      for (int box = 0; box < BN / EPI_BOX; ++box) {
        __nv_bfloat16* buf = s.c[wg - 1][box % EPI_BUFS];
        if (issuer) ptx::tma_store_wait_read<EPI_BUFS - 1>();  // the store that last read buf is done with it ...
        ptx::named_barrier_sync(wg, 128);                        // ... and the whole warpgroup knows it
        ptx::store_d_box_sw128(acc, box, buf);
        ptx::fence_proxy_async_shared();   // these generic-proxy writes, before the async-proxy TMA reads them
        ptx::named_barrier_sync(wg, 128);  // every thread's part of the box is written
        if (issuer) {
          ptx::tma_store_2d(&tmap_c, buf, n0 + box * EPI_BOX, m0 + slab);  // clipped at M and N by TMA
          ptx::tma_store_commit();
        }
      }
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
  gemm::opt_in_dynamic_smem(gemm_tma_store_epilogue, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const int64_t tiles = int64_t((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  const dim3 grid(unsigned(std::min<int64_t>(tiles, gemm::sm_count())));  // one block per SM (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_tma_store_epilogue, p.m, p.n, p.k, tmap_a, tmap_b,
                      tmap_c, tma_epilogue, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "16",
    .name = "tma_store_epilogue",
    .parent = "15",
    .technique = "epilogue: 128B-swizzled 64x64 boxes in shared memory, TMA stores that run on into the next tile",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
});

}  // namespace step16
