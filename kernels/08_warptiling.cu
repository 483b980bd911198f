// Step 08 — warptiling. Step 07 maps threads to the block tile as one flat 2-D grid, so a warp's
// outputs form a 2 x 16 strip of thread tiles: its LDS.128 fetch 16 distinct float4s of sB and
// only 2 of sAT per LDS.128, and the tile shape is tied to the thread count. Here the block tile
// (BM x BN) is split into warp tiles (WM x WN), each covered by the 32 lanes of one warp as a
// WTR x WTC grid of thread tiles (TM x TN, float4 groups strided by 4*WTR rows / 4*WTC columns). A
// warp's shared-memory footprint per k is then WM + WN = 96 floats instead of 07's 144: fewer
// wavefronts per FFMA, and the three tile levels can be tuned independently for the H200.
// Expected: 1.2-1.4x step 07; >= 0.9x cuBLAS at 4096 and 8192 once tuned (issue 3).
// SASS: same instruction kinds as 07 (LDG.E.128, STS, LDS.128, FFMA, STG.E.128), two BAR.SYNC
// per K tile; MINB (blocks per SM) in __launch_bounds__ caps registers so MINB blocks fit per SM.
// Measured (H200, same-run cuBLAS 51.4): 43.3 TFLOP/s at 4096 (0.84x), 43.7 at 8192 (0.85x): only
// 1-3% over step 07, short of the 0.90x target. The tuner's best warp tiling is 07's tile (128x128x16,
// 8x8) and ncu counts the same shared-load wavefronts (6,291,456 at 1024^3) for both: what remains is
// latency, not shared-memory traffic (see step 09 and docs/fp32_ladder.md).
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows), any M >= 1; ragged M and N (not
// multiples of BM, BN) and K tails are zero-filled / masked; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=08 M=4096 N=4096 K=4096
#include <string>

#include "../common/check.hpp"
#include "../common/registry.hpp"

namespace step08 {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MINB>
struct Tiles {
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  static constexpr int WTR = WM / TM, WTC = WN / TN;  // the lanes of a warp: WTR rows x WTC columns
  static constexpr int SM = 4 * WTR, SN = 4 * WTC;     // stride between a thread's float4 groups
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tiles must cover the block tile exactly");
  static_assert(WM % TM == 0 && WN % TN == 0 && WTR * WTC == 32, "32 thread tiles cover a warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(MINB >= 1 && MINB * THREADS <= 2048, "an SM holds at most 2048 threads (sm_90)");
  static_assert((BM * BK / 4) % THREADS == 0, "each thread loads the same number of float4 of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread loads the same number of float4 of B");
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>::THREADS, MINB)
sgemm_warptiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, MINB>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN;
  constexpr int PAD = 4;  // rows of sAT 4 banks apart (BM % 32 == 0), still 16-byte aligned
  __shared__ alignas(16) float sAT[BK][BM + PAD];  // A tile transposed: column k of A is row k here
  __shared__ alignas(16) float sB[BK][BN];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's first row and column inside the block tile: warp tile, then lane within it.
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int it = 0; it < BM * BK / 4 / THREADS; ++it) {  // a compile-time trip count: fully unrolled
      const int i = t + it * THREADS, r = i / (BK / 4), c = i % (BK / 4) * 4;  // float4 at (r, c..c+3)
      // K % 4 == 0: a float4 is wholly inside or wholly outside K.
      const float4 v = (m0 + r < M && k0 + c < K) ? *reinterpret_cast<const float4*>(&A[(m0 + r) * K + k0 + c])
                                                  : make_float4(0, 0, 0, 0);
      sAT[c + 0][r] = v.x, sAT[c + 1][r] = v.y, sAT[c + 2][r] = v.z, sAT[c + 3][r] = v.w;
    }
#pragma unroll
    for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
      const int i = t + it * THREADS, r = i / (BN / 4), c = i % (BN / 4) * 4;
      *reinterpret_cast<float4*>(&sB[r][c]) =
          (k0 + r < K && n0 + c < N) ? *reinterpret_cast<const float4*>(&B[(k0 + r) * int64_t(N) + n0 + c])
                                     : make_float4(0, 0, 0, 0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)  // WTR distinct adjacent float4s per warp: no conflict
        *reinterpret_cast<float4*>(&rA[i]) = *reinterpret_cast<const float4*>(&sAT[kk][row0 + i / 4 * SM]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)  // WTC distinct adjacent float4s per warp
        *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<const float4*>(&sB[kk][col0 + j / 4 * SN]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
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

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200.csv, 52 points): 43.3 TFLOP/s
// at 4096 (0.84x cuBLAS), 43.7 at 8192 (0.85x). MINB = 2 caps registers at 128 (127 used, no spill).
constexpr int BM = 128, BN = 128, BK = 16, WM = 32, WN = 64, TM = 8, TN = 8, MINB = 2;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) { launch_tiles<BM, BN, BK, WM, WN, TM, TN, MINB>(p, stream); }

// float4 accesses need 16-byte aligned addresses (CUDA C Programming Guide, "Device Memory
// Accesses"): cudaMalloc bases are, and row r of A starts r * K floats in, so K % 4 == 0; same for
// B and C with N.
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "08",
    .name = "warptiling",
    .technique = "block tile -> warp tile -> thread tile, tuned for the H200",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
});

}  // namespace step08
