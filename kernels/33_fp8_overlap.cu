// Step 33 — the promotion off the critical path, on step 32. Step 32's consumer owns a 128 x 128 tile:
// two m64 slabs of 64 fp32 sums per thread plus one set of tensor-core accumulators (192 registers),
// so each group of 4 wgmmas ends in wgmma.wait_group 0 and the tensor cores idle while the FFMAs run;
// the ping-pong's other consumer waits on its order barrier meanwhile. Now the two consumers share
// each 128 x 128 tile, one m64 slab each (cooperative, as step 14): 64 sums per thread, which leaves
// room for two sets of tensor-core accumulators. An item's i-th K tile goes into tc[i % 2]; then
// wait_group 1 waits only for kt - 1's, whose partial is scaled and promoted while kt's run: the
// tensor cores always have a group queued (step 23's wait, with the promotion in its shadow).
// The price: no ping-pong, so the epilogue (two boxes per consumer) is no longer hidden.
// Prediction: at 4096^3 a K loop of 32 K tiles (16 K clocks at 8192 FLOP/clk) against an epilogue of
// ~1 K clocks: within ~10 % of step 30's 1285 TFLOP/s, ~1.7-1.8x step 32 (688 -> ~1150-1250); error = 32's.
// SASS: per K tile 4 QGMMA.64x128x32 into one of two register sets, WARPGROUP.DEPBAR.LE gsb0, 0x1 (no
// 0x0 in the K loop), 64 FFMA of the other set; the loop unrolled by 2 (the set is a register name).
// Supports: K % 16 == 0 (16-byte TMA row stride of 1-byte e4m3), any M, N >= 1, < 2^30 tiles; a K
// tail block (K % 128) uses its own scales. sm_90a.
// Run: make run STEP=33 M=8192 N=8192 K=8192
#include <cuda_bf16.h>
#include <cuda_fp8.h>

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
#include "../common/kernel_lib/tma.hpp"

namespace step33 {

constexpr int BM = 128, BN = 128, BK = 128, STAGES = 6;  // the block's tile, one m64 slab per consumer; 6 stages of 32 KB (BK: 128 one-byte e4m3 = one swizzle row)
constexpr int CONSUMERS = 2;
constexpr int GROUP_M = 16;  // tile rows per group: sqrt(2 tiles per SM * 132 SMs * BN / BM) ~ 16 (common/kernel_lib/schedule.hpp)
constexpr int MIN_PIECE = 4;  // with fewer tiles than SMs, stream-K blocks get at least this many K tiles
constexpr int MIN_WAVES = 4;  // with 1..MIN_WAVES-1 full waves, no stream-K (measured: see make_split)
#ifndef STEP33_FIXUP_K_TILES
#define STEP33_FIXUP_K_TILES 32
#endif
// Stream-K runs where the SMs the last wave leaves idle would idle for more than this many K tiles
// each (step 21's break-even in bf16 K tiles, kept from step 23; an e4m3 K tile here is as many wgmmas
// as 23's bf16 one, each at twice the rate, so the break-even may move: not measured again; see make_split).
constexpr int FIXUP_K_TILES = STEP33_FIXUP_K_TILES;
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0: producer, 1..2: consumers
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 32;  // k32: the FP8 wgmma's K (32 bytes, as bf16's k16)
constexpr int M_SLABS = BM / WGMMA_M;  // m64 slabs per tile: one per consumer
constexpr int CONSUMER_WARPS = 4 * CONSUMERS;  // arrivals that empty a stage: every warp of both consumers reads it
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr uint32_t STAGE_BYTES = (BM + BN) * BK * sizeof(__nv_fp8_e4m3);
constexpr int EPI_BOX = 64;  // epilogue box: 64 x 64 bf16, one 128-byte swizzle span per row (the TMA limit)
constexpr int EPI_BUFS = 2;  // boxes in flight per consumer: one being written while the other's store reads
constexpr int ACC = WGMMA_N / 2;  // fp32 sums per consumer thread: 64 (one slab); + 2 x 64 tensor-core accumulators
static_assert(sizeof(__nv_fp8_e4m3) == 1, "e4m3 is one byte");
static_assert(BK * sizeof(__nv_fp8_e4m3) == 128, "a K-major tile row must be exactly one 128-byte swizzle span");
static_assert(BM % WGMMA_M == 0, "a consumer's tile is a whole number of m64 slabs");
static_assert(BK % WGMMA_K == 0, "the K tile is a whole number of wgmma k32 steps");
static_assert(WGMMA_N == 128, "the wgmma wrapper used below is m64n128k32");
static_assert(WGMMA_M == EPI_BOX && BN % EPI_BOX == 0, "a slab is a row of whole epilogue boxes");
static_assert(BK == 128 && BN == 128, "one scale block per K tile (1 x 128 of A, 128 x 128 of B) and one of B per tile's N");
static_assert(M_SLABS == CONSUMERS, "each consumer owns one m64 slab of the tile");
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "the register split must fit the SM's 64K registers");

