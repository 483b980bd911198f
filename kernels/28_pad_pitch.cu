// Step 28 — a row pitch off the 32-byte sector, on step 27. One lesson: TMA loads each K tile as one
// 128-byte row (64 bf16) from each of the tile's rows. When K's row pitch, 2K bytes, is not a multiple
// of 32, every other one of those rows starts inside a 32-byte L2 sector and touches five, and steps
// 24-27 run 5000^3 at half of cuBLAS (ncu: about 3x the L2 requests of K = 4992). Where that is so and the
// GEMM is compute-bound (tile_menu::repack_pitch: K % 16 == 8, 1/M + 1/N <= 1/1152, 2.5e10 FLOP or
// more), the launcher first copies A and B to a pitch of padded_pitch(K) (K rounded up to 64) in the
// workspace with cudaMemcpy2DAsync, then runs 27's plan on the copies; the tensor maps keep K as the
// extent, so TMA zero-fills the pad and it is never read. The copy is part of every timed launch.
// Prediction (5000^3, 2026-12-03 sweep: 27 at 0.498x cuBLAS, 746 us; step 25's K = 5056 probe: 0.924x):
// copies move 200 MB, about 60 us at ~3.4 TB/s, and the GEMM then runs at the aligned speed, about
// 0.92x cuBLAS: about 400 + 60 us, 0.80x cuBLAS. Unchanged wherever repack_pitch is false (every
// other sweep shape: their K is a multiple of 64).
// SASS: the kernel is 27's (the same six instances); only the host changes (make diff B=28).
// Supports: K % 8 == 0, any M, N >= 1 (TMA clips; else register stores), < 2^30 tiles. sm_90a.
// Run: make run STEP=28 M=5000 N=5000 K=5000
#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <type_traits>

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
#include "../common/kernel_lib/tile_menu.hpp"
#include "../common/kernel_lib/tma.hpp"

