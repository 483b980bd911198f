#include "device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "../kernel_lib/check.hpp"

namespace gemm {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

static std::string cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

DeviceInfo query_device() {
  if (cuda_device_count() == 0) throw Error("no CUDA device found");
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  DeviceInfo d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  d.sm_clock_mhz = clock_khz / 1000;
  int drv = 0, rt = 0;
  CUDA_CHECK(cudaDriverGetVersion(&drv));
  CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  d.driver = cuda_version(drv);
  d.runtime = cuda_version(rt);
  int maj = 0, min = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &maj);
  cublasGetProperty(MINOR_VERSION, &min);
  cublasGetProperty(PATCH_LEVEL, &patch);
  d.cublas = fmt::format("{}.{}.{}", maj, min, patch);
  return d;
}

std::string describe(const DeviceInfo& d) {
  return fmt::format("{} (cc {}.{}, {} SMs, L2 {} MiB, max SM clock {} MHz), driver CUDA {}, runtime {}, cuBLAS {}",
                     d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes >> 20, d.sm_clock_mhz,
                     d.driver, d.runtime, d.cublas);
}


}  // namespace gemm
