// Step 23 — stream-K on the ping-pong kernel, on step 22 (step 21's split joins it). Two lessons,
// said so:
// 1. Stream-K. A ping-pong block runs one mainloop at a time, so a wave is one 128x128 tile per SM:
//    8192^3 is 4096 tiles on 132 SMs, 31 waves and one of 4 tiles. As in step 21, the last wave's
//    tiles are shared out by K tiles (common/kernel_lib/stream_k.hpp); each piece is one more work
//    item of the block, after its data-parallel tiles, and items alternate between the consumers as
//    tiles do in step 22, so the order barriers and the ring skipping carry over. Unlike 21, the split
//    runs only with at least MIN_WAVES full waves or under a quarter wave of tiles (make_split says
//    why). The fixup runs in the consumer's epilogue, under the other consumer's mainloop.
// 2. Uniform registers. ptxas built step 22's wgmma descriptors in vector registers and moved them
//    over with R2UR (32 per K tile), because threadIdx.x / 128 is not warp-uniform as far as it can
//    tell. Broadcasting the warpgroup index from lane 0 (__shfl_sync, as CUTLASS does) and adding each
//    k16 step's offset to one descriptor per stage puts every descriptor in uniform registers.
// Prediction: +2.5-3 % at 8192^3 and 16384x4096 (32 waves' time for 31.03 waves of work, less the
// fixup), nothing from stream-K at 4096^3; the descriptors cut the K loop from 139 to 68
// instructions, which moves no cycles where the tensor pipe is 99 % busy (perhaps 1 % of energy).
// SASS: 22's, with 0 R2UR and U* descriptor arithmetic in the K loop (make diff B=23), plus the
// fixup's ATOMG.E.ADD, MEMBAR.SC.GPU and 128-bit STRONG.GPU loads and stores.
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=23 M=8192 N=8192 K=8192
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

