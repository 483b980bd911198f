// Step 08 — warptiling, on step 07. Step 07 maps threads to the block tile as one flat 2-D grid, so
// the tile shape is tied to the thread count. Here the block tile (BM x BN) is split into warp tiles
// (WM x WN), each covered by one warp's lanes as a WTR x WTC grid of thread tiles (TM x TN, float4
// groups strided by 4*WTR rows / 4*WTC columns): three levels tuned independently; on the H200 the
// sweep chose 128x128x8, 32x128 warp tiles and 8 x 16 thread tiles (128 accumulators), 2 blocks/SM.
// Two lessons, said so: a bigger thread tile pays only once the loop hides the loads (with 07's loop
// it bought 1-3 %), so this step also takes CUTLASS's SIMT mainloop: the tile after next is loaded
// global -> registers right after the STS that emptied them, shared memory is double-buffered (one
// BAR.SYNC per tile, 07 has two), and fragments are double-buffered in registers (k + 1 read while
// k's FFMAs issue). Loads are predicated (zero fill past M, N, K).
// Prediction: 1.05-1.15x step 07; >= 0.9x cuBLAS at 4096 and 8192.
// SASS: LDG.E.128 right after the STS of the previous tile's registers; one BAR.SYNC per K tile.
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows), any M >= 1; ragged M and N (not
// multiples of BM, BN) and K tails are zero-filled / masked; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=08 M=4096 N=4096 K=4096
#include <string>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step08 {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MINB>
struct Tiles {
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  static constexpr int WTR = WM / TM, WTC = WN / TN;  // the lanes of a warp: WTR rows x WTC columns
  static constexpr int SM = 4 * WTR, SN = 4 * WTC;     // stride between a thread's float4 groups
  static constexpr int A4 = BM * BK / 4 / THREADS;     // float4s of A each thread loads per K tile
  static constexpr int B4 = BK * BN / 4 / THREADS;     // float4s of B each thread loads per K tile
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tiles must cover the block tile exactly");
  static_assert(WM % TM == 0 && WN % TN == 0 && WTR * WTC == 32, "32 thread tiles cover a warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  static_assert(BK % 2 == 0, "tile kt's last k step and tile kt + 1's first use different fragment buffers");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(MINB >= 1 && MINB * THREADS <= 2048, "an SM holds at most 2048 threads (sm_90)");
  static_assert((BM * BK / 4) % THREADS == 0 && A4 >= 1, "each thread loads the same number of float4 of A");
  static_assert((BK * BN / 4) % THREADS == 0 && B4 >= 1, "each thread loads the same number of float4 of B");
  static_assert(THREADS % (BN / 4) == 0, "the threads cover whole rows of the B tile (row stride RB = THREADS / (BN / 4))");
  static_assert(2 * (BK * (BM + 4) + BK * BN) * 4 <= 48 * 1024, "two static buffers must fit in 48 KB");
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>::THREADS, MINB)
sgemm_warptiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN, A4 = T::A4, B4 = T::B4;
  constexpr int PAD = 4;  // rows of sAT 4 banks apart when BM % 32 == 0 (speed only), still 16-byte aligned
  __shared__ alignas(16) float sAT[2][BK][BM + PAD];  // A tile transposed: column k of A is row k here
  __shared__ alignas(16) float sB[2][BK][BN];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's first row and column inside the block tile: warp tile, then lane within it.
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  const int KT = (K + BK - 1) / BK;

  // Each thread loads the float4s (ra + it * RA, ca..ca+3) of A and (rb + it * RB, cb..cb+3) of B of
  // every K tile into registers (stA, stB), and stores them one tile later.
  constexpr int RA = THREADS / (BK / 4), RB = THREADS / (BN / 4);
  const int ra = t / (BK / 4), ca = t % (BK / 4) * 4, rb = t / (BN / 4), cb = t % (BN / 4) * 4;
  const float* gA = A + (m0 + ra) * K + ca;         // this thread's first float4 of A, K tile 0
  const float* gB = B + int64_t(rb) * N + n0 + cb;  // this thread's first float4 of B, K tile 0
  const int64_t strideA = int64_t(RA) * K, strideB = int64_t(RB) * N;
  float4 stA[A4], stB[B4];
  // Load the K tile that starts at column k0 of A (a) / row k0 of B (b), zero what lies outside A or B
  // (past the last tile: everything, and nothing is read). K % 4 == 0 and N % 4 == 0: a float4 is
  // wholly inside or wholly outside. Predicated loads, no branch: a branch to an unpredicated
  // interior path (step 09's) split the basic block around the LDGs and cost 6 % on the 128x256
  // variant of this loop (44.8 vs 47.9 TFLOP/s, results/tuning/fp32_h200_08_09_pipeline.csv).
  auto ldg_tile = [&](int k0, const float* a, const float* b) {
#pragma unroll
    for (int it = 0; it < A4; ++it)
      stA[it] = (m0 + ra + it * RA < M && k0 + ca < K) ? *reinterpret_cast<const float4*>(a + it * strideA)
                                                        : make_float4(0, 0, 0, 0);
#pragma unroll
    for (int it = 0; it < B4; ++it)
      stB[it] = (k0 + rb + it * RB < K && n0 + cb < N) ? *reinterpret_cast<const float4*>(b + it * strideB)
                                                        : make_float4(0, 0, 0, 0);
  };
  auto sts_tile = [&](int buf) {
#pragma unroll
    for (int it = 0; it < A4; ++it) {  // transposed: the 4 k of a float4 go to 4 rows of sAT
      const int r = ra + it * RA;
      sAT[buf][ca + 0][r] = stA[it].x, sAT[buf][ca + 1][r] = stA[it].y;
      sAT[buf][ca + 2][r] = stA[it].z, sAT[buf][ca + 3][r] = stA[it].w;
    }
#pragma unroll
    for (int it = 0; it < B4; ++it) *reinterpret_cast<float4*>(&sB[buf][rb + it * RB][cb]) = stB[it];
  };

  float acc[TM][TN] = {};
  float rA[2][TM], rB[2][TN];  // fragments, double-buffered: k + 1 is read while k is multiplied
  auto load_frag = [&](int f, int buf, int kk) {
#pragma unroll
    for (int i = 0; i < TM; i += 4)  // WTR distinct adjacent float4s per warp: no conflict
      *reinterpret_cast<float4*>(&rA[f][i]) = *reinterpret_cast<const float4*>(&sAT[buf][kk][row0 + i / 4 * SM]);
#pragma unroll
    for (int j = 0; j < TN; j += 4)  // WTC distinct adjacent float4s per warp
      *reinterpret_cast<float4*>(&rB[f][j]) = *reinterpret_cast<const float4*>(&sB[buf][kk][col0 + j / 4 * SN]);
  };

  ldg_tile(0, gA, gB);
  sts_tile(0);
  ldg_tile(BK, gA + BK, gB + int64_t(BK) * N);  // tile 1 waits in registers during tile 0's math
  __syncthreads();
  load_frag(0, 0, 0);
  const float* a_next = gA + 2 * BK;  // tile kt + 2
  const float* b_next = gB + int64_t(2 * BK) * N;
  int buf = 0;  // the shared buffer tile kt is read from
  for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk == BK - 1) {
        // The other buffer held tile kt - 1, whose last reads came before the previous barrier.
        sts_tile(buf ^ 1);                           // tile kt + 1, loaded one tile ago
        ldg_tile((kt + 2) * BK, a_next, b_next);     // refill the registers at once: a whole tile
        a_next += BK, b_next += int64_t(BK) * N;     // of math now hides the load's latency
        __syncthreads();
        buf ^= 1;
      }
      load_frag((kk + 1) % 2, buf, (kk + 1) % BK);  // past the last tile: a harmless read of zeros
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[kk % 2][i] * rB[kk % 2][j];
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + i / 4 * SM + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t col = n0 + col0 + j / 4 * SN;
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

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MINB>
void launch_tiles(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  sgemm_warptiling<BM, BN, BK, WM, WN, TM, TN, MINB><<<grid, Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>::THREADS, 0, stream>>>(
      p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200_08_09.csv, 24 points): a
// 128x128 block tile of 4 warps (128 threads), warp tiles 32x128, 8x16 per thread, BK = 8, MINB = 2.
// 255 registers, no spill: two blocks (8 warps) per SM, so one block's barrier is the other's math.
// MINB = 1 lands on the same count and occupancy but another schedule (46.0 at 4096). Tuner: 49.2 /
// 49.4 TFLOP/s at 4096 / 8192 (0.96x / 0.97x cuBLAS); 128x256 with 8 warps, 1 block/SM: 48.1 / 48.4.
constexpr int BM = 128, BN = 128, BK = 8, WM = 32, WN = 128, TM = 8, TN = 16, MINB = 2;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) { launch_tiles<BM, BN, BK, WM, WN, TM, TN, MINB>(p, stream); }

// float4 accesses need 16-byte aligned addresses (CUDA C Programming Guide, "Device Memory
// Accesses"): cudaMalloc bases are, and row r of A starts r * K floats in, so K % 4 == 0; same for
// B and C with N.
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "08",
    .name = "warptiling",
    .parent = "07",
    .technique = "block tile -> warp tile -> thread tile, tuned for the H200",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 2},  // two shared-memory buffers, filled from registers
    .threads = Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>::THREADS,
});

}  // namespace step08
