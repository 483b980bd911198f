// Step 01 — naive: one thread per output element, C[row][col] = alpha * dot(A[row,:], B[:,col]) + beta * C.
// The first kernel, a root of the step tree. threadIdx.x walks rows, so the 32 threads of a warp read
// 32 different rows of A (stride K floats) and write 32 different rows of C: each warp access to them
// touches 32 sectors of 32 bytes for 4 useful bytes each. This is the mistake step 02 fixes.
// Prediction: memory-bound far below the 67 TFLOP/s fp32 peak, ~1 % of cuBLAS (a public ladder
// measured 0.50 TFLOP/s at 4096 on the H200).
// SASS: one LDG.E per operand per FFMA, the k loop unrolled x16/x8/x4 (sass_annotations/01_naive.md).
// Supports: any M, N, K >= 1 with ceil(N / 32) <= 65535 (grid y); M maps to grid x (2^31-1 blocks).
// Run: make run STEP=01 M=4096 N=4096 K=4096
#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step01 {

constexpr int BLOCK = 32;  // 32 x 32 threads per block

__global__ void __launch_bounds__(BLOCK * BLOCK)
sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  const int64_t row = blockIdx.x * int64_t(BLOCK) + threadIdx.x;  // consecutive threads: consecutive rows
  const int64_t col = blockIdx.y * int64_t(BLOCK) + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * int64_t(N) + col];
  float* c = &C[row * N + col];
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;  // beta == 0: C is never read
}

void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid((p.m + BLOCK - 1) / BLOCK, (p.n + BLOCK - 1) / BLOCK);
  sgemm_naive<<<grid, block, 0, stream>>>(p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

std::optional<std::string> unsupported(int, int n, int) { return gemm::grid_refusal("N", n, BLOCK, 1); }

const bool registered = gemm::register_step({
    .id = "01",
    .name = "naive",
    .parent = "",  // a root: no step before it
    .technique = "one thread per output, uncoalesced",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BLOCK, BLOCK, 1, 1},
    .threads = BLOCK * BLOCK,
});

}  // namespace step01
