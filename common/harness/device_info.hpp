// What every table prints about the GPU and the software under it.
#pragma once
#include <string>

#include "../kernel_lib/registry.hpp"

namespace gemm {

struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int sm_clock_mhz = 0;  ///< the maximum SM clock the driver reports (clocks are left as found)
  std::string driver;    ///< e.g. "13.0" (the CUDA version the driver supports)
  std::string runtime;   ///< CUDA runtime version linked into this binary
  std::string cublas;    ///< cuBLAS version loaded at run time
};

/// Number of CUDA devices; 0 when there is none or no driver (never throws).
int cuda_device_count();

/// Properties of device 0; throws gemm::Error when there is no device.
DeviceInfo query_device();

/// The device as refusals see it (registry.hpp, refusal()).
inline Gpu gpu_of(const DeviceInfo& d) { return {d.cc_major, d.cc_minor, d.name}; }

/// One line: "NVIDIA H200 (cc 9.0, 132 SMs, L2 60 MiB, 1980 MHz), driver CUDA 13.0, runtime 13.0, cuBLAS 13.0.0"
std::string describe(const DeviceInfo& d);

}  // namespace gemm