namespace step23 {

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 6;  // one consumer's tile; 6 stages of 32 KB
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group: sqrt(2 tiles per SM * 132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int MIN_PIECE = 4;  // with fewer tiles than SMs, stream-K blocks get at least this many K tiles
constexpr int MIN_WAVES = 4;  // with 1..MIN_WAVES-1 full waves, no stream-K (measured: see make_split)
#ifndef STEP23_FIXUP_K_TILES
#define STEP23_FIXUP_K_TILES 32
#endif
// Stream-K runs where the SMs the last wave leaves idle would idle for more than this many K tiles
// each (step 21's break-even, measured there with K tiles twice this size; see make_split).
constexpr int FIXUP_K_TILES = STEP23_FIXUP_K_TILES;
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16;
constexpr int M_SLABS = BM / WGMMA_M;  // m64 slabs per consumer tile: one accumulator fragment each
constexpr int CONSUMER_WARPS = 4;      // arrivals that empty a stage: the warps of the one consumer that read it
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_bfloat16);
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
constexpr int ACC = M_SLABS * WGMMA_N / 2;  // fp32 accumulators per consumer thread: 128
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
  uint64_t order[CONSUMERS];  // consumer c may start its next item: all 4 warps of the other passed their last full wait
  int last_piece[CONSUMERS];  // fixup: this consumer counted its tile's last piece (issuer -> warpgroup)
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

// The split of the tiles between the data-parallel part and stream-K (step 21's, with 128x128 tiles;
// common/kernel_lib/stream_k.hpp). Tiles t < dp_tiles (grouped order) go to blocks t % P; the others'
// iters = sk_tiles * k_tiles K tiles are shared out: block b takes [start(b), start(b + 1)).
// Partials: 2P slots of BM x BN fp32, [slot][ACC/4][128 threads] float4; one arrival counter per
// stream-K tile.
using gemm::stream_k::Piece;
using gemm::stream_k::Split;
constexpr int64_t SLOT_FLOATS = int64_t(BM) * BN;
constexpr int COUNTERS_PER_TILE = 1;

/// The split for an M x N x K problem on `sms` SMs (host): step 21's rule where there are at least
/// MIN_WAVES full waves, none with 1 to MIN_WAVES - 1, and with fewer tiles than SMs only below
/// sms / 4 tiles. With at least one full wave and a partial one, stream-K takes the partial wave's
/// tiles, plus one full wave when the partial one is under half full; with fewer tiles than SMs it
/// takes all of them, on up to `sms` blocks of at least MIN_PIECE K tiles each. Either only when the
/// idle SM time it recovers, (sms - tiles % sms) * k_tiles K tiles, exceeds sms * FIXUP_K_TILES: at
/// 4096^3 (1024 tiles, 100 in the last wave: 2048 K tiles against 4224) it does not; at 8192^3 (4 of
/// 132) it does. The wave limits are measured (make bench-waves, M = K = 4096, 21's rule alone):
/// stream-K lost to step 22's kernel at every shape with 0-3 full waves where it ran (N = 256: 64
/// tiles, 0.735x cuBLAS against 0.862x; N = 768, 1280, 1792: 1-3 waves, 2-11 % behind) and won or
/// tied from 4 waves on (N = 2304 ... 7936); sms / 4 tiles is a choice below the measured loss at
/// 64 tiles, not a measured break-even.
Split make_split(int m, int n, int k, int sms) {
  const int64_t tiles = int64_t((m + BM - 1) / BM) * ((n + BN - 1) / BN), k_tiles = (k + BK - 1) / BK;
  const int64_t waves = tiles / sms, rest = tiles % sms;
  const bool worth_it = rest > 0 && (sms - rest) * k_tiles > int64_t(sms) * FIXUP_K_TILES &&
                        (waves >= MIN_WAVES || (waves == 0 && 4 * tiles <= sms));
  return gemm::stream_k::make_split(tiles, k_tiles, sms, worth_it, MIN_PIECE);
}

__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_pingpong_stream_k(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                       bool tma_epilogue, __nv_bfloat16* C, const Split split) {
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
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  // The warpgroup index, broadcast from lane 0: the same value, but now ptxas knows it is warp-uniform,
  // and so is everything computed from it (the consumer's ring position, its descriptors).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x / 128), 0);

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      pipe::PipeState<STAGES> ring;  // runs on across items: the next item's loads start as soon as stages free up
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
      for (int t = blockIdx.x; t < split.dp_tiles; t += gridDim.x) load({t, 0, k_tiles});  // both consumers' tiles
      gemm::stream_k::Walk walk(split, k_tiles);
      for (Piece pc; walk.next(pc);) load(pc);
    }
  } else {  // consumer me = wg - 1: the block's items j = me, me + 2, ...
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int me = wg - 1;
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    const uint64_t evict_first = ptx::l2_policy_evict_first();  // C's stores: the first lines L2 gives up
    pipe::PipeState<STAGES> ring;  // the producer's walk, less the other consumer's items
    float acc[M_SLABS][WGMMA_N / 2] = {};  // zeroed once: every item's first wgmma overwrites it (scale-d = 0)
    int mine = 0;  // this consumer's items so far (one order-barrier phase each)
    auto compute = [&](const Piece& pc) {  // K tiles [pc.kt0, pc.kt1) of tile pc.t, then its store or fixup
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * BN;
      // The order barriers (step 22): item j waits for the other consumer's item j - 1 to pass its last
      // full wait (consumer 0's first item has none before it). Each completes one phase per item.
      if (me == 1) ptx::mbarrier_wait_parity(&s.order[1], uint32_t(mine & 1));
      else if (mine > 0) ptx::mbarrier_wait_parity(&s.order[0], uint32_t((mine - 1) & 1));
      ++mine;
      int held = -1;  // the stage of the previous K tile, released once its wgmmas are done
      for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
        const int st = ring.stage;
        ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
        ptx::wgmma_fence();
        // One descriptor per operand and stage; the k16 step and slab offsets are added in 16-byte
        // units to its start-address field (bits 0-13), which they cannot carry out of: the stage is
        // 1024-byte aligned and these offsets stay inside it.
        const uint64_t desc_a = ptx::make_desc_k_sw128(s.a[st]), desc_b = ptx::make_desc_k_sw128(s.b[st]);
#pragma unroll
        for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // scale-d = 0 on the item's first k16 step: D = A*B
#pragma unroll
          for (int i = 0; i < M_SLABS; ++i)
            ptx::wgmma_m64n128k16_bf16(acc[i], desc_a + uint64_t((i * WGMMA_M * BK + kk * WGMMA_K) * 2 / 16),
                                       desc_b + uint64_t(kk * WGMMA_K * 2 / 16), kt > pc.kt0 || kk > 0);
        ptx::wgmma_commit();
        if (kt == pc.kt1 - 1 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.order[1 - me]);  // this warp is past its last full wait
        ptx::wgmma_wait<1>();  // K tile kt - 1's group is complete; kt's keeps the tensor cores busy ...
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
        if (held >= 0 && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);  // ... so kt - 1's stage is free
        held = st;
      }
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < M_SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);
      // The other consumer's mainloop runs while this fixup and these stores do.
      if (pc.kt0 != 0 || pc.kt1 != k_tiles) {
        // Fixup of a stream-K piece (step 21's): store it, count it; the consumer that counts the
        // tile's last piece sums them all, in block order, and stores the tile.
        const int64_t x0 = int64_t(pc.t - split.dp_tiles) * k_tiles;  // the tile's first K tile in iters
        const int c_first = split.block_of(x0), c_last = split.block_of(x0 + k_tiles - 1);
        const int t128 = threadIdx.x % 128;
        auto piece = [&](int c) {  // c's slot: 2c + 1 for the piece at the tile's K tile 0, else 2c
          return split.partials + int64_t(c == c_first ? 2 * c + 1 : 2 * c) * (ACC / 4 * 128) + t128;
        };
        float4* slot = piece(blockIdx.x);
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
          for (int q = 0; q < WGMMA_N / 8; ++q)
            __stcg(slot + (i * WGMMA_N / 8 + q) * 128,
                   make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
        __threadfence();  // the piece is visible to every block before it is counted
        ptx::named_barrier_sync(wg, 128);
        if (issuer) {
          int* count = &split.arrivals[pc.t - split.dp_tiles];
          const bool last = atomicAdd(count, 1) == c_last - c_first;
          if (last) *count = 0;  // every piece has arrived: reset for the next launch
          s.last_piece[me] = last;
        }
        ptx::named_barrier_sync(wg, 128);
        if (!s.last_piece[me]) return;
        __threadfence();
        // acc = piece c_first + ... + piece c_last, in that order, whichever arrived last.
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
          for (int r = 0; r < WGMMA_N / 2; ++r) acc[i][r] = 0.0f;
        for (int c = c_first; c <= c_last; ++c) {
          const float4* src = piece(c);
#pragma unroll
          for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
            for (int q = 0; q < WGMMA_N / 8; ++q) {
              const float4 p = __ldcg(src + (i * WGMMA_N / 8 + q) * 128);
              acc[i][4 * q] += p.x, acc[i][4 * q + 1] += p.y, acc[i][4 * q + 2] += p.z, acc[i][4 * q + 3] += p.w;
            }
        }
      }
      if (!tma_epilogue) {
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
          ptx::store_d_fragment_bf16(acc[i], C, M, N, int64_t(m0) + i * WGMMA_M, n0);
        return;
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
    };
    // The data-parallel tiles in a loop of their own (step 21: the stream-K walk's 64-bit divisions
    // have no uniform-datapath form). Tile j = (t - blockIdx.x) / P is consumer j % 2's.
    if (me == 1) ring.advance_by(k_tiles);  // tile j = 0 is consumer 0's
    for (int t = blockIdx.x + me * gridDim.x; t < split.dp_tiles; t += CONSUMERS * gridDim.x) {
      compute({t, 0, k_tiles});
      ring.advance_by(k_tiles);  // past the other consumer's next tile
    }
    // The stream-K pieces continue the alternation: the block's item dp_items + i is consumer
    // (dp_items + i) % 2's, and the ring restarts from the position after all data-parallel K tiles.
    if (split.sk_tiles > 0) {
      const int dp_items = split.dp_tiles > int(blockIdx.x) ? (split.dp_tiles - 1 - int(blockIdx.x)) / int(gridDim.x) + 1 : 0;
      const int64_t before = int64_t(dp_items) * k_tiles;  // K tiles the producer loaded before the first piece
      ring.stage = int(before % STAGES);
      ring.phase = uint32_t((before / STAGES) & 1);
      gemm::stream_k::Walk walk(split, k_tiles);
      int j = dp_items;
      for (Piece pc; walk.next(pc); ++j) {
        if (j % CONSUMERS == me) compute(pc);
        else ring.advance_by(pc.kt1 - pc.kt0);  // the other consumer's piece
      }
    }
    if (issuer) ptx::tma_store_wait_all<0>();  // no store may read shared memory after the block exits
  }
}

