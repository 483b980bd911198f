// SASS twin of step 05 whose kk loop the compiler cannot unroll: its trip count `bk` is a kernel
// argument instead of the compile-time BK, so the K-tile loop keeps a loop of TM*TN FFMAs with a
// backward branch around it instead of TM*TN*BK FFMAs in straight-line code.
// Never linked or registered: tests/test_sass.cpp checks that step 05's rules flag it.
// twin-of: 05
// must-fail: loop count FFMA == TM*TN*BK
// must-fail: outer math-loops == 0
// must-pass: kernel lacks LDL.*|STL.*
#include <cstdint>

namespace sass_twin {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);

__global__ void __launch_bounds__(THREADS)
rolled_inner_loop(int M, int N, int K, int bk, const float* A, const float* B, float* C) {
  __shared__ float sA[BM][BK];
  __shared__ float sB[BK][BN];
  const int t = threadIdx.x, tcol = t % (BN / TN), trow = t / (BN / TN);
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = t; i < BM * BK; i += THREADS) {
      const int r = i / BK, c = i % BK;
      sA[r][c] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = t; i < BK * BN; i += THREADS) {
      const int r = i / BN, c = i % BN;
      sB[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * int64_t(N) + n0 + c] : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < bk; ++kk) {  // runtime trip count: the only change from step 05
#pragma unroll
      for (int i = 0; i < TM; ++i) rA[i] = sA[trow * TM + i][kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) rB[j] = sB[kk][tcol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int64_t row = m0 + trow * TM + i, col = n0 + tcol * TN + j;
      if (row < M && col < N) C[row * N + col] = acc[i][j];
    }
}

}  // namespace sass_twin
