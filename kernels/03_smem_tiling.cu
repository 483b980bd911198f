// Step 03 — shared-memory tiling, on step 02. Step 02 reads every element of A and B from global
// memory (or L1) once per FMA. Here a block of 32x32 threads stages a BM x BK tile of A and a BK x BN
// tile of B in shared memory (one coalesced load per thread each), synchronises, and runs BK FMAs per
// thread out of shared memory: each global element is fetched once per block instead of once per thread.
// Prediction: ~1.5x step 02 (a public ladder measured 6.2 -> 9.1 TFLOP/s at 4096 on the H200). Still
// one LDS per operand per FMA, so shared-memory bandwidth becomes the limit (step 04 attacks it).
// SASS: LDS in the inner loop, two BAR.SYNC per K tile.
// Supports: any M, N, K >= 1 (partial tiles are zero-filled) with ceil(M / 32) <= 65535 (grid y).
// Run: make run STEP=03 M=4096 N=4096 K=4096
#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step03 {

constexpr int BM = 32, BN = 32, BK = 32;
static_assert(BM == BK && BN == BK, "each thread loads one element of A and one of B per tile: BM == BN == BK");

__global__ void __launch_bounds__(BM * BN)
sgemm_smem_tiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float sA[BM][BK];  // BM x BK tile of A
  __shared__ float sB[BK][BN];  // BK x BN tile of B
  const int tx = threadIdx.x, ty = threadIdx.y;  // tx: column within the tile, ty: row
  const int64_t row = blockIdx.y * int64_t(BM) + ty;
  const int64_t col = blockIdx.x * int64_t(BN) + tx;

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Coalesced: threads with consecutive tx read consecutive floats of one row of A and of B.
    sA[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    sB[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * int64_t(N) + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) acc += sA[ty][kk] * sB[kk][tx];  // sA: broadcast, sB: one row
    __syncthreads();  // before the next tile overwrites what slower warps still read
  }
  if (row < M && col < N) {
    float* c = &C[row * N + col];
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;  // beta == 0: C is never read
  }
}

void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 block(BN, BM);
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  sgemm_smem_tiling<<<grid, block, 0, stream>>>(p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

std::optional<std::string> unsupported(int m, int, int) { return gemm::grid_refusal("M", m, BM, 1); }

const bool registered = gemm::register_step({
    .id = "03",
    .name = "smem_tiling",
    .parent = "02",
    .technique = "32x32 tiles of A and B staged in shared memory",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, 1},
    .threads = BM * BN,
});

}  // namespace step03
