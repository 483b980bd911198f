// cuBLAS, called the way every step is: a launcher with the steps' signature (registry.hpp). It is
// step 00's kernel and the oracle the harness checks every step against (common/harness/reference.hpp).
#pragma once
#include <cublas_v2.h>

#include "registry.hpp"

namespace gemm {

/// Owns a cuBLAS handle (created once per process, destroyed at exit).
cublasHandle_t cublas_handle();

/// cuBLAS reference, strict FP32 (CUBLAS_DEFAULT_MATH: no TF32) for fp32, bf16 in/out with
/// CUBLAS_COMPUTE_32F for bf16. Status checked; throws gemm::Error.
///
/// The row-major trick: cuBLAS is column-major, and a row-major m x n matrix is the same bytes as a
/// column-major n x m matrix (its transpose). So row-major C = A*B is computed as column-major
/// C^T = B^T * A^T: pass B first, swap m and n, and use the row lengths (n, k, n) as leading
/// dimensions. For bf16, B is stored n x k row-major, i.e. B^T column-major, so C^T = (B^T)^T * A^T
/// takes B with CUBLAS_OP_T ("TN" GEMM).
void cublas_sgemm(const Fp32Gemm& p, cudaStream_t stream);
void cublas_bf16_gemm(const Bf16Gemm& p, cudaStream_t stream);

/// The bf16 GEMM of cublas_bf16_gemm (bf16 A and B as there, CUBLAS_COMPUTE_32F) with an fp32 C
/// (m x n row-major, leading dimension n): the check's reference, rounded to bf16 once by the caller.
/// Why not the bf16-output call: on skinny shapes with a long K (M = 1381, N = 10, K = 5344 and
/// M = 10, N = 1652, K = 8192, found by make fuzz) cuBLAS 13.1's bf16-output GEMM differs from the
/// fp64 CPU loop by up to 0.19 on values of ~1 (also in exact mode), while every Hopper step matches
/// the fp64 loop (tests/test_hopper.cpp, "skinny shapes"): the fp32 output keeps cuBLAS's own
/// accumulation out of the comparison's one bf16 rounding. Throws gemm::Error on a cuBLAS error.
void cublas_bf16_gemm_fp32_out(const Bf16Gemm& p, float* c, cudaStream_t stream);

}  // namespace gemm
