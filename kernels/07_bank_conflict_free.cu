// Step 07 — bank-conflict-free shared memory, on step 06. Step 06 leaves two sources of shared-memory
// bank conflicts (32 banks of 4 bytes; a request is split into one wavefront per set of distinct
// addresses that share a bank): (1) the transposed stores sAT[c + q][r]: with BM = 128 the rows of
// sAT are 128 floats = 4 x 32 banks apart, so the threads storing (r, c) and (r, c + 4) hit the same
// bank; (2) each thread's LDS.128 of sB reads 8 contiguous floats, so lanes t and t + 4 of a quarter
// warp are 32 floats apart: same banks. Fix: pad each row of sAT by 4 floats (rows start 4 banks
// apart and stay 16-byte aligned), and split each thread's TN columns into float4 groups strided by
// BN / (TN / 4) (its TM rows likewise): a warp's LDS.128 then reads contiguous float4s.
// Prediction: ncu l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum drop to ~0;
// 1.1-1.2x step 06. With BK = 16, rows k and k + 8 of sAT still start in the same bank: a 2-way
// conflict on the transposed stores that no 16-byte-preserving pad removes (a swizzle would).
// SASS: unchanged in kind (STS, LDS.128), different offsets; STG.E.128 now coalesced.
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows of A, B and C for float4), any M >= 1,
// ragged M, N and K tails zero-filled; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=07 M=4096 N=4096 K=4096
#include <string>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step07 {

template <int BM, int BN, int BK, int TM, int TN>
struct Tiles {
  static constexpr int THREADS = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "the thread tiles must cover the block tile exactly");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads per block");
  static_assert((BM * BK / 4) % THREADS == 0, "each thread loads the same number of float4 of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread loads the same number of float4 of B");
  // A thread's rows are TM / 4 float4 groups strided by SM = BM / (TM / 4) (columns: SN likewise).
  static constexpr int SM = BM / (TM / 4), SN = BN / (TN / 4);
};

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, TM, TN>::THREADS)
sgemm_bank_conflict_free(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, TM, TN>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN;
  constexpr int PAD = 4;  // rows of sAT 4 banks apart (BM % 32 == 0), still 16-byte aligned
  __shared__ alignas(16) float sAT[BK][BM + PAD];  // A tile transposed: column k of A is row k here
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
      for (int i = 0; i < TM; i += 4)  // float4 group i / 4 of this thread's rows
        *reinterpret_cast<float4*>(&rA[i]) = *reinterpret_cast<const float4*>(&sAT[kk][i / 4 * SM + trow * 4]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)  // lanes tcol, tcol + 1, ... read adjacent float4s: no conflict
        *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<const float4*>(&sB[kk][j / 4 * SN + tcol * 4]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + i / 4 * SM + trow * 4 + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t col = n0 + j / 4 * SN + tcol * 4;
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
  sgemm_bank_conflict_free<BM, BN, BK, TM, TN><<<grid, Tiles<BM, BN, BK, TM, TN>::THREADS, 0, stream>>>(
      p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200.csv, 16 points): 43.0 TFLOP/s
// at 4096 (0.84x cuBLAS), 42.5 at 8192 (0.83x).
constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) { launch_tiles<BM, BN, BK, TM, TN>(p, stream); }

// float4 accesses need 16-byte aligned addresses (CUDA C Programming Guide, "Device Memory
// Accesses"): cudaMalloc bases are, and row r of A starts r * K floats in, so K % 4 == 0; same for
// B and C with N.
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "07",
    .name = "bank_conflict_free",
    .parent = "06",
    .technique = "padded sA^T and float4-strided thread tiles: no smem bank conflicts",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 1},
    .threads = Tiles<BM, BN, BK, TM, TN>::THREADS,
});

}  // namespace step07