struct SharedStorage {
  alignas(1024) __nv_fp8_e4m3 a[STAGES][BM * BK];  // 16 KB per stage: stays 1024-byte aligned
  alignas(1024) __nv_fp8_e4m3 b[STAGES][BN * BK];  // 16 KB per stage
  alignas(1024) __nv_bfloat16 c[CONSUMERS][EPI_BUFS][EPI_BOX * EPI_BOX];  // 8 KB per box, 128B-swizzled
  uint64_t full[STAGES];   // producer -> consumer: the stage's bytes have landed
  uint64_t empty[STAGES];  // consumer -> producer: the stage's wgmmas are done reading it
  int last_piece[CONSUMERS];  // fixup: this consumer counted its tile's last piece (issuer -> warpgroup)
};
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;  // + slack to align the dynamic base
static_assert(SMEM_BYTES <= 227 * 1024, "the SM's shared memory per block (227 KB on sm_90)");

// The split of the tiles between the data-parallel part and stream-K (step 21's, with 128x128 tiles;
// common/kernel_lib/stream_k.hpp). Tiles t < dp_tiles (grouped order) go to blocks t % P; the others'
// iters = sk_tiles * k_tiles K tiles are shared out: block b takes [start(b), start(b + 1)).
// Partials: 2P slots of BM x BN fp32, [slot][slab][ACC/4][128 threads] float4; one arrival counter per
// stream-K tile and consumer (each sums its own slab).
using gemm::stream_k::Piece;
using gemm::stream_k::Split;
constexpr int64_t SLOT_FLOATS = int64_t(BM) * BN;
constexpr int COUNTERS_PER_TILE = CONSUMERS;  // each consumer counts its own slab's pieces

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
gemm_fp8_coop_stream_k(int M, int N, int K, const __grid_constant__ CUtensorMap tmap_a,
                           const __grid_constant__ CUtensorMap tmap_b, const __grid_constant__ CUtensorMap tmap_c,
                           bool tma_epilogue, __nv_bfloat16* C, const float* sfa, const float* sfb,
                           const Split split) {
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
      for (int t = blockIdx.x; t < split.dp_tiles; t += gridDim.x) load({t, 0, k_tiles});  // each stage read by both consumers
      gemm::stream_k::Walk walk(split, k_tiles);
      for (Piece pc; walk.next(pc);) load(pc);
    }
  } else {  // consumer me = wg - 1: slab me (rows 64 me ..) of every item of the block
    ptx::setmaxnreg_inc<CONSUMER_REGS>();
    const int me = wg - 1;
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    const uint64_t evict_first = ptx::l2_policy_evict_first();  // C's stores: the first lines L2 gives up
    // This thread's first row in its slab: the D fragment's rows are 16 w + l / 4 + 8 h of the 64
    // (warp w of the warpgroup, lane l, h = (r / 2) % 2 for accumulator r; ptx::store_d_fragment_bf16).
    const int row0 = 16 * ((threadIdx.x % 128) / 32) + (threadIdx.x % 32) / 4;
    pipe::PipeState<STAGES> ring;  // the producer's walk: both consumers read every stage
    float acc[ACC];             // the promoted sums of slab me: fp32 FFMAs on the CUDA cores, zeroed per item
    float tc[2][ACC] = {};      // two sets of tensor-core accumulators: an item's i-th K tile writes tc[i % 2]
    auto compute = [&](const Piece& pc) {  // K tiles [pc.kt0, pc.kt1) of tile pc.t, then its store or fixup
      const gemm::schedule::TileCoord tile = gemm::schedule::grouped(pc.t, tiles_m, tiles_n, GROUP_M);
      const int m0 = tile.m * BM + me * WGMMA_M, n0 = tile.n * BN;  // m0: this consumer's slab
      // K block kb's scales for this thread: its 2 rows of A (sfa is ceil(K/128) x M, M contiguous;
      // a row past M reads nothing and scales by 0, its outputs are clipped) and the tile's sfb.
      auto load_scales = [&](int kb, float (&sa)[2], float& sb) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = m0 + row0 + 8 * h;
          sa[h] = row < M ? __ldg(sfa + int64_t(kb) * M + row) : 0.0f;
        }
        sb = __ldg(sfb + int64_t(tile.n) * k_tiles + kb);  // sfb is ceil(N/128) x ceil(K/128): k_tiles K blocks a row
      };
