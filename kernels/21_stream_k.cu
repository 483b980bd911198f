// Step 21 — stream-K for the last wave, on step 18. One 128x256 tile per SM at a time leaves the last
// wave partly empty: 4096^3 is 512 tiles on 132 SMs, 3 full waves and one of 116 tiles; 8192^3 is 15
// waves and one of 68; at M = K = 4096, N = 1280 it is one full wave and 28 tiles (make bench-waves).
// As in step 09b (Osama et al., PPoPP 2023), the tiles of the partial wave (and one full wave more
// when it is under half full; all tiles when there is less than one wave) are shared out by K tiles:
// block b of P takes K tiles [b*I/P, (b+1)*I/P) of their I = tiles * k_tiles, crossing tile
// boundaries (common/kernel_lib/stream_k.hpp). One persistent kernel: each block runs its data-parallel
// tiles, then its stream-K pieces, producer and consumers walking the same sequence. A consumer that
// ends a piece short of a whole tile writes its 64x256 fp32 partial to the workspace and counts it
// with an atomic; the one that counts the tile's last piece sums all pieces in block order and
// stores the tile. No block waits for another. Stream-K runs only where the idle time it recovers
// exceeds FIXUP_K_TILES per SM (make_split).
// Prediction: +1.5-2.5 % at 8192^3 (15.5 -> 16 waves' worth of time, minus the fixup), nothing at
// 4096^3 (make_split declines), far more where the last wave is nearly empty (N = 1280 above).
// SASS: the fixup's ATOMG.E.ADD, MEMBAR.SC.GPU and STG/LDG.E.128.STRONG.GPU (__stcg/__ldcg) in the
// stream-K loop; the data-parallel loop is step 18's, uniform registers and all.
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Workspace (Step::workspace_bytes): 2P fp32 tiles (34.6 MB on 132 SMs) and counters when stream-K runs.
// Run: make run STEP=21 M=8192 N=8192 K=8192
#include <cuda_bf16.h>

#include <algorithm>
#include <string>

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
#include "../common/kernel_lib/stream_k.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step21 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group of the schedule: sqrt(132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int MIN_PIECE = 4;  // with fewer tiles than SMs, stream-K blocks get at least this many K tiles
// What stream-K costs, in K tiles of one SM's time: the fixup (a 64 KB partial per consumer written,
// fenced, read back) and the stream-K pieces' slower K tiles. Stream-K runs only where the SMs the
// last wave leaves idle would idle longer than that (see make_split). Measured at M = K = 4096
// (make bench-waves): stream-K lost where it recovered 10-19 K tiles per SM (N = 768, 1792, 5120,
// 6144: 0.74-0.97x cuBLAS with it, 0.86-1.00x without) and won where it recovered 50-62 (N = 1280,
// 4352, and 8192^3). The break-even lies between; 32 is about halfway on a log scale. (A first
// estimate, 8 K tiles from ~5 us of fixup per piece, let stream-K run at all four losing shapes.)
constexpr int FIXUP_K_TILES = 32;
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
  int last_piece[CONSUMERS];  // fixup: this consumer counted its tile's last piece (issuer -> warpgroup)
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

// The split of the tiles between the data-parallel part and stream-K (common/kernel_lib/stream_k.hpp,
// the same on host and device): tiles t < dp_tiles (grouped order) go to blocks t % P; the others'
// iters = sk_tiles * k_tiles K tiles are shared out: block b takes [start(b), start(b + 1)).
// Partials: 2P slots of BM x BN fp32, [slot][consumer][BN/8][128 threads] float4; one arrival counter
// per stream-K tile and consumer.
using gemm::stream_k::Piece;
using gemm::stream_k::Split;
constexpr int64_t SLOT_FLOATS = int64_t(BM) * BN;
constexpr int COUNTERS_PER_TILE = CONSUMERS;

