// Step 15 — persistent kernel, grouped tile order, on step 14. Step 14's grid launched one block per
// tile: each block paid its prologue (barrier init, setmaxnreg, the first loads) and its epilogue
// stores ran with no loads in flight. Now the grid is one block per SM (min(tiles, SM count), read
// from the device), and each block loops over tiles t = blockIdx.x, + gridDim.x, ... The ring position
// (stage, phase) is carried across tiles (pipe::PipeState), so the producer runs ahead into the next
// tile while the consumers store the last one. Tiles are visited in the grouped order of
// common/kernel_lib/schedule.hpp (GROUP_M = 16 tile rows per group): a wave of 132 tiles reads 2048
// rows of A and 2304 of B, not all 8192 of A and 512 of B (step 14's order, at 8192^2). Two ideas in
// one step, each too small alone to measure apart: persistence and the tile order.
// Prediction: ~1.03-1.06x step 14 at 8192 (a public ladder: 641 -> 670, +4.5 %); less at 4096 (512
// tiles: the same 3.9 waves, a last wave 88 % full either way).
// SASS: the two loops of step 14 now inside a tile loop; same HGMMA.64x256x16.F32.BF16, USETMAXREG.
// Supports: K % 8 == 0, any M, N >= 1 (zero-fill, clipped stores), fewer than 2^30 tiles. sm_90a.
// Run: make run STEP=15 M=8192 N=8192 K=8192
#include <cuda_bf16.h>

#include <algorithm>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/pipeline.cuh"
#include "../common/kernel_lib/ptx/epilogue.cuh"
#include "../common/kernel_lib/ptx/mbarrier.cuh"
#include "../common/kernel_lib/ptx/setmaxnreg.cuh"
#include "../common/kernel_lib/ptx/smem.cuh"
#include "../common/kernel_lib/ptx/tma.cuh"
#include "../common/kernel_lib/ptx/wgmma.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"
#include "../common/kernel_lib/schedule.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step15 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group of the schedule: sqrt(132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
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
gemm_persistent_grouped(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
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
      ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0) + slab, n0);
    }
  }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  gemm::opt_in_dynamic_smem(gemm_persistent_grouped, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const int64_t tiles = int64_t((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  const dim3 grid(unsigned(std::min<int64_t>(tiles, gemm::sm_count())));  // one block per SM (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_persistent_grouped, p.m, p.n, p.k, tmap_a, tmap_b, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "15",
    .name = "persistent_grouped",
    .parent = "14",
    .technique = "persistent: one block per SM loops over tiles in grouped order (GROUP_M 16), ring runs across tiles",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
});

}  // namespace step15
