// SASS twin of step 06 with the float4 casts on global memory removed: A and B are read one float at
// a time. The compiler cannot prove that &A[(m0 + r) * K + k0 + c] is 16-byte aligned (K and the
// pointer are runtime values), so it must keep four 32-bit LDG where step 06 has one LDG.E.128.
// Never linked or registered: tests/test_sass.cpp checks that step 06's rule flags it.
// twin-of: 06
// must-fail: kernel has LDG\.E\.128
// must-pass: kernel lacks LDL.*|STL.*
// must-pass: loop count FFMA == TM*TN*BK
#include <cstdint>

namespace sass_twin {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);

__global__ void __launch_bounds__(THREADS)
scalar_loads(int M, int N, int K, const float* A, const float* B, float* C) {
  __shared__ alignas(16) float sAT[BK][BM];
  __shared__ alignas(16) float sB[BK][BN];
  const int t = threadIdx.x, tcol = t % (BN / TN), trow = t / (BN / TN);
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = t; i < BM * BK; i += THREADS) {  // scalar: the only change from step 06's loads
      const int r = i / BK, c = i % BK;
      sAT[c][r] = (m0 + r < M && k0 + c < K) ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = t; i < BK * BN; i += THREADS) {
      const int r = i / BN, c = i % BN;
      sB[r][c] = (k0 + r < K && n0 + c < N) ? B[(k0 + r) * int64_t(N) + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4*>(&rA[i]) = *reinterpret_cast<const float4*>(&sAT[kk][trow * TM + i]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<const float4*>(&sB[kk][tcol * TN + j]);
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