/// C (M x N, row-major bf16) = A (M x K, row-major bf16) * B (N x K, row-major bf16)^T, fp32
/// accumulation, on `stream`: one block of 384 threads per SM (at most), 128x128 tiles per consumer.
/// Needs K % 8 == 0 and 16-byte aligned A and B (TMA; `unsupported` refuses other shapes), and, where
/// make_split chooses stream-K, p.workspace of Step::workspace_bytes(M, N, K) bytes whose counters
/// are zero (cudaMalloc'd and zeroed once; each launch leaves them zero again). Throws gemm::Error
/// when the workspace is too small, and what make_tma_2d and launch_kernel throw.
void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register stores.
  const gemm::TmaMatrix c{p.c, uint64_t(p.m), uint64_t(p.n), EPI_BOX, EPI_BOX};
  const bool tma_epilogue = !gemm::tma_refusal(c).has_value();
  const CUtensorMap tmap_c = tma_epilogue ? gemm::make_tma_2d(c) : CUtensorMap{};
  gemm::opt_in_dynamic_smem(gemm_pingpong_stream_k, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  Split split = make_split(p.m, p.n, p.k, gemm::sm_count());
  gemm::stream_k::attach_workspace(split, p.workspace, p.workspace_bytes, SLOT_FLOATS, COUNTERS_PER_TILE, "23", p.m,
                                   p.n, p.k);
  const dim3 grid(unsigned(split.blocks));  // one block per SM at most (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_pingpong_stream_k, p.m, p.n, p.k, tmap_a, tmap_b,
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
    .id = "23",
    .name = "pingpong_stream_k",
    .parent = "22",
    .technique = "stream-K on ping-pong consumers: the last wave's K tiles shared out; descriptors in uniform registers",
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

}  // namespace step23
