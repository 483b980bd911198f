// Step 09b — stream-K for the last partial wave, a side branch on step 09 (the bf16 ladder grows
// from 08). Two changes, said so: (1) step 09's main loop, unchanged, moves into mma_k_tiles so that
// two kernels run it; (2) the lesson, stream-K. One 128x256 block fills an SM, so 4096^3 is 512 tiles
// on 132 SMs: 3 full waves and one of 116 blocks, where 16 SMs idle for a quarter of the run. The
// launcher gives the tiles of that partial wave to a second kernel of P = 132 blocks that share their
// K tiles evenly (Osama et al., PPoPP 2023): each block takes 0.88 of a tile's K, crossing tile
// boundaries; the pieces of a tile are summed by whichever block stores the last one, in block order.
// The second kernel is launched with programmatic dependent launch so its blocks take SMs as the
// first kernel's last blocks leave them.
// Prediction: +2-3 % over step 09 at 4096 and 8192 (the idle part of the last wave: 0.12 and 0.48 of
// a wave of 4 and 16).
// SASS: PREEXIT (griddepcontrol.launch_dependents); the fixup's MEMBAR.SC.GPU and ATOMG.E.ADD; the
// main loop's LDGSTS / DEPBAR as in 09.
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows), any M >= 1; ragged M, N, K tails as in
// 09; ceil(M / BM) <= 65535 (grid y), at most 2^30 tiles. Workspace (workspace_bytes, allocated by
// the harness): 35 MB on the H200 for shapes that reach stream-K, none otherwise.
// Run: make run STEP=09b M=4096 N=4096 K=4096
#include <algorithm>
#include <string>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/ptx/cp_async.cuh"
#include "../common/kernel_lib/launch.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step09b {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
struct Tiles {
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  static constexpr int WTR = WM / TM, WTC = WN / TN;  // the lanes of a warp: WTR rows x WTC columns
  static constexpr int SM = 4 * WTR, SN = 4 * WTC;     // stride between a thread's float4 groups
  static constexpr int LDA = BM + 4;                   // padded row of sAT (= one k of A), in floats
  static constexpr int STAGE_FLOATS = BK * LDA + BK * BN;
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tiles must cover the block tile exactly");
  static_assert(WM % TM == 0 && WN % TN == 0 && WTR * WTC == 32, "32 thread tiles cover a warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  // A warp's 4-byte copies of A cover 32 / BK rows x BK k: coalesced (BK consecutive floats of a
  // row) and, with rows of sAT 4 banks apart, conflict-free for BK = 8 (2-way for BK = 16).
  static_assert(BM % 32 == 0 && 32 % BK == 0, "a warp's 4-byte copies of A cover 32 / BK rows x BK k");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(MINB >= 1 && MINB * THREADS <= 2048, "an SM holds at most 2048 threads (sm_90)");
  static_assert(STAGES >= 2, "a pipeline needs at least two buffers");
  static_assert(MINB * SMEM_BYTES <= 227 * 1024, "MINB blocks' stages must fit in 227 KB of shared memory (sm_90)");
  static_assert((BM * BK) % THREADS == 0, "each thread copies the same number of floats of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread copies the same number of float4 of B");
  static_assert(THREADS % (BN / 4) == 0, "the threads cover whole rows of the B tile (row stride RB = THREADS / (BN / 4))");
};

// The main loop: K tiles [kt0, kt1) of the block tile at rows m0.., columns n0.. into acc (zeroed
// first). Both kernels below run it; each gets its own register allocation.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__device__ __forceinline__ void mma_k_tiles(int M, int N, int K, const float* A, const float* B, int64_t m0,
                                            int64_t n0, int kt0, int kt1, float (&acc)[TM][TN]) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN, LDA = T::LDA;
  constexpr unsigned STAGE_BYTES = T::STAGE_FLOATS * 4;
  extern __shared__ float4 smem4[];  // STAGES x { sAT[BK][LDA], sB[BK][BN] }
  const float* smem = reinterpret_cast<const float*>(smem4);
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem4));
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's first row and column inside the block tile (step 08's warp tiling).
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;

  // Each thread copies the floats (ra + it * RA, ca) of A and the float4s (rb + it * RB, cb) of B of
  // every K tile, to fixed offsets of a stage; the global addresses advance by BK columns / rows.
  constexpr int RA = THREADS / BK, RB = THREADS / (BN / 4);
  const int ra = t / BK, ca = t % BK, rb = t / (BN / 4), cb = t % (BN / 4) * 4;
  const float* gA = A + (m0 + ra) * K + ca + kt0 * BK;           // this thread's first float of A, K tile kt0
  const float* gB = B + (int64_t(kt0) * BK + rb) * N + n0 + cb;  // this thread's first float4 of B, K tile kt0
  const int64_t strideA = int64_t(RA) * K, strideB = int64_t(RB) * N;
  const unsigned sA_dst = smem_base + (ca * LDA + ra) * 4, sB_dst = smem_base + (BK * LDA + rb * BN + cb) * 4;
  const bool interior = m0 + BM <= M && n0 + BN <= N;  // no row or column of the block tile is outside C
  // Issue (not wait for) the copies of the K tile that starts at column k0 of A (a) / row k0 of B (b).
  auto load_tile = [&](unsigned stage, int k0, const float* a, const float* b) {
    if (interior && k0 + BK <= K) {  // every block but the edges, every tile but a K tail: no predicate
#pragma unroll
      for (int it = 0; it < BM * BK / THREADS; ++it) ptx::cp_async_4(sA_dst + stage + it * RA * 4, a + it * strideA);
#pragma unroll
      for (int it = 0; it < BK * BN / 4 / THREADS; ++it) ptx::cp_async_16(sB_dst + stage + it * RB * BN * 4, b + it * strideB);
    } else {  // zero-fill what lies outside A or B; out-of-range copies read nothing (src-size 0)
#pragma unroll
      for (int it = 0; it < BM * BK / THREADS; ++it) {
        const bool in = m0 + ra + it * RA < M && k0 + ca < K;
        ptx::cp_async_4(sA_dst + stage + it * RA * 4, in ? a + it * strideA : A, in ? 4 : 0);
      }
#pragma unroll
      for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
        const bool in = k0 + rb + it * RB < K && n0 + cb < N;
        ptx::cp_async_16(sB_dst + stage + it * RB * BN * 4, in ? b + it * strideB : B, in ? 16 : 0);
      }
    }
  };

  // Prologue: STAGES - 1 tiles in flight. Every iteration below commits one group (empty past the
  // last tile) so that "wait until STAGES - 2 groups are pending" always means "the next tile landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (kt0 + s < kt1) load_tile(s * STAGE_BYTES, (kt0 + s) * BK, gA + s * BK, gB + int64_t(s) * BK * N);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<STAGES - 2>();  // tile kt0 has landed for this thread ...
  __syncthreads();                   // ... and for everyone

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float rA[2][TM], rB[2][TN];  // fragments, double-buffered: k + 1 is read while k is multiplied
  static_assert(BK % 2 == 0, "tile kt's last k step and tile kt + 1's first use different buffers");
  auto load_frag = [&](int buf, unsigned stage, int kk) {
    const float* sAT = smem + stage / 4;
    const float* sB = sAT + BK * LDA;
#pragma unroll
    for (int i = 0; i < TM; i += 4)  // WTR distinct adjacent float4s per warp: no conflict
      *reinterpret_cast<float4*>(&rA[buf][i]) = *reinterpret_cast<const float4*>(&sAT[kk * LDA + row0 + i / 4 * SM]);
#pragma unroll
    for (int j = 0; j < TN; j += 4)  // WTC distinct adjacent float4s per warp
      *reinterpret_cast<float4*>(&rB[buf][j]) = *reinterpret_cast<const float4*>(&sB[kk * BN + col0 + j / 4 * SN]);
  };
  load_frag(0, 0, 0);
  unsigned rs = 0, ws = (STAGES - 1) * STAGE_BYTES;  // byte offsets of the stage read and the stage refilled
  const float* a_next = gA + (STAGES - 1) * BK;      // tile kt + STAGES - 1
  const float* b_next = gB + int64_t(STAGES - 1) * BK * N;
  for (int kt = kt0; kt < kt1; ++kt) {
    // Refill the stage that tile kt - 1 used: everyone finished reading it before the last barrier.
    if (kt + STAGES - 1 < kt1) load_tile(ws, (kt + STAGES - 1) * BK, a_next, b_next);
    ptx::cp_async_commit();
    ws = ws == (STAGES - 1) * STAGE_BYTES ? 0 : ws + STAGE_BYTES;
    a_next += BK, b_next += int64_t(BK) * N;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk == BK - 1) {  // the next read is tile kt + 1's first k: wait for it, then switch stages
        ptx::cp_async_wait<STAGES - 2>();
        __syncthreads();
        rs = rs == (STAGES - 1) * STAGE_BYTES ? 0 : rs + STAGE_BYTES;
      }
      load_frag((kk + 1) % 2, rs, (kk + 1) % BK);  // past the last tile: a harmless read of a stale stage
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[kk % 2][i] * rB[kk % 2][j];
    }
  }
  ptx::cp_async_wait<0>();  // no copy may still target shared memory when the block exits or starts over
}

