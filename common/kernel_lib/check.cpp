#include "check.hpp"

#include <fmt/format.h>

namespace gemm {

void throw_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(status),
                          cudaGetErrorString(status), expr, file, line));
}

// The driver library is not linked (the test binary must load on machines without a driver), so
// the driver's own error strings are out of reach; the numeric CUresult is looked up in cuda.h.
void throw_cu(CUresult status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("CUDA driver error CUresult={} in {} at {}:{}", static_cast<int>(status),
                          expr, file, line));
}

void throw_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("cuBLAS error {} ({}) in {} at {}:{}", cublasGetStatusName(status),
                          cublasGetStatusString(status), expr, file, line));
}

void throw_curand(int status, const char* expr, const char* file, int line) {
  throw Error(fmt::format("cuRAND error {} in {} at {}:{}", status, expr, file, line));
}

void throw_allocation_error(size_t bytes) {
  (void)cudaGetLastError();  // clear the (non-sticky) allocation error
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  throw OutOfMemory(fmt::format("cannot allocate {:.2f} GiB on the device ({:.2f} GiB free of {:.2f}): the "
                          "shape is too large for this GPU",
                          bytes / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0));
}

}  // namespace gemm
