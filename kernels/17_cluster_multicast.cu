// Step 17 — clusters of two blocks share one operand through TMA multicast: a side branch on step 16
// (it measured slower; the main line goes on from 16 at step 18). In step 16 the two blocks computing
// tiles (m, n) and (m+1, n) each load the same B tile from L2. Now they run as a cluster of two
// (launch attribute, common/kernel_lib/launch.hpp) over the pair schedule of
// common/kernel_lib/schedule.hpp: each block loads its own A tile and half of the shared B tile,
// multicast into both blocks' shared memory: per K tile a cluster asks L2 for 2 A + 1 B tiles, 64 KB
// instead of 96. The cost: each stage waits for the consumers of both blocks (remote mbarrier
// arrives), and a cluster sync after barrier init and before exit. CLUSTER_ALONG switches to pairs
// along N that share A instead. The K loop and the TMA-store epilogue are step 16's.
// Prediction: ~1.00-1.03x step 16 at 8192 (a public ladder: +2 % from multicast).
// SASS: UTMALDG.2D.MULTICAST beside UTMALDG.2D, UCGABAR_ARV / UCGABAR_WAIT, the remote arrives.
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; N % 8 != 0: register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=17 M=8192 N=8192 K=8192
#include <cuda_bf16.h>

#include <algorithm>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/pipeline.cuh"
#include "../common/kernel_lib/ptx/barrier.cuh"
#include "../common/kernel_lib/ptx/cluster.cuh"
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

namespace step17 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
// The cluster: two blocks, neighbours along M (same N columns: they share the B tile) or along N
// (same M rows: they share the A tile). Along M is the registered step; to measure along N, set
// CLUSTER_ALONG = Along::N here and rebuild (a second registration would need its own binary).
enum class Along { M, N };
constexpr Along CLUSTER_ALONG = Along::M;
constexpr int CLUSTER = 2;  // blocks per cluster (1D cluster dims: CLUSTER x 1 x 1)
constexpr int CLUSTER_M = CLUSTER_ALONG == Along::M ? CLUSTER : 1, CLUSTER_N = CLUSTER / CLUSTER_M;
constexpr uint16_t CLUSTER_MASK = (1u << CLUSTER) - 1;  // multicast to every block of the cluster
constexpr int GROUP_M = 16;  // tile rows per group of the schedule: sqrt(132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int GROUP_CLUSTERS = GROUP_M / CLUSTER_M;  // the same 16 tile rows per group, counted in cluster tiles
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
// Arrivals that empty a stage: every consumer warp of BOTH blocks, since the stage's shared half is
// written into both blocks' shared memory by one multicast (checklist rule 6).
constexpr int CONSUMER_WARPS = 4 * CONSUMERS * CLUSTER;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
// The shared operand is loaded in CLUSTER slices, one per block, each multicast to every block:
// A is loaded as BM / CLUSTER_N-row boxes, B as BN / CLUSTER_M-row boxes.
constexpr int BOX_A_ROWS = BM / CLUSTER_N, BOX_B_ROWS = BN / CLUSTER_M;
// Bytes landing in THIS block's shared memory per stage, which its full barrier expects: the whole A
// tile and the whole B tile, i.e. the boxes it issues itself plus the slice its peer multicasts into it
// (checklist rule 5). The same 48 KB as step 16: multicast changes who loads, not what lands.
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
static_assert(STAGE_BYTES == (CLUSTER_N * BOX_A_ROWS + CLUSTER_M * BOX_B_ROWS) * BK * sizeof(__nv_bfloat16),
              "the full barrier expects every box that lands here: own boxes + the peer's multicast slice");
