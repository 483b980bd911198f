// Step 00 — cuBLAS SGEMM through the same harness: the yardstick every later step is measured
// against, timed by the same function (warm-up, L2 flush, paired rounds). A root of the step tree.
// Strict FP32 (CUBLAS_DEFAULT_MATH, no TF32); row-major through the C^T = B^T A^T trick
// (common/kernel_lib/cublas.cpp, cublas_sgemm).
// Prediction: the same TFLOP/s as the "cuBLAS" column of every other step (ratio ~1.00); the spread
// between the two is the run-to-run noise of the benchmark.
// Supports: any M, N, K >= 1 (cuBLAS handles every shape).
// Run: make run STEP=00 M=4096 N=4096 K=4096
#include "../common/kernel_lib/cublas.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step00 {

const bool registered = gemm::register_step({
    .id = "00",
    .name = "cublas",
    .parent = "",  // a root: no step before it
    .technique = "cuBLAS SGEMM (strict FP32), the reference",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &gemm::cublas_sgemm,
});

}  // namespace step00
