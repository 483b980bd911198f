// SASS twin of step 06 with a partial regression: only A is read by 32-bit loads (8 LDG.E per K tile),
// B still by float4 (2 LDG.E.128 left in the loop), C still stored by float4. Every rule step 06 had
// before passes it (`kernel has LDG\.E\.128`, `loop count LDG\.E\.128 >= 1`, ...); the exact rules
// added since (no 32-bit global load at all; exactly 4 LDG.E.128 in the loop) flag it.
// Never linked or registered: tests/test_sass.cpp checks the verdicts.
// twin-of: 06
// must-fail: kernel lacks LDG\.E
// must-fail: loop count LDG\.E\.128 == (BM*BK/4+BK*BN/4)/((BM/TM)*(BN/TN))
// must-pass: kernel has LDG\.E\.128
// must-pass: loop count LDG\.E\.128 >= 1
// must-pass: kernel has STG\.E\.128
// must-pass: loop count FFMA == TM*TN*BK
// must-pass: kernel lacks LDL.*|STL.*
#include <cstdint>

namespace sass_twin {

constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);

__global__ void __launch_bounds__(THREADS)
partial_scalar_a(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ alignas(16) float sAT[BK][BM];  // A tile transposed: column k of A is row k here
  __shared__ alignas(16) float sB[BK][BN];
  const int t = threadIdx.x;
  const int tcol = t % (BN / TN), trow = t / (BN / TN);
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);

  float acc[TM][TN] = {};
  float rA[TM], rB[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int it = 0; it < BM * BK / 4 / THREADS; ++it) {  // a compile-time trip count: fully unrolled
      const int i = t + it * THREADS, r = i / (BK / 4), c = i % (BK / 4) * 4;  // float4 at (r, c..c+3)
      // K % 4 == 0: a float4 is wholly inside or wholly outside K.
      // The twin's one change: A read one float at a time (four 32-bit LDG.E instead of one LDG.E.128).
#pragma unroll
      for (int q = 0; q < 4; ++q) sAT[c + q][r] = (m0 + r < M && k0 + c + q < K) ? A[(m0 + r) * K + k0 + c + q] : 0.0f;
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
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + trow * TM + i;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t col = n0 + tcol * TN + j;
      if (row >= M || col >= N) continue;  // N % 4 == 0: the float4 is wholly in or out
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


}  // namespace sass_twin