#pragma unroll
      for (int r = 0; r < ACC; ++r) acc[r] = 0.0f;
      float sa[2][2] = {}, sb[2] = {};  // the scales of the K tile in tc[0] / tc[1], loaded as its wgmmas are issued
      // The scaled promotion of the K tile in tc[b]: FFMAs on the CUDA cores.
      auto promote = [&](auto b_c) {
        constexpr int b = decltype(b_c)::value;
        const float s0 = sa[b][0] * sb[b], s1 = sa[b][1] * sb[b];  // rows h = 0 and 1
#pragma unroll
        for (int r = 0; r < ACC; ++r) acc[r] += tc[b][r] * ((r / 2) % 2 ? s1 : s0);
      };
      // One K tile into tc[b]; then, but for the item's first, the previous K tile's (in tc[1 - b])
      // promotion in the shadow of these wgmmas.
      int held = -1;  // the stage of the previous K tile, released once its partial is promoted
      auto k_tile = [&](int kt, auto b_c, auto promote_previous) {
        constexpr int b = decltype(b_c)::value;
        const int st = ring.stage;
        load_scales(kt, sa[b], sb[b]);  // read at the next K tile's promotion: a whole K tile of latency hidden
        ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
        // One descriptor per operand and stage; the k32 step and slab offsets are added in 16-byte
        // units to its start-address field (bits 0-13), which they cannot carry out of: the stage is
        // 1024-byte aligned and these offsets stay inside it.
        const uint64_t desc_a = ptx::make_desc_k_sw128(s.a[st]), desc_b = ptx::make_desc_k_sw128(s.b[st]);
        ptx::wgmma_fence_operands(tc[b]);
        ptx::wgmma_fence();  // orders these wgmmas after the FFMAs that last read tc[b], two K tiles ago
#pragma unroll
        for (int kk = 0; kk < BK / WGMMA_K; ++kk)  // scale-d = 0 on the first: tc[b] = A*B of this K tile
          ptx::wgmma_m64n128k32_e4m3(tc[b], desc_a + uint64_t((me * WGMMA_M * BK + kk * WGMMA_K) * 1 / 16),
                                     desc_b + uint64_t(kk * WGMMA_K * 1 / 16), kk > 0);
        ptx::wgmma_commit();
        if constexpr (decltype(promote_previous)::value) {
          ptx::wgmma_wait<1>();  // the previous K tile's group is complete; this one keeps the tensor cores busy
          ptx::wgmma_fence_operands(tc[1 - b]);
          promote(std::integral_constant<int, 1 - b>{});
          if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);  // its wgmmas are done reading the stage
        }
        held = st;
        ring.advance();
      };
      using Zero = std::integral_constant<int, 0>;
      using One = std::integral_constant<int, 1>;
      k_tile(pc.kt0, Zero{}, std::false_type{});
      int kt = pc.kt0 + 1;
      for (; kt + 1 < pc.kt1; kt += 2) {  // unrolled by two: the set is a register name, fixed at compile time
        k_tile(kt, One{}, std::true_type{});
        k_tile(kt + 1, Zero{}, std::true_type{});
      }
      if (kt < pc.kt1) {  // one K tile left, into tc[1]
        k_tile(kt, One{}, std::true_type{});
        ptx::wgmma_wait<0>();
        ptx::wgmma_fence_operands(tc[1]);
        promote(One{});
      } else {  // the last K tile is in tc[0]
        ptx::wgmma_wait<0>();
        ptx::wgmma_fence_operands(tc[0]);
        promote(Zero{});
      }
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.empty[held]);
      if (pc.kt0 != 0 || pc.kt1 != k_tiles) {
        // Fixup of a stream-K piece (step 21's), per consumer: store this slab's part of the piece,
        // count it on the slab's own counter; the consumer that counts the slab's last piece sums them
        // all, in block order, and stores the slab.
        const int64_t x0 = int64_t(pc.t - split.dp_tiles) * k_tiles;  // the tile's first K tile in iters
        const int c_first = split.block_of(x0), c_last = split.block_of(x0 + k_tiles - 1);
        const int t128 = threadIdx.x % 128;
        auto piece = [&](int c) {  // c's slot: 2c + 1 for the piece at the tile's K tile 0, else 2c; slab me's half
          return split.partials + int64_t(c == c_first ? 2 * c + 1 : 2 * c) * (M_SLABS * ACC / 4 * 128) +
                 me * (ACC / 4 * 128) + t128;
        };
        float4* slot = piece(blockIdx.x);
#pragma unroll
        for (int q = 0; q < ACC / 4; ++q)
          __stcg(slot + q * 128, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
        __threadfence();  // the piece is visible to every block before it is counted
        ptx::named_barrier_sync(wg, 128);
        if (issuer) {
          int* count = &split.arrivals[(pc.t - split.dp_tiles) * COUNTERS_PER_TILE + me];
          const bool last = atomicAdd(count, 1) == c_last - c_first;
          if (last) *count = 0;  // every piece has arrived: reset for the next launch
          s.last_piece[me] = last;
        }
        ptx::named_barrier_sync(wg, 128);
        if (!s.last_piece[me]) return;
        __threadfence();
        // acc = piece c_first + ... + piece c_last, in that order, whichever arrived last.
#pragma unroll
        for (int r = 0; r < ACC; ++r) acc[r] = 0.0f;
        for (int c = c_first; c <= c_last; ++c) {
          const float4* src = piece(c);
#pragma unroll
          for (int q = 0; q < ACC / 4; ++q) {
            const float4 p = __ldcg(src + q * 128);
            acc[4 * q] += p.x, acc[4 * q + 1] += p.y, acc[4 * q + 2] += p.z, acc[4 * q + 3] += p.w;
          }
        }
      }
      // No dequantization here: every K block's partial was scaled as it was promoted.
      if (!tma_epilogue) {
        ptx::store_d_fragment_bf16(acc, C, M, N, int64_t(m0), n0);
        return;
      }
#pragma unroll
      for (int box = 0; box < BN / EPI_BOX; ++box) {
        __nv_bfloat16* buf = s.c[me][box % EPI_BUFS];
        if (issuer) ptx::tma_store_wait_read<EPI_BUFS - 1>();  // the store that last read buf is done with it ...
        ptx::named_barrier_sync(wg, 128);                        // ... and the whole warpgroup knows it
        ptx::store_d_box_sw128(acc, box, buf);
        ptx::fence_proxy_async_shared();   // these generic-proxy writes, before the async-proxy TMA reads them
        ptx::named_barrier_sync(wg, 128);  // every thread's part of the box is written
        if (issuer) {
          ptx::tma_store_2d_hint(&tmap_c, buf, n0 + box * EPI_BOX, m0, evict_first);  // clipped at M, N
          ptx::tma_store_commit();
        }
      }
    };
    // Every item of the block, data-parallel tiles first (step 21: the stream-K walk's 64-bit divisions
    // have no uniform-datapath form), in the producer's order: both consumers take each one.
    for (int t = blockIdx.x; t < split.dp_tiles; t += gridDim.x) compute({t, 0, k_tiles});
    gemm::stream_k::Walk walk(split, k_tiles);
    for (Piece pc; walk.next(pc);) compute(pc);
    if (issuer) ptx::tma_store_wait_all<0>();  // no store may read shared memory after the block exits
  }
}

