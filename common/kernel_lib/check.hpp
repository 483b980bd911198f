// Status checks for every CUDA runtime, driver, cuBLAS and cuRAND call.
// Each macro throws gemm::Error with the call text, file and line, so the step's main can print it
// and exit non-zero; nothing here aborts the process or carries on after a failure.
#pragma once
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gemm {

/// The one exception type of the harness: a failed call, a refused input, a failed check.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A device allocation that does not fit: the shape is too large for this GPU. The step executables
/// treat it as refused input (exit 2), not as a failure.
struct OutOfMemory : Error {
  using Error::Error;
};

/// The throw_* functions turn a failed status into gemm::Error naming the status, the call's source
/// text, file and line; the *_CHECK macros below call them. Each always throws.
[[noreturn]] void throw_cuda(cudaError_t status, const char* expr, const char* file, int line);
[[noreturn]] void throw_cu(CUresult status, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* expr, const char* file, int line);
[[noreturn]] void throw_curand(int status, const char* expr, const char* file, int line);
/// cudaMalloc of `bytes` failed for lack of memory: throws OutOfMemory naming the size and the free memory.
[[noreturn]] void throw_allocation_error(size_t bytes);

}  // namespace gemm

#define CUDA_CHECK(expr)                                                     \
  do {                                                                       \
    cudaError_t status_ = (expr);                                            \
    if (status_ != cudaSuccess) gemm::throw_cuda(status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define CU_CHECK(expr)                                                       \
  do {                                                                       \
    CUresult status_ = (expr);                                               \
    if (status_ != CUDA_SUCCESS) gemm::throw_cu(status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(expr)                                                   \
  do {                                                                       \
    cublasStatus_t status_ = (expr);                                         \
    if (status_ != CUBLAS_STATUS_SUCCESS) gemm::throw_cublas(status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define CURAND_CHECK(expr)                                                   \
  do {                                                                       \
    curandStatus_t status_ = (expr);                                         \
    if (status_ != CURAND_STATUS_SUCCESS) gemm::throw_curand(int(status_), #expr, __FILE__, __LINE__); \
  } while (0)

/// After every kernel launch: a bad configuration shows up here, an execution fault at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
