#include "cublas.hpp"

#include "check.hpp"

namespace gemm {

cublasHandle_t cublas_handle() {
  struct Handle {
    cublasHandle_t h = nullptr;
    Handle() {
      CUBLAS_CHECK(cublasCreate(&h));
      // Strict FP32: the default math mode never uses TF32 tensor cores for SGEMM.
      CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    }
    ~Handle() { cublasDestroy(h); }
  };
  static Handle handle;
  return handle.h;
}

void cublas_sgemm(const Fp32Gemm& p, cudaStream_t stream) {
  cublasHandle_t h = cublas_handle();
  CUBLAS_CHECK(cublasSetStream(h, stream));
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, p.b, p.n, p.a, p.k,
                           &p.beta, p.c, p.n));
}

void cublas_bf16_gemm(const Bf16Gemm& p, cudaStream_t stream) {
  cublasHandle_t h = cublas_handle();
  CUBLAS_CHECK(cublasSetStream(h, stream));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, p.b, CUDA_R_16BF,
                            p.k, p.a, CUDA_R_16BF, p.k, &beta, p.c, CUDA_R_16BF, p.n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void cublas_bf16_gemm_fp32_out(const Bf16Gemm& p, float* c, cudaStream_t stream) {
  cublasHandle_t h = cublas_handle();
  CUBLAS_CHECK(cublasSetStream(h, stream));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, p.b, CUDA_R_16BF, p.k, p.a,
                            CUDA_R_16BF, p.k, &beta, c, CUDA_R_32F, p.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace gemm
