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

int max_active_clusters(const void* kernel, int threads, size_t dynamic_smem, int cluster_size) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void*, int, size_t, int>, int> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, kernel, threads, dynamic_smem, cluster_size);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(cluster_size);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(cluster_size));  // a multiple of the cluster shape; the count does not depend on it
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = dynamic_smem;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  if (clusters < 1) throw Error("cudaOccupancyMaxActiveClusters: no cluster of this kernel fits on the device");
  cache[key] = clusters;
  return clusters;
}

}  // namespace gemm