// The epilogue: C = alpha * acc + beta * C for this thread's TM x TN fragment of the block tile at
// (m0, n0), one float4 at a time; nothing outside C is written, and C is not read when beta == 0.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__device__ __forceinline__ void store_tile(int M, int N, float alpha, float beta, float* C, int64_t m0, int64_t n0,
                                           const float (&acc)[TM][TN]) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + i / 4 * T::SM + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t col = n0 + col0 + j / 4 * T::SN;
      if (row >= M || col >= N) continue;  // ragged edge; N % 4 == 0: the float4 is wholly in or out
      float4* c = reinterpret_cast<float4*>(&C[row * N + col]);
      float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
      if (beta != 0.0f) {  // beta == 0: C is never read
        const float4 c0 = *c;
        v.x += beta * c0.x, v.y += beta * c0.y, v.z += beta * c0.z, v.w += beta * c0.w;
      }
      *c = v;
    }
  }
}

// The data-parallel kernel: block (x, y) computes the tile at block-tile column x, row y over all of
// K. The grid has whole rows of tiles; blocks past the first dp_tiles tiles (in row-major order) exit,
// those tiles are the stream-K kernel's. (Small changes around the unchanged main loop moved ptxas's
// register allocation and the loop's speed by up to 8 %; a one-dimensional grid, and a 2D one with
// a per-float4 epilogue, were 4 % slower. This form measured as fast as step 09: the
// sk_* rows of results/tuning/fp32_h200_08_09_pipeline.csv.)
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS, MINB)
sgemm_data_parallel(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                    int dp_tiles, bool stream_k_follows) {
  if (blockIdx.y * gridDim.x + blockIdx.x >= unsigned(dp_tiles)) return;
  // Let the stream-K kernel, launched next with programmatic dependent launch, be scheduled now: its
  // blocks take SMs as this grid's last blocks leave them (it reads nothing this kernel writes). Only
  // then: a later kernel of someone else's with that launch attribute must not start early.
  if (stream_k_follows) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  float acc[TM][TN];
  mma_k_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(M, N, K, A, B, m0, n0, 0, (K + BK - 1) / BK, acc);
  store_tile<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(M, N, alpha, beta, C, m0, n0, acc);
}

