// GEMM_HD marks the small pure functions that host code (tests, figure tools built with g++) and
// kernels (nvcc) share: common/kernel_lib/schedule.hpp's tile orders and common/kernel_lib/swizzle.hpp's swizzle map.
#pragma once

#ifdef __CUDACC__
#define GEMM_HD __host__ __device__ __forceinline__
#else
#define GEMM_HD inline
#endif