/// The split for an M x N x K problem on `sms` SMs (host). Where there is at least one full wave
/// (tiles >= sms) and a partial one, stream-K takes the partial wave's tiles, plus one full wave when
/// the partial one is under half full (every stream-K block then gets at least half a tile of K and
/// no tile is split between more than three blocks). With fewer tiles than SMs it takes all of them,
/// on up to `sms` blocks of at least MIN_PIECE K tiles each. Either only when the idle SM time it
/// recovers, (sms - tiles % sms) * k_tiles K tiles, exceeds the fixup's, sms * FIXUP_K_TILES: at
/// 4096^3 (116 tiles in the last wave) it does not; at 8192^3 (68) it does.
Split make_split(int m, int n, int k, int sms) {
  const int64_t tiles = int64_t((m + BM - 1) / BM) * ((n + BN - 1) / BN), k_tiles = (k + BK - 1) / BK;
  const int64_t rest = tiles % sms;
  const bool worth_it = rest > 0 && (sms - rest) * k_tiles > int64_t(sms) * FIXUP_K_TILES;
  return gemm::stream_k::make_split(tiles, k_tiles, sms, worth_it, MIN_PIECE);
}

__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_stream_k(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                        const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                        bool tma_epilogue, __nv_bfloat16* C, const Split split) {
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
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int wg = threadIdx.x / 128;

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      pipe::PipeState<STAGES> ring;  // runs on across tiles: the next tile's loads start as soon as stages free up
      auto load = [&](const Piece& pc) {
        const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
        const int m0 = tile.m * BM, n0 = tile.n * BN;
        for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
          const int st = ring.stage;
          ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES);
          ptx::tma_load_2d(s.a[st], &tmap_a, kt * BK, m0, &s.full[st]);
          ptx::tma_load_2d(s.b[st], &tmap_b, kt * BK, n0, &s.full[st]);
        }
      };
      for (int t = blockIdx.x; t < split.dp_tiles; t += gridDim.x) load({t, 0, k_tiles});
      gemm::stream_k::Walk walk(split, k_tiles);
      for (Piece pc; walk.next(pc);) load(pc);
    }
  } else {  // consumer wg - 1: rows (wg - 1) * 64 .. +63 of the tile, all 256 columns
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int slab = (wg - 1) * WGMMA_M;
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    const uint64_t evict_first = ptx::l2_policy_evict_first();  // C's stores: the first lines L2 gives up
    pipe::PipeState<STAGES> ring;  // the same walk as the producer's: one step per K tile of every tile
    float acc[WGMMA_N / 2] = {};   // zeroed once: every tile's first wgmma overwrites it (scale-d = 0)
    auto compute = [&](const Piece& pc) {  // K tiles [pc.kt0, pc.kt1) of tile pc.t, then its store or fixup
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * BN;
      for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
        const int st = ring.stage;
        ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
        ptx::wgmma_fence_operands(acc);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // scale-d = 0 on the tile's first k16 step: D = A*B
          ptx::wgmma_m64n256k16_bf16(acc, ptx::make_desc_k_sw128(s.a[st] + slab * BK + kk * WGMMA_K),
                                     ptx::make_desc_k_sw128(s.b[st] + kk * WGMMA_K), kt > pc.kt0 || kk > 0);
        ptx::wgmma_commit();
        ptx::wgmma_wait<0>();  // this warp's view of the stage's wgmmas is complete ...
        ptx::wgmma_fence_operands(acc);
        if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[st]);  // ... so the warp releases the stage
      }
      if (pc.kt0 != 0 || pc.kt1 != k_tiles) {
        // Fixup of a stream-K piece: store it, count it; the consumer that counts the tile's last
        // piece sums them all, in block order, and stores the tile (09b's pattern: store, fence, count).
        const int64_t x0 = int64_t(pc.t - split.dp_tiles) * k_tiles;  // the tile's first K tile in iters
        const int c_first = split.block_of(x0), c_last = split.block_of(x0 + k_tiles - 1);
        const int t128 = threadIdx.x % 128;
        auto piece = [&](int c) {  // c's slot: 2c + 1 for the piece at the tile's K tile 0, else 2c
          return split.partials + (int64_t(c == c_first ? 2 * c + 1 : 2 * c) * CONSUMERS + (wg - 1)) *
                                      (WGMMA_N / 8 * 128) + t128;
        };
        float4* mine = piece(blockIdx.x);
#pragma unroll
        for (int i = 0; i < WGMMA_N / 8; ++i)
          __stcg(mine + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
        __threadfence();  // the piece is visible to every block before it is counted
        ptx::named_barrier_sync(wg, 128);
        if (issuer) {
          int* count = &split.arrivals[(pc.t - split.dp_tiles) * CONSUMERS + (wg - 1)];
          const bool last = atomicAdd(count, 1) == c_last - c_first;
          if (last) *count = 0;  // every piece has arrived: reset for the next launch
          s.last_piece[wg - 1] = last;
        }
        ptx::named_barrier_sync(wg, 128);
        if (!s.last_piece[wg - 1]) return;
        __threadfence();
        // acc = piece c_first + ... + piece c_last, in that order. A piece's 32 loads are independent,
        // so they are in flight together (one L2 round trip per piece, not one per float4).
#pragma unroll
        for (int i = 0; i < WGMMA_N / 2; ++i) acc[i] = 0.0f;
        for (int c = c_first; c <= c_last; ++c) {
          const float4* src = piece(c);
#pragma unroll
          for (int i = 0; i < WGMMA_N / 8; ++i) {
            const float4 p = __ldcg(src + i * 128);
            acc[4 * i] += p.x, acc[4 * i + 1] += p.y, acc[4 * i + 2] += p.z, acc[4 * i + 3] += p.w;
          }
        }
      }
      // Every stage of this tile is released: while these stores run, the producer fills the ring
      // with the next tile's K tiles.
      if (!tma_epilogue) {
        ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0) + slab, n0);
        return;
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
          ptx::tma_store_2d_hint(&tmap_c, buf, n0 + box * EPI_BOX, m0 + slab, evict_first);  // clipped at M, N
          ptx::tma_store_commit();
        }
      }
    };
    // The data-parallel tiles in a loop of their own, as in step 18. With one loop calling the
    // stream-K walk (its divisions have no uniform-datapath form; 32-bit ones did not help), ptxas
    // kept the ring's stage and phase in vector registers and built every wgmma descriptor there (16
    // R2UR and no uniform ops between the full-barrier wait and the wgmma wait, against 9 and 23
    // here): 1.5 % slower than 18 at 4096^3, where no stream-K runs at all.
    for (int t = blockIdx.x; t < split.dp_tiles; t += gridDim.x) compute({t, 0, k_tiles});
    gemm::stream_k::Walk walk(split, k_tiles);
    for (Piece pc; walk.next(pc);) compute(pc);
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
  gemm::opt_in_dynamic_smem(gemm_stream_k, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  Split split = make_split(p.m, p.n, p.k, gemm::sm_count());
  gemm::stream_k::attach_workspace(split, p.workspace, p.workspace_bytes, SLOT_FLOATS, COUNTERS_PER_TILE, "21", p.m,
                                   p.n, p.k);
  const dim3 grid(unsigned(split.blocks));  // one block per SM at most (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_stream_k, p.m, p.n, p.k, tmap_a, tmap_b,
                      tmap_c, tma_epilogue, p.c, split);
}

/// Step::workspace_bytes: the slots and counters of make_split's stream-K part (0 when it has none).
size_t workspace_bytes(int m, int n, int k) {
  return gemm::stream_k::workspace_bytes(make_split(m, n, k, gemm::sm_count()), SLOT_FLOATS, COUNTERS_PER_TILE);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "21",
    .name = "stream_k",
    .parent = "18",
    .technique = "stream-K for the last partial wave: K tiles of its tiles shared out, fixup by the last piece",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &workspace_bytes,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
    .caps = {.stream_k = true},
});

}  // namespace step21