// The stream-K schedule of the tiles after the data-parallel kernel's (Osama et al., "Stream-K:
// Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU", PPoPP 2023;
// its "data-parallel + stream-K" hybrid). The K tiles of tiles first_tile.. are counted in order (K
// tile kt of shared tile s is number s * KT + kt) and split evenly between `blocks` blocks: block g
// takes [g * S / G, (g + 1) * S / G) with S = iters, G = blocks. A block whose range cuts a tile
// adds its partial sums to that tile through `partials`.
struct Schedule {
  int tiles_n;       // block tiles along N
  int first_tile;    // the first shared tile; the data-parallel kernel computes the ones before it
  int blocks;        // G
  int64_t iters;     // S = shared tiles * KT
  float4* partials;  // 2G slots of BM * BN floats: slot 2g for the piece block g starts inside a
                     // tile, slot 2g + 1 for the piece it ends inside a tile with
  int* arrivals;     // pieces stored so far, one counter per shared tile; 0 between launches
};

// The stream-K kernel: block g computes its range of K tiles as pieces of consecutive tiles; a piece
// that is a whole tile is written as in the data-parallel kernel, the others go through the fixup.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS, MINB)
sgemm_stream_k(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
               const Schedule sched) {
  constexpr int THREADS = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS;
  __shared__ bool last_piece;  // this block stored the last piece of a shared tile
  const int t = threadIdx.x, g = blockIdx.x, KT = (K + BK - 1) / BK;
  auto start = [&](int b) { return b * sched.iters / sched.blocks; };  // block b's first K tile
  // This block's pieces: the first starts at K tile kt0 of `tile`, every later one at K tile 0 of the
  // next tile; `left` K tiles remain to start.
  const int64_t first = start(g);
  int tile = int(first / KT), kt0 = int(first % KT), left = int(start(g + 1) - first);
  for (; left > 0; ++tile, kt0 = 0) {
    const int kt1 = min(KT, kt0 + left);  // this piece: K tiles [kt0, kt1)
    left -= kt1 - kt0;
    const int64_t m0 = (sched.first_tile + tile) / sched.tiles_n * int64_t(BM);
    const int64_t n0 = (sched.first_tile + tile) % sched.tiles_n * int64_t(BN);
    __syncthreads();  // after a previous piece: everyone is done reading its stages
    float acc[TM][TN];
    mma_k_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(M, N, K, A, B, m0, n0, kt0, kt1, acc);
    if (kt0 != 0 || kt1 != KT) {
      // Fixup: store this piece and count it; the block that stores the tile's last piece sums all
      // pieces, in block order (the result does not depend on which arrived last), and writes C. No
      // block waits for another, so none needs another to be resident (the "last block" pattern of
      // the CUDA sample threadFenceReduction: store, fence, count with an atomic).
      const int64_t x0 = int64_t(tile) * KT;  // the tile's first K tile
      // The blocks whose ranges hold the tile's first and last K tiles: the largest c with start(c) <= x.
      auto block_of = [&](int64_t x) { return int(((x + 1) * sched.blocks - 1) / sched.iters); };
      const int c_first = block_of(x0), c_last = block_of(x0 + KT - 1);
      // c_first's piece starts at the tile's K tile 0 (slot 2c + 1), every later block's inside the
      // tile (slot 2c). A slot is [TM * TN / 4][THREADS] float4, so that a warp's accesses coalesce.
      auto piece = [&](int c) {
        return sched.partials + int64_t(c == c_first ? 2 * c + 1 : 2 * c) * (TM * TN / 4 * THREADS) + t;
      };
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
          __stcg(piece(g) + (i * TN + j) / 4 * THREADS, make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
      __threadfence();  // the piece is visible to every block before it is counted
      __syncthreads();
      if (t == 0) {
        last_piece = atomicAdd(&sched.arrivals[tile], 1) == c_last - c_first;
        if (last_piece) sched.arrivals[tile] = 0;  // every piece has arrived: reset for the next launch
      }
      __syncthreads();
      if (!last_piece) continue;
      __threadfence();
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4) {  // acc = piece c_first + ... + piece c_last, in that order
          float4 v = __ldcg(piece(c_first) + (i * TN + j) / 4 * THREADS);
          for (int c = c_first + 1; c <= c_last; ++c) {
            const float4 p = __ldcg(piece(c) + (i * TN + j) / 4 * THREADS);
            v.x += p.x, v.y += p.y, v.z += p.z, v.w += p.w;
          }
          acc[i][j] = v.x, acc[i][j + 1] = v.y, acc[i][j + 2] = v.z, acc[i][j + 3] = v.w;
        }
    }
    store_tile<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(M, N, alpha, beta, C, m0, n0, acc);
  }
}

