// Step 06 — vectorized loads, on step 05. Step 05 moves every float with its own 32-bit LDG and STS:
// more load/store instructions than the FFMA pipe can afford to share issue slots with. Here global
// loads are float4 (LDG.E.128), A is stored transposed in shared memory (sAT[k][m]) so that a
// thread's TM values of A for one k are contiguous and, like its TN values of B, come in with
// LDS.128; C is written with float4 (STG.E.128). Four times fewer memory instructions per FFMA.
// A second change rides along: the tile grows from 64x64x8 (TN = 4) to 128x128x16 (TM = TN = 8), 4x
// the FFMAs per K loop, because float4 rows need TN a multiple of 4 and the wider loads pay off
// only with more math per load (docs/fp32_ladder.md, step 06, says what each change buys).
// Prediction: ~1.2x step 05 (public ladder on the H200: 25.9 -> 31.3 TFLOP/s at 4096). The transposed
// stores into sAT and the 8-float strides of the LDS.128 leave bank conflicts (fixed in step 07).
// SASS: LDG.E.128, LDS.128 and STG.E.128; four scalar STS per float4 of A (the transpose).
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows of A, B and C for float4), any M >= 1,
// ragged M, N and K tails zero-filled; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=06 M=4096 N=4096 K=4096
#include <string>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step06 {

template <int BM, int BN, int BK, int TM, int TN>
struct Tiles {
  static constexpr int THREADS = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile exactly");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads per block");
  static_assert((BM * BK / 4) % THREADS == 0, "each thread loads the same number of float4 of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread loads the same number of float4 of B");
};

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, TM, TN>::THREADS)
sgemm_vectorized_loads(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  constexpr int THREADS = Tiles<BM, BN, BK, TM, TN>::THREADS;
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

template <int BM, int BN, int BK, int TM, int TN>
void launch_tiles(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  sgemm_vectorized_loads<BM, BN, BK, TM, TN><<<grid, Tiles<BM, BN, BK, TM, TN>::THREADS, 0, stream>>>(
      p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Swept by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200.csv). Kept: the tile of steps 07
// and 08 (36.7 TFLOP/s at 4096, 37.2 at 8192), so that 06 -> 07 changes only the bank conflicts. The
// sweep's best 06 (BM=64 BN=128 BK=16 TM=8 TN=4: 38.7 / 40.2) dodges the sB conflicts with TN = 4.
constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) { launch_tiles<BM, BN, BK, TM, TN>(p, stream); }

// float4 accesses need 16-byte aligned addresses (CUDA C Programming Guide, "Device Memory
// Accesses"): cudaMalloc bases are, and row r of A starts r * K floats in, so K % 4 == 0; same for
// B and C with N.
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "06",
    .name = "vectorized_loads",
    .parent = "05",
    .technique = "float4 global loads/stores, A transposed in smem for LDS.128",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 1},
    .threads = Tiles<BM, BN, BK, TM, TN>::THREADS,
});

}  // namespace step06