namespace step28 {

namespace menu = gemm::tile_menu;
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 6;  // BN: the widest menu tile; 6 stages of 32 KB
constexpr int NARROW_BN = 64;  // the menu's other N: wgmma m64n64k16, 6 stages of 24 KB (and the widest swapped tile)
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group: sqrt(2 tiles per SM * 132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int MIN_PIECE = 4;  // with fewer tiles than SMs, stream-K blocks get at least this many K tiles
constexpr int MIN_WAVES = 4;  // with 1..MIN_WAVES-1 full waves, no stream-K (measured: see make_split)
#ifndef STEP28_ALWAYS_REPACK
#define STEP28_ALWAYS_REPACK 0  // 1: copy wherever K % 16 != 0, whatever the shape (for measuring repack_pitch)
#endif
#ifndef STEP28_FIXUP_K_TILES
#define STEP28_FIXUP_K_TILES 32
#endif
// Stream-K runs where the SMs the last wave leaves idle would idle for more than this many K tiles
// each (step 21's break-even, measured there with K tiles twice this size; see make_split).
constexpr int FIXUP_K_TILES = STEP28_FIXUP_K_TILES;
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_K = 16;
constexpr int M_SLABS = BM / WGMMA_M;  // m64 slabs per consumer tile: one accumulator fragment each
constexpr int CONSUMER_WARPS = 4;      // arrivals that empty a stage: the warps of the one consumer that read it
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
template <int TN>
constexpr uint32_t STAGE_BYTES = (BM + TN) * BK * sizeof(__nv_bfloat16);
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
template <int TN>
constexpr int ACC = M_SLABS * TN / 2;  // fp32 accumulators per consumer thread: 128 (TN = 64: 64)
static_assert(BK * sizeof(__nv_bfloat16) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM % WGMMA_M == 0, "a consumer's tile is a whole number of m64 slabs");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k16 steps");
static_assert(BM == menu::kBM && BK == menu::kBK, "the menu costs the tiles this kernel runs");
static_assert(MIN_PIECE == menu::kMinPiece, "the menu prices the split make_split makes");
static_assert(NARROW_BN == menu::kSwapMaxM, "a swapped problem's M fits one tile column: B is read once");
static_assert(WGMMA_M == EPI_BOX && BN % EPI_BOX == 0 && NARROW_BN % EPI_BOX == 0, "a slab is a row of whole epilogue boxes");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register split must fit the SM's 64K registers");

template <int TN>
struct SharedStorage {
  alignas(1024) __nv_bfloat16 a[STAGES][BM * BK];  // 16 KB per stage: stays 1024-byte aligned
  alignas(1024) __nv_bfloat16 b[STAGES][TN * BK];  // 16 KB per stage (TN = 64: 8 KB; TN = 8: 1 KB, one swizzle atom; all 1024-aligned)
  alignas(1024) __nv_bfloat16 c[CONSUMERS][EPI_BUFS][EPI_BOX * EPI_BOX];  // 8 KB per box, 128B-swizzled (unused swapped)
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
  uint64_t order[CONSUMERS];  // consumer c may start its next item: all 4 warps of the other passed their last full wait
  int last_piece[CONSUMERS];  // fixup: this consumer counted its tile's last piece (issuer -> warpgroup)
};
template <int TN>
constexpr size_t SMEM_BYTES = sizeof(SharedStorage<TN>) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES<BN> <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

// The split of the tiles between the data-parallel part and stream-K (step 21's, with 128x128 tiles;
// common/kernel_lib/stream_k.hpp). Tiles t < dp_tiles (grouped order) go to blocks t % P; the others'
// iters = sk_tiles * k_tiles K tiles are shared out: block b takes [start(b), start(b + 1)).
// Partials: 2P slots of BM x TN fp32, [slot][ACC/4][128 threads] float4; one arrival counter per
// stream-K tile.
using gemm::stream_k::Piece;
using gemm::stream_k::Split;
template <int TN>
constexpr int64_t SLOT_FLOATS = int64_t(BM) * TN;
constexpr int COUNTERS_PER_TILE = 1;
template <int TN>
constexpr int FIXUP_BATCH = TN >= 64 ? 1 : 64 / TN;  // the fixup loop's unroll: 16 float4 (64 registers) of loads; TN = 8: 8 pieces

/// The split for the kernel's M x N x K problem (swapped: C^T's, N x M) on `sms` SMs (host).
/// Unswapped, 23's rule: step 21's where there are at least
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
/// Swapped, only the idle-time rule: the wave limits were measured where the tensor pipe is the
/// bottleneck and the fixup competes with it; a swapped problem (M <= 64) is bound by reading B from
/// HBM, and an SM left idle is a stream of B not read. So 16 x 8192 x 8192 (64 tiles of 128 K tiles)
/// is shared out on all 132 SMs, about 62 K tiles each. The break-even stays 23's, not re-measured.
/// Both rules count the tiles of the menu's tile (TN wide), so a narrow grid has twice as many.
/// (Step 26: the unswapped "fewer tiles than SMs" case above is replaced by the split-K below.)
/// Step 26: below one wave (fewer tiles than SMs, unswapped) the grid splits where the menu's plan
/// says so (`planned_split`, tile_menu::plan: whole against split, priced with the fixup) and, as in
/// 25, under a quarter wave when the idle-time rule does (25 split those with stream-K; that they
/// split here even where the plan prices them whole is kept from 25, not measured); and it splits into equal K segments
/// (split-K: tile_menu::split_factor segments per tile, one block each, every block starting at a
/// segment boundary), so the blocks of one segment walk K in step and share A's and B's panels in L2.
/// Stream-K's even share of all K tiles over every SM would start 132 blocks at 132 different K
/// offsets (measured: 1024 x 1024 x 65536 ran 0.40 ms so, slower than whole tiles on 64 SMs).
template <bool SWAP, int TN>
Split make_split(int m, int n, int k, int sms, bool planned_split) {
  const int64_t tiles = int64_t((m + BM - 1) / BM) * ((n + TN - 1) / TN), k_tiles = (k + BK - 1) / BK;
  const int64_t waves = tiles / sms, rest = tiles % sms;
  const bool idle_rule = rest > 0 && (sms - rest) * k_tiles > int64_t(sms) * FIXUP_K_TILES;
  if (!SWAP && waves == 0) {
    const int64_t s = menu::split_factor(tiles, k_tiles, sms);
    if (s < 2 || !(planned_split || (4 * tiles <= sms && idle_rule)))
      return gemm::stream_k::make_split(tiles, k_tiles, sms, false, MIN_PIECE);
    return gemm::stream_k::make_split_k(tiles, k_tiles, s);  // tiles x s blocks, block b: tile b / s's segment b % s
  }
  const bool worth_it = SWAP ? idle_rule : waves >= MIN_WAVES && idle_rule;
  return gemm::stream_k::make_split(tiles, k_tiles, sms, worth_it, MIN_PIECE);
}

// M, N: the kernel's problem, C's (SWAP false) or C^T's (SWAP true: M = C's N, N = C's M, tmap_a maps
// B and tmap_b maps A). C is always the real row-major C.
template <bool SWAP, int TN>
__global__ void __launch_bounds__(THREADS, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_pingpong_stream_k(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                       bool tma_epilogue, __nv_bfloat16* C, const Split split) {
  extern __shared__ uint8_t smem_raw[];
  SharedStorage<TN>& s = *reinterpret_cast<SharedStorage<TN>*>(ptx::smem_align_up<1024>(smem_raw));
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
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + TN - 1) / TN;
  // The warpgroup index, broadcast from lane 0: the same value, but now ptxas knows it is warp-uniform,
  // and so is everything computed from it (the consumer's ring position, its descriptors).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x / 128), 0);

  if (wg == 0) {  // producer warpgroup: one thread issues, the others have nothing to do
    ptx::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x == 0) {
      pipe::PipeState<STAGES> ring;  // runs on across items: the next item's loads start as soon as stages free up
      auto load = [&](const Piece& pc) {
        const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
        const int m0 = tile.m * BM, n0 = tile.n * TN;
        for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
          const int st = ring.stage;
          ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
          ptx::mbarrier_arrive_expect_tx(&s.full[st], STAGE_BYTES<TN>);  // whole boxes: TMA counts the zero fill
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
    float acc[M_SLABS][TN / 2] = {};  // zeroed once: every item's first wgmma overwrites it (scale-d = 0)
    int mine = 0;  // this consumer's items so far (one order-barrier phase each)
    auto compute = [&](const Piece& pc) {  // K tiles [pc.kt0, pc.kt1) of tile pc.t, then its store or fixup
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM, n0 = tile.n * TN;
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
            ptx::wgmma_m64nNk16_bf16(acc[i], desc_a + uint64_t((i * WGMMA_M * BK + kk * WGMMA_K) * 2 / 16),
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
          return split.partials + int64_t(c == c_first ? 2 * c + 1 : 2 * c) * (ACC<TN> / 4 * 128) + t128;
        };
        float4* slot = piece(blockIdx.x);
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
          for (int q = 0; q < TN / 8; ++q)
            __stcg(slot + (i * TN / 8 + q) * 128,
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
          for (int r = 0; r < TN / 2; ++r) acc[i][r] = 0.0f;
        // Unrolled FIXUP_BATCH<TN> times: full batches load their pieces together (the remainder, first, one
        // at a time); the adds stay in block order either way.
#pragma unroll FIXUP_BATCH<TN>
        for (int c = c_first; c <= c_last; ++c) {
          const float4* src = piece(c);
#pragma unroll
          for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
            for (int q = 0; q < TN / 8; ++q) {
              const float4 p = __ldcg(src + (i * TN / 8 + q) * 128);
              acc[i][4 * q] += p.x, acc[i][4 * q + 1] += p.y, acc[i][4 * q + 2] += p.z, acc[i][4 * q + 3] += p.w;
            }
        }
      }
      if constexpr (SWAP) {  // acc is a tile of C^T: slab i holds C's columns m0 + 64i.., its rows n0..
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)  // C's M x N is the kernel's N x M; offsets in fragment order (row, column)
          ptx::store_dt_fragment_bf16(acc[i], C, N, M, int64_t(m0) + i * WGMMA_M, n0);
      } else if (!tma_epilogue) {  // (else: the swapped tiles, narrower than a 64-wide box, never compile the TMA stores)
#pragma unroll
        for (int i = 0; i < M_SLABS; ++i)
          ptx::store_d_fragment_bf16(acc[i], C, M, N, int64_t(m0) + i * WGMMA_M, n0);
      } else {
#pragma unroll
      for (int i = 0; i < M_SLABS; ++i)
#pragma unroll
        for (int box = 0; box < TN / EPI_BOX; ++box) {
          __nv_bfloat16* buf = s.c[me][(i * (TN / EPI_BOX) + box) % EPI_BUFS];
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
/// accumulation, on `stream`: one block of 384 threads per SM (at most), 128 x TN tiles per consumer;
/// SWAP: C^T = B * A^T in 128 x TN tiles of C^T (B as the kernel's A, A as its B), stored transposed.
/// Needs K % 8 == 0 and 16-byte aligned A and B (TMA; `unsupported` refuses other shapes), and, where
/// make_split chooses stream-K, p.workspace of Step::workspace_bytes(M, N, K) bytes whose counters
/// are zero (cudaMalloc'd and zeroed once; each launch leaves them zero again). Throws gemm::Error
/// when the workspace is too small, and what make_tma_2d and launch_kernel throw. `pitch`: the row
/// pitch of A and B in elements (0: K, unpadded; step 28's copies: tile_menu::padded_pitch(K)).
template <bool SWAP, int TN>
void launch_as(const gemm::Bf16Gemm& p, bool planned_split, int64_t pitch, cudaStream_t stream) {
  // The kernel's problem: km rows of its A operand (wgmma's M side), kn rows of its B operand (N side).
  const int km = SWAP ? p.n : p.m, kn = SWAP ? p.m : p.n;
  constexpr CUtensorMapSwizzle SW128 = CU_TENSOR_MAP_SWIZZLE_128B;
  const CUtensorMap tmap_a = gemm::make_tma_2d(
      {SWAP ? p.b : p.a, uint64_t(km), uint64_t(p.k), BM, BK, SW128, gemm::TmaElem::bf16, uint64_t(pitch)});
  const CUtensorMap tmap_b = gemm::make_tma_2d(
      {SWAP ? p.a : p.b, uint64_t(kn), uint64_t(p.k), TN, BK, SW128, gemm::TmaElem::bf16, uint64_t(pitch)});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register stores.
  // Swapped, always register stores: the accumulators hold C^T.
  const gemm::TmaMatrix c{p.c, uint64_t(p.m), uint64_t(p.n), EPI_BOX, EPI_BOX};
  const bool tma_epilogue = !SWAP && !gemm::tma_refusal(c).has_value();
  const CUtensorMap tmap_c = tma_epilogue ? gemm::make_tma_2d(c) : CUtensorMap{};
  gemm::opt_in_dynamic_smem(gemm_pingpong_stream_k<SWAP, TN>, SMEM_BYTES<TN>);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  Split split = make_split<SWAP, TN>(km, kn, p.k, gemm::sm_count(), planned_split);
  gemm::stream_k::attach_workspace(split, p.workspace, p.workspace_bytes, SLOT_FLOATS<TN>, COUNTERS_PER_TILE, "28",
                                   p.m, p.n, p.k);
  const dim3 grid(unsigned(split.blocks));  // one block per SM at most (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES<TN>, stream}, gemm_pingpong_stream_k<SWAP, TN>, km, kn, p.k, tmap_a,
                      tmap_b, tmap_c, tma_epilogue, p.c, split);
}

/// The menu's plan for an M x N x K problem on this GPU (tile_menu::plan).
menu::Plan plan_for(int m, int n, int k) { return menu::plan(m, n, k, gemm::sm_count()); }

/// Calls f(std::integral_constant<int, TN>{}) for the swapped tile's width TN = swap_bn(m) (m <= 64).
template <class F>
decltype(auto) with_swap_bn(int m, F&& f) {
  switch (menu::swap_bn(m)) {
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    default: return f(std::integral_constant<int, NARROW_BN>{});
  }
}

/// The plan's tile (one instance of the kernel each; swapped, sized to M) and split, on A and B of
/// row pitch `pitch` (0: K).
void launch_plan(const gemm::Bf16Gemm& p, int64_t pitch, cudaStream_t stream) {
  const menu::Plan pl = plan_for(p.m, p.n, p.k);
  if (pl.tile.swap) with_swap_bn(p.m, [&](auto tn) { launch_as<true, decltype(tn)::value>(p, pl.split, pitch, stream); });
  else if (pl.tile.bn == NARROW_BN) launch_as<false, NARROW_BN>(p, pl.split, pitch, stream);
  else launch_as<false, BN>(p, pl.split, pitch, stream);
}

size_t split_bytes(int m, int n, int k);

/// Bytes of the split's part of the workspace, rounded up so that the padded copies after it start
/// on a 256-byte boundary (TMA needs 16; cudaMalloc gives 256).
size_t copies_offset(int m, int n, int k) { return (split_bytes(m, n, k) + 255) / 256 * 256; }

/// Bytes of the padded copies of A (m x pitch) and B (n x pitch) where tile_menu::repack_pitch says
/// to copy, else 0.
size_t copies_bytes(int m, int n, int k) {
  if (STEP28_ALWAYS_REPACK ? k % menu::kSectorElems == 0 : !menu::repack_pitch(m, n, k)) return 0;
  return size_t(int64_t(m) + n) * size_t(menu::padded_pitch(k)) * sizeof(__nv_bfloat16);
}

/// The step's launcher. Where tile_menu::repack_pitch says so (K's rows inside a 32-byte sector, a
/// compute-bound shape), A and B are first copied to a row pitch of padded_pitch(K) elements in the
/// workspace (cudaMemcpy2DAsync, device to device, on `stream`; the pad columns are never read: TMA
/// zero-fills the boxes past K), and the GEMM reads the copies; otherwise 27's launch. The copies
/// stay in the workspace after the split's part (whose counters the launch leaves zero): a workspace
/// reused for another shape, whose split may reach that far, must be zeroed again first. Throws
/// gemm::Error when p.workspace is null, smaller than workspace_bytes(M, N, K) or not 16-byte aligned,
/// and what launch_as throws.
void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const size_t copies = copies_bytes(p.m, p.n, p.k);
  if (copies == 0) return launch_plan(p, 0, stream);
  const size_t offset = copies_offset(p.m, p.n, p.k);
  if (p.workspace == nullptr || p.workspace_bytes < offset + copies)
    throw gemm::Error("step 28 needs a workspace of " + std::to_string(offset + copies) + " bytes for M=" +
                      std::to_string(p.m) + " N=" + std::to_string(p.n) + " K=" + std::to_string(p.k) + " (got " +
                      std::to_string(p.workspace_bytes) + "): reserve Step::workspace_bytes first");
  if (reinterpret_cast<uintptr_t>(p.workspace) % 16 != 0)  // TMA reads the copies: checked before they are queued
    throw gemm::Error("step 28 needs a 16-byte aligned workspace for its padded copies of A and B");
  const int64_t pitch = menu::padded_pitch(p.k);
  auto* a = reinterpret_cast<__nv_bfloat16*>(static_cast<char*>(p.workspace) + offset);
  __nv_bfloat16* b = a + int64_t(p.m) * pitch;
  const size_t row = size_t(p.k) * sizeof(__nv_bfloat16), dpitch = size_t(pitch) * sizeof(__nv_bfloat16);
  CUDA_CHECK(cudaMemcpy2DAsync(a, dpitch, p.a, row, row, size_t(p.m), cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemcpy2DAsync(b, dpitch, p.b, row, row, size_t(p.n), cudaMemcpyDeviceToDevice, stream));
  gemm::Bf16Gemm q = p;
  q.a = a;
  q.b = b;
  launch_plan(q, pitch, stream);
}

/// Step::workspace_bytes: the split's part (below) and, where the step copies, the padded copies of A
/// and B after it.
size_t workspace_bytes(int m, int n, int k) {
  const size_t copies = copies_bytes(m, n, k);
  return copies == 0 ? split_bytes(m, n, k) : copies_offset(m, n, k) + copies;
}

/// The slots and counters of make_split's stream-K part (0 when it has none), for the plan the menu
/// makes (launch and this make it the same way).
size_t split_bytes(int m, int n, int k) {
  const menu::Plan pl = plan_for(m, n, k);
  const int sms = gemm::sm_count();
  if (pl.tile.swap)
    return with_swap_bn(m, [&](auto tn) {
      constexpr int TN = decltype(tn)::value;
      return gemm::stream_k::workspace_bytes(make_split<true, TN>(n, m, k, sms, pl.split), SLOT_FLOATS<TN>,
                                             COUNTERS_PER_TILE);
    });
  if (pl.tile.bn == NARROW_BN)
    return gemm::stream_k::workspace_bytes(make_split<false, NARROW_BN>(m, n, k, sms, pl.split), SLOT_FLOATS<NARROW_BN>,
                                           COUNTERS_PER_TILE);
  return gemm::stream_k::workspace_bytes(make_split<false, BN>(m, n, k, sms, pl.split), SLOT_FLOATS<BN>, COUNTERS_PER_TILE);
}

/// 23's limits, for the problem the kernel runs on the menu's tile (swapped: C^T's tiles). The tile
/// count is judged for the narrowest tile, so the answer does not depend on the GPU's SM count.
std::optional<std::string> unsupported(int m, int n, int k) {
  if (m <= menu::kSwapMaxM) return gemm::tma_persistent_gemm_refusal(n, m, k, BM, NARROW_BN);
  return gemm::tma_persistent_gemm_refusal(m, n, k, BM, NARROW_BN);
}

const bool registered = gemm::register_step({
    .id = "28",
    .name = "pad_pitch",
    .parent = "27",
    .technique = "rows that start inside a 32-byte sector copied to a 128-byte pitch first where the GEMM is compute-bound (tile_menu::repack_pitch)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &workspace_bytes,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
    .caps = {.stream_k = true, .swap_ab = true, .tile_menu = true, .split_k = true, .swap_sized = true, .pad_pitch = true},
});

}  // namespace step28
