#include "launch.hpp"

#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace gemm {

int sm_count() {
  static std::mutex mu;
  static std::map<int, int> by_device;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  auto it = by_device.find(device);
  if (it != by_device.end()) return it->second;
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  by_device[device] = sms;
  return sms;
}

void opt_in_dynamic_smem(const void* kernel, size_t bytes) {
  static std::mutex mu;
  static std::set<std::tuple<int, const void*, size_t>> done;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({device, kernel, bytes})) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  done.insert({device, kernel, bytes});
}

}  // namespace gemm
