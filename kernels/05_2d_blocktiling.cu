// Step 05 — 2D blocktiling, on step 04. Step 04 still issues (1 + TM) / TM ~ 1.1 LDS per FFMA, and
// its 512 threads hold only 8 accumulators each. Here each thread owns a TM x TN tile of C: per k it
// loads TM values of A and TN values of B into registers (rA, rB) and adds their outer product
// (TM * TN FFMA) to acc, so LDS per FFMA falls to (TM + TN) / (TM * TN): 0.375 for this 8 x 4.
// Prediction: ~1.3x step 04 (public ladder on the H200: 19.8 -> 25.9 TFLOP/s at 4096).
// SASS: the inner loop is TM*TN*BK FFMA (256 for 8x4x8), fully unrolled (no backward branch);
// ptxas merges the LDS into LDS.128.
// Supports: any M, N, K >= 1 (partial tiles are zero-filled) with ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=05 M=4096 N=4096 K=4096
#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step05 {

template <int BM, int BN, int BK, int TM, int TN>
struct Tiles {
  static constexpr int THREADS = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile exactly");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads per block");
  static_assert((BM * BK) % THREADS == 0, "each thread loads the same number of elements of A");
  static_assert((BK * BN) % THREADS == 0, "each thread loads the same number of elements of B");
};

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, TM, TN>::THREADS)
sgemm_2d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  constexpr int THREADS = Tiles<BM, BN, BK, TM, TN>::THREADS;
  __shared__ float sA[BM][BK];  // BM x BK tile of A
  __shared__ float sB[BK][BN];  // BK x BN tile of B
  const int t = threadIdx.x;
  const int tcol = t % (BN / TN), trow = t / (BN / TN);  // this thread's TM x TN tile of C
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int it = 0; it < BM * BK / THREADS; ++it) {  // coalesced: consecutive threads, consecutive k
      const int i = t + it * THREADS, r = i / BK, c = i % BK;  // compile-time trip count: unrolled
      sA[r][c] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
#pragma unroll
    for (int it = 0; it < BK * BN / THREADS; ++it) {
      const int i = t + it * THREADS, r = i / BN, c = i % BN;
      sB[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * int64_t(N) + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; ++i) rA[i] = sA[trow * TM + i][kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) rB[j] = sB[kk][tcol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)  // outer product of rA and rB, held in registers
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();  // before the next tile overwrites what slower warps still read
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int64_t row = m0 + trow * TM + i, col = n0 + tcol * TN + j;
      if (row < M && col < N) {
        float* c = &C[row * N + col];
        *c = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;  // beta == 0: C never read
      }
    }
}

template <int BM, int BN, int BK, int TM, int TN>
void launch_tiles(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  sgemm_2d_blocktiling<BM, BN, BK, TM, TN><<<grid, Tiles<BM, BN, BK, TM, TN>::THREADS, 0, stream>>>(
      p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200.csv, 22 points): 28.5 TFLOP/s
// at 4096 and 8192 (0.56x cuBLAS); 128x128x16 with 8x8 (more reuse, 194 registers, 1 block/SM) 25.5.
constexpr int BM = 64, BN = 64, BK = 8, TM = 8, TN = 4;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) { launch_tiles<BM, BN, BK, TM, TN>(p, stream); }

std::optional<std::string> unsupported(int m, int, int) { return gemm::grid_refusal("M", m, BM, 1); }

const bool registered = gemm::register_step({
    .id = "05",
    .name = "2d_blocktiling",
    .parent = "04",
    .technique = "8x4 outputs per thread: outer products in registers (64x64x8 tile)",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 1},
    .threads = Tiles<BM, BN, BK, TM, TN>::THREADS,
});

}  // namespace step05