static_assert(CLUSTER_M * CLUSTER_N == CLUSTER && BM % CLUSTER_N == 0 && BN % CLUSTER_M == 0, "cluster shape");
static_assert(BOX_A_ROWS % 8 == 0 && BOX_B_ROWS % 8 == 0,
              "a slice must be whole 8-row swizzle atoms (1024 bytes) so the slices' swizzle lines up");
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM == CONSUMERS * WGMMA_M, "each consumer warpgroup owns one m64 slab of the tile");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(WGMMA_N % 8 == 0 && WGMMA_N <= 256 && BM <= 256, "wgmma N and TMA box limits");
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
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
gemm_cluster_multicast(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                       bool tma_epilogue, __nv_bfloat16* C) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(ptx::smem_align_up<1024>(smem_raw));
  if (threadIdx.x == 0) {
    for (int st = 0; st < STAGES; ++st) {
      ptx::mbarrier_init(&s.full[st], 1);
      ptx::mbarrier_init(&s.empty[st], CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init();  // .release.cluster: the inits are visible to the peer block too
  }
  // Cluster-wide barrier instead of __syncthreads: the peer multicasts into our stages and arrives on
  // our empty barriers, so neither may happen before BOTH blocks initialized their barriers.
  ptx::cluster_sync();  // the last barrier until the exit: after this the roles never wait for each other's threads
  const int k_tiles = (K + BK - 1) / BK;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  // The schedule walks cluster tiles; both blocks of a cluster take the same sequence (cluster index
  // blockIdx.x / CLUSTER: cluster dims CLUSTER x 1 x 1 group blocks CLUSTER*c .. +CLUSTER-1), so they
  // stay in lockstep: every K tile of one needs the peer's multicast slice and the peer's release.
  const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int cluster_tiles = ((tiles_m + CLUSTER_M - 1) / CLUSTER_M) * ((tiles_n + CLUSTER_N - 1) / CLUSTER_N);
  const uint32_t rank = ptx::cluster_ctarank();
  const int wg = threadIdx.x / 128;

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      pipe::PipeState<STAGES> ring;  // runs on across tiles: the next tile's loads start as soon as stages free up
      for (int t = cluster; t < cluster_tiles; t += clusters) {
        const gemm::schedule::TileCoord tile =
            gemm::schedule::cluster_grouped(t, int(rank), tiles_m, tiles_n, CLUSTER_M, CLUSTER_N, GROUP_CLUSTERS);
        const int m0 = tile.m * BM, n0 = tile.n * BN;  // m0 >= M (or n0 >= N) in a cluster's padding tile: zero-filled boxes
        for (int kt = 0; kt < k_tiles; ++kt, ring.advance()) {
          const int st = ring.stage;
          // Both blocks' consumers released this stage (CONSUMER_WARPS counts the peer's warps too).
          ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
          // May run after the peer's slice already landed here: the transaction count goes negative
          // until this expect_tx, and the phase cannot complete before this arrival anyway.
          ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES);
          if constexpr (CLUSTER_ALONG == Along::M) {  // own A tile; slice `rank` of the shared B tile, to both blocks
            ptx::tma_load_2d(s.a[st], &tmap_a, kt * BK, m0, &s.full[st]);
            ptx::tma_load_2d_multicast(s.b[st] + rank * BOX_B_ROWS * BK, &tmap_b, kt * BK,
                                       tile.n * BN + int(rank) * BOX_B_ROWS, &s.full[st], CLUSTER_MASK);
          } else {  // own B tile; slice `rank` of the shared A tile, to both blocks
            ptx::tma_load_2d_multicast(s.a[st] + rank * BOX_A_ROWS * BK, &tmap_a, kt * BK,
                                       tile.m * BM + int(rank) * BOX_A_ROWS, &s.full[st], CLUSTER_MASK);
            ptx::tma_load_2d(s.b[st], &tmap_b, kt * BK, n0, &s.full[st]);
          }
        }
      }
    }
  } else {  // consumer wg - 1: rows (wg - 1) * 64 .. +63 of the tile, all 256 columns
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int slab = (wg - 1) * WGMMA_M;
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    // A consumer warp releases a stage in every block of the cluster: its own block's producer refills
    // the stage's own part, and the peer's producer multicasts its slice into this block's copy too.
    auto release = [&s](int stage) {
      for (uint32_t cta = 0; cta < CLUSTER; ++cta) ptx::mbarrier_arrive_cluster(&s.empty[stage], cta);
    };
    pipe::PipeState<STAGES> ring;  // the same walk as the producer's: one step per K tile of every tile
    for (int t = cluster; t < cluster_tiles; t += clusters) {
      const gemm::schedule::TileCoord tile =
          gemm::schedule::cluster_grouped(t, int(rank), tiles_m, tiles_n, CLUSTER_M, CLUSTER_N, GROUP_CLUSTERS);
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
        if (threadIdx.x % 32 == 0) release(st);  // ... so the warp releases the stage in both blocks
      }
      // Every stage of this tile is released: while these stores run, the producer fills the ring
      // with the next tile's K tiles.
      if (!tma_epilogue) {
        ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0) + slab, n0);  // clips a padding tile's rows/columns away
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
          ptx::tma_store_2d(&tmap_c, buf, n0 + box * EPI_BOX, m0 + slab);  // clipped at M and N (a padding tile: nothing)
          ptx::tma_store_commit();
        }
      }
    }
    if (issuer) ptx::tma_store_wait_all<0>();  // no store may read shared memory after the block exits
  }
  // No block may exit while its peer can still multicast into its shared memory or arrive on its
  // barriers: both blocks' consumers have consumed every stage (so every multicast landed) and made
  // every remote arrive before they reach this barrier. __syncwarp reconverges the producer warp
  // (thread 0 ran the loop alone) before the .aligned cluster barrier.
  __syncwarp();
  ptx::cluster_sync();
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BOX_A_ROWS, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BOX_B_ROWS, BK});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register stores.
  const gemm::TmaMatrix c{p.c, uint64_t(p.m), uint64_t(p.n), EPI_BOX, EPI_BOX};
  const bool tma_epilogue = !gemm::tma_refusal(c).has_value();
  const CUtensorMap tmap_c = tma_epilogue ? gemm::make_tma_2d(c) : CUtensorMap{};
  gemm::opt_in_dynamic_smem(gemm_cluster_multicast, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  const int64_t cluster_tiles =
      int64_t((p.m + CLUSTER_M * BM - 1) / (CLUSTER_M * BM)) * ((p.n + CLUSTER_N * BN - 1) / (CLUSTER_N * BN));
  // One block per SM, in whole clusters: at most SM count / 2 clusters, and no more than can be resident
  // at once (a cluster must fit in one GPC), so that every cluster runs in the first and only wave.
  const int resident = std::min(gemm::sm_count() / CLUSTER,
                                gemm::max_active_clusters(gemm_cluster_multicast, THREADS, SMEM_BYTES, CLUSTER));
  const dim3 grid(unsigned(CLUSTER * std::min<int64_t>(cluster_tiles, resident)));  // a multiple of CLUSTER
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream, dim3(CLUSTER, 1, 1)}, gemm_cluster_multicast, p.m, p.n,
                      p.k, tmap_a, tmap_b, tmap_c, tma_epilogue, p.c);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM * CLUSTER_M, BN * CLUSTER_N);  // counts cluster tiles
}

const bool registered = gemm::register_step({
    .id = "17",
    .name = "cluster_multicast",
    .parent = "16",
    .technique = "clusters of 2 along M: each block loads its A and half of the shared B, TMA-multicast to both",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
});

}  // namespace step17