// The split of one launch between the two kernels. P blocks run at once, so tiles % P of them make a
// partial last wave that leaves the other SMs idle. Where there is at least one full wave, stream-K
// takes the partial wave's tiles, and one full wave more when the partial one is under half of P:
// then every stream-K block gets at least half a tile of K, and no tile is split between more than
// three blocks. The workspace holds 2P slots of BM x BN floats, then 2P arrival counters (ints; a
// schedule shares fewer than 1.5P tiles), kept at 0 between launches.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int SK_STAGES, int MINB>
struct Split {
  int64_t tiles_n, tiles, KT, P, sk_tiles;
  size_t slot_bytes, workspace_bytes;  // workspace_bytes: 0 when stream-K does not run
  Split(int m, int n, int k) {
    using TS = Tiles<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>;
    // P: stream-K blocks resident at once (SMs x blocks per SM). The occupancy query is a host-side
    // calculation, made once per thread and device.
    thread_local int device = -1, per_sm = 0;
    int current = 0;
    CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) {
      gemm::opt_in_dynamic_smem(sgemm_stream_k<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>, TS::SMEM_BYTES);
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, sgemm_stream_k<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>, TS::THREADS, TS::SMEM_BYTES));
      device = current;
    }
    tiles_n = (int64_t(n) + BN - 1) / BN;
    tiles = (int64_t(m) + BM - 1) / BM * tiles_n;
    KT = (int64_t(k) + BK - 1) / BK;
    P = int64_t(gemm::sm_count()) * std::max(per_sm, 1);
    const int64_t waves = tiles / P, rest = tiles % P;
    sk_tiles = waves == 0 || rest == 0 ? 0 : 2 * rest >= P ? rest : rest + P;
    slot_bytes = size_t(2) * P * BM * BN * sizeof(float);
    workspace_bytes = sk_tiles > 0 ? slot_bytes + size_t(2) * P * sizeof(int) : 0;
  }
};

