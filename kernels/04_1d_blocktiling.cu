// Step 04 — 1D blocktiling, on step 03. Step 03 reads two shared values per FFMA (a row of sA, a
// column of sB per output), so shared-memory bandwidth caps it near 1/4 of the FFMA rate. Here each
// thread computes a column of TM = 8 outputs: per k it loads one element of sB into a register and
// reuses it for TM FFMAs against TM broadcast reads of sA, so LDS per FFMA falls from 2 to
// (1 + TM) / TM ~ 1.1. To give 512 threads 8 outputs each, the block tile grows to 64x64 (half the
// global traffic per FLOP of 03's 32x32) and BK shrinks to 8.
// Prediction: ~2x step 03 (a public ladder measured 9.1 -> 19.8 TFLOP/s at 4096 on the H200).
// SASS: the inner loop is BK x TM = 64 FFMA with one LDS of sB per 8 FFMA.
// Supports: any M, N, K >= 1 (partial tiles are zero-filled) with ceil(M / 64) <= 65535 (grid y).
// Run: make run STEP=04 M=4096 N=4096 K=4096
#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step04 {

constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
constexpr int THREADS = BM * BN / TM;  // 512: one thread per column of TM outputs
static_assert(BM % TM == 0, "a thread's column of TM outputs must not straddle two block tiles");
static_assert(BM * BK == THREADS && BK * BN == THREADS,
              "each thread loads exactly one element of A and one of B per K tile");
static_assert(BN % 32 == 0, "a warp must share one row group so that its sA reads are broadcasts");

__global__ void __launch_bounds__(THREADS)
sgemm_1d_blocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float sA[BM][BK];  // BM x BK tile of A
  __shared__ float sB[BK][BN];  // BK x BN tile of B
  const int t = threadIdx.x;
  const int tcol = t % BN, trow = t / BN;    // this thread: column tcol, rows trow*TM .. trow*TM+TM-1
  const int a_row = t / BK, a_col = t % BK;  // the element of A this thread loads
  const int b_row = t / BN, b_col = t % BN;  // the element of B this thread loads
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);

  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    sA[a_row][a_col] = (m0 + a_row < M && k0 + a_col < K) ? A[(m0 + a_row) * K + k0 + a_col] : 0.0f;
    sB[b_row][b_col] = (k0 + b_row < K && n0 + b_col < N) ? B[(k0 + b_row) * int64_t(N) + n0 + b_col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float b = sB[kk][tcol];  // one LDS, reused TM times
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += sA[trow * TM + i][kk] * b;  // warp-wide broadcast
    }
    __syncthreads();  // before the next tile overwrites what slower warps still read
  }
  const int64_t col = n0 + tcol;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + trow * TM + i;
    if (row < M && col < N) {
      float* c = &C[row * N + col];
      *c = beta == 0.0f ? alpha * acc[i] : alpha * acc[i] + beta * *c;  // beta == 0: C is never read
    }
  }
}

void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  sgemm_1d_blocktiling<<<grid, THREADS, 0, stream>>>(p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

std::optional<std::string> unsupported(int m, int, int) { return gemm::grid_refusal("M", m, BM, 1); }

const bool registered = gemm::register_step({
    .id = "04",
    .name = "1d_blocktiling",
    .parent = "03",
    .technique = "each thread computes a column of 8 outputs (64x64x8 block tile)",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 1},
    .threads = THREADS,
});

}  // namespace step04