/// C (M x N, row-major bf16) = sum over K blocks kb of (A (M x K, row-major e4m3) * B (N x K,
/// row-major e4m3)^T over kb's 128 K) with row i, column j scaled by sfa[kb][i] * sfb[j / 128][kb]
/// (Scaling::block, registry.hpp: sfa ceil(K/128) x M floats, M contiguous; sfb ceil(N/128) x
/// ceil(K/128) floats, row-major; device memory). Each K tile's 4 k32 wgmmas are accumulated by the
/// tensor cores (about 14 significant bits per k32 group), then multiplied by the two scales and added
/// into fp32 registers. On `stream`: one block of 384 threads per SM (at most), 128x128 tiles, one
/// m64 slab per consumer. Throws gemm::Error for another scaling or null scale pointers. Needs K % 16 == 0 and
/// 16-byte aligned A and B (TMA; `unsupported` refuses other shapes; a K tail block of K % 128 columns
/// is zero-filled by TMA and scaled by its own K block's scales), and, where make_split chooses
/// stream-K, p.workspace of Step::workspace_bytes(M, N, K) bytes whose counters are zero (cudaMalloc'd
/// and zeroed once; each launch leaves them zero again). Throws gemm::Error when the workspace is too
/// small, and what make_tma_2d and launch_kernel throw.
void launch(const gemm::Fp8Gemm& p, cudaStream_t stream) {
  if (p.scaling != gemm::Scaling::block || !p.sfa || !p.sfb)
    throw gemm::Error("step 33 takes block scales: p.sfa (ceil(K/128) x M floats) and p.sfb (ceil(N/128) x "
                      "ceil(K/128) floats) in device memory");
  constexpr auto e4m3 = gemm::TmaElem::e4m3;
  const CUtensorMap tmap_a = gemm::make_tma_2d({p.a, uint64_t(p.m), uint64_t(p.k), BM, BK, CU_TENSOR_MAP_SWIZZLE_128B, e4m3});
  const CUtensorMap tmap_b = gemm::make_tma_2d({p.b, uint64_t(p.n), uint64_t(p.k), BN, BK, CU_TENSOR_MAP_SWIZZLE_128B, e4m3});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register stores.
  const gemm::TmaMatrix c{p.c, uint64_t(p.m), uint64_t(p.n), EPI_BOX, EPI_BOX};
  const bool tma_epilogue = !gemm::tma_refusal(c).has_value();
  const CUtensorMap tmap_c = tma_epilogue ? gemm::make_tma_2d(c) : CUtensorMap{};
  gemm::opt_in_dynamic_smem(gemm_fp8_coop_stream_k, SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  Split split = make_split(p.m, p.n, p.k, gemm::sm_count());
  gemm::stream_k::attach_workspace(split, p.workspace, p.workspace_bytes, SLOT_FLOATS, COUNTERS_PER_TILE, "33", p.m,
                                   p.n, p.k);
  const dim3 grid(unsigned(split.blocks));  // one block per SM at most (SMEM_BYTES allows one)
  gemm::launch_kernel({grid, THREADS, SMEM_BYTES, stream}, gemm_fp8_coop_stream_k, p.m, p.n, p.k, tmap_a, tmap_b,
                      tmap_c, tma_epilogue, p.c, p.sfa, p.sfb, split);
}

/// Step::workspace_bytes: the slots and counters of make_split's stream-K part (0 when it has none).
size_t workspace_bytes(int m, int n, int k) {
  return gemm::stream_k::workspace_bytes(make_split(m, n, k, gemm::sm_count()), SLOT_FLOATS, COUNTERS_PER_TILE);
}

std::optional<std::string> unsupported(int m, int n, int k) {
  return gemm::tma_persistent_fp8_gemm_refusal(m, n, k, BM, BN);
}

const bool registered = gemm::register_step({
    .id = "33",
    .name = "fp8_overlap",
    .parent = "32",
    .technique = "the promotion overlapped: consumers split the tile (a slab each), two tensor-core accumulator sets, wait_group 1",
    .dtype = gemm::Dtype::fp8,
    .fp8 = &launch,
    .scaling = gemm::Scaling::block,
    .unsupported = &unsupported,
    .required_cc = 90,
    .workspace_bytes = &workspace_bytes,
    .tile = {BM, BN, BK, STAGES},
    .threads = THREADS,
    .persistent = true,
    .caps = {.stream_k = true},
});

}  // namespace step33