// Enqueues C = alpha * A * B + beta * C (Fp32Gemm: row-major, M x K times K x N) on `stream`: the
// data-parallel kernel for all tiles but the last partial wave, then the stream-K kernel (with
// SK_STAGES buffers) for those, in the workspace the harness allocated (Split::workspace_bytes: 35 MB
// for the chosen tiles on 132 SMs, zeroed once). The caller has checked `unsupported`. Throws
// gemm::Error when the workspace is smaller than that or a CUDA call fails.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB, int SK_STAGES = STAGES>
void launch_tiles(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  using TS = Tiles<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>;
  auto dp_kernel = sgemm_data_parallel<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  auto sk_kernel = sgemm_stream_k<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>;
  gemm::opt_in_dynamic_smem(dp_kernel, T::SMEM_BYTES);  // over 48 KB of dynamic shared memory
  gemm::opt_in_dynamic_smem(sk_kernel, TS::SMEM_BYTES);
  const Split<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB> s(p.m, p.n, p.k);
  const int64_t tiles_n = s.tiles_n, KT = s.KT, P = s.P, sk_tiles = s.sk_tiles;
  const int dp_tiles = int(s.tiles - sk_tiles);
  if (p.workspace_bytes < s.workspace_bytes)
    throw gemm::Error("step 09b needs a workspace of " + std::to_string(s.workspace_bytes) + " bytes for M=" +
                      std::to_string(p.m) + " N=" + std::to_string(p.n) + " K=" + std::to_string(p.k) + " (got " +
                      std::to_string(p.workspace_bytes) + "): reserve Step::workspace_bytes first");
  float4* partials = static_cast<float4*>(p.workspace);
  int* arrivals = reinterpret_cast<int*>(static_cast<char*>(p.workspace) + s.slot_bytes);
  if (dp_tiles > 0) {
    const dim3 grid(unsigned(tiles_n), unsigned((dp_tiles + tiles_n - 1) / tiles_n));
    gemm::launch_kernel({grid, T::THREADS, T::SMEM_BYTES, stream}, dp_kernel, p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta,
                        p.c, dp_tiles, sk_tiles > 0);
  }
  if (sk_tiles > 0) {
    const Schedule sched{int(tiles_n), dp_tiles, int(std::min(P, sk_tiles * KT)), sk_tiles * KT, partials, arrivals};
    // Programmatic dependent launch (CUDA C Programming Guide, "Programmatic Dependent Launch and
    // Synchronization"): this grid may start once every data-parallel block has executed
    // griddepcontrol.launch_dependents, instead of after the whole grid has finished. Only after our
    // own data-parallel kernel, which started after all earlier work on the stream had finished; with
    // no data-parallel kernel before it, the launch is an ordinary one (this kernel has no
    // griddepcontrol.wait, so it must not start before an unknown predecessor is done).
    const dim3 grid(unsigned(sched.blocks));
    gemm::launch_kernel({.grid = grid, .block = TS::THREADS, .dynamic_smem = TS::SMEM_BYTES, .stream = stream,
                         .programmatic_dependent = dp_tiles > 0},
                        sk_kernel, p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c, sched);
  }
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200_08_09.csv, 84 points): a
// 128x256 block tile of 8 warps, warp tiles 32x128, 8x16 per thread, BK = 16, 2 stages, 223
// registers, 1 block/SM. Tuner: 51.25 / 51.98 TFLOP/s at 4096 / 8192 (1.00x / 1.02x cuBLAS); 3
// stages 51.17 / 51.98, the 16x8 thread tile 51.04 / 51.66 (3 stages). Hand-measured variants of
// the loop (FFMA order, BK, load placement, rasterization): results/tuning/fp32_h200_08_09_pipeline.csv.
// The stream-K kernel has 3 stages: its concurrent blocks work at different K, so fewer of their
// copies hit in L2 (2 stages: 50.6 TFLOP/s at 8192 with every tile in stream-K, 3: 51.2, 4: 50.7).
constexpr int BM = 128, BN = 256, BK = 16, WM = 32, WN = 128, TM = 8, TN = 16, STAGES = 2, MINB = 1, SK_STAGES = 3;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  launch_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB, SK_STAGES>(p, stream);
}
size_t workspace_bytes(int m, int n, int k) {
  return Split<BM, BN, BK, WM, WN, TM, TN, SK_STAGES, MINB>(m, n, k).workspace_bytes;
}

// cp.async of 16 bytes needs 16-byte aligned source and destination (PTX ISA, cp.async): rows of B
// and C start r * N floats in, so N % 4 == 0. A comes in 4-byte copies and would take any K; the
// K % 4 == 0 refusal is kept so that steps 06-09b accept the same shapes (step 08 loads A as float4).
// The data-parallel grid has ceil(M / BM) rows (grid y), and tiles are numbered with an int: at
// most 2^30 of them.
std::optional<std::string> unsupported(int m, int n, int k) {
  if (auto why = gemm::float4_rows_refusal(m, n, k, BM)) return why;
  const int64_t tiles = (int64_t(m) + BM - 1) / BM * ((int64_t(n) + BN - 1) / BN);
  if (tiles > (int64_t(1) << 30))
    return "M=" + std::to_string(m) + " x N=" + std::to_string(n) + " makes " + std::to_string(tiles) + " tiles of " +
           std::to_string(BM) + "x" + std::to_string(BN) + ", over the 2^30 this step numbers";
  return std::nullopt;
}

const bool registered = gemm::register_step({
    .id = "09b",
    .name = "stream_k",
    .parent = "09",
    .technique = "stream-K for the last partial wave: data-parallel kernel + stream-K kernel with fixup",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .workspace_bytes = &workspace_bytes,
    .tile = {BM, BN, BK, STAGES},  // the data-parallel kernel; the stream-K one has SK_STAGES
    .threads = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS,
    .caps = {.stream_k = true},
});

}  // namespace step09b
