// Launch helpers shared by the steps' launchers (host code): the opt-in to more than 48 KB of dynamic
// shared memory, a cudaLaunchKernelEx wrapper that takes cluster dimensions and programmatic
// dependent launch as attributes, and the device's SM count, cached. The grid and block stay written
// in each step's launcher: they are part of its lesson.
// Included by kernels/*.cu, so no fmt here (nvcc's front end rejects fmt's consteval format strings).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "check.hpp"

namespace gemm {

/// Number of SMs of the current device (cudaDevAttrMultiProcessorCount), queried once per device and
/// cached for the life of the process (thread-safe). Throws gemm::Error when the query fails (no
/// device, or the CUDA call fails).
int sm_count();

/// Sets cudaFuncAttributeMaxDynamicSharedMemorySize of `kernel` (its device-function address) to
/// `bytes` on the current device, once per (device, kernel, bytes): a kernel may use more than 48 KB
/// of dynamic shared memory only after this opt-in (CUDA C Programming Guide, "Shared Memory").
/// Thread-safe. Throws gemm::Error naming the CUDA error when the attribute is refused (e.g. `bytes`
/// over the device's cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KB on sm_90).
void opt_in_dynamic_smem(const void* kernel, size_t bytes);

/// The same for a typed kernel pointer: `gemm::opt_in_dynamic_smem(my_kernel<...>, SMEM_BYTES);`.
template <typename... Params>
void opt_in_dynamic_smem(void (*kernel)(Params...), size_t bytes) {
  opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes);
}

/// How many clusters of `cluster_size` blocks (1D clusters: cluster_size x 1 x 1) of `kernel` with
/// `threads` threads and `dynamic_smem` bytes can be resident on the device at once
/// (cudaOccupancyMaxActiveClusters; opt in to the shared memory first). Clusters are placed inside one
/// GPC, so this can be below sm_count() / cluster_size; a persistent grid of more clusters would run
/// a second wave. Cached per (device, kernel, threads, bytes, cluster size); thread-safe. Throws
/// gemm::Error when the query fails or returns 0 (the cluster cannot run at all).
int max_active_clusters(const void* kernel, int threads, size_t dynamic_smem, int cluster_size);

template <typename... Params>
int max_active_clusters(void (*kernel)(Params...), int threads, size_t dynamic_smem, int cluster_size) {
  return max_active_clusters(reinterpret_cast<const void*>(kernel), threads, dynamic_smem, cluster_size);
}

/// What one launch needs beyond the kernel and its arguments.
struct LaunchConfig {
  dim3 grid;                  ///< blocks (a multiple of `cluster` in each dimension when clusters are used)
  dim3 block;                 ///< threads per block
  size_t dynamic_smem = 0;    ///< bytes of dynamic shared memory per block (opt in first above 48 KB)
  cudaStream_t stream = nullptr;
  dim3 cluster = dim3(1, 1, 1);  ///< thread-block cluster shape; (1, 1, 1) launches without the attribute
  /// Programmatic dependent launch (CUDA C Programming Guide, "Programmatic Dependent Launch and
  /// Synchronization"): this grid may start once every block of the previous kernel on the stream has
  /// executed griddepcontrol.launch_dependents (or exited), instead of after that kernel finished. A
  /// kernel launched so must not read what the previous one writes before griddepcontrol.wait.
  bool programmatic_dependent = false;
};

/// Enqueues `kernel(args...)` with cudaLaunchKernelEx: the cluster dimension
/// (cudaLaunchAttributeClusterDimension) when `c.cluster` is not 1 x 1 x 1, and
/// cudaLaunchAttributeProgrammaticStreamSerialization when `c.programmatic_dependent`. The arguments
/// are converted to the kernel's parameter types. Throws gemm::Error when the launch is refused
/// (bad configuration, too much shared memory, a cluster the kernel cannot run with).
template <typename... Params, typename... Args>
void launch_kernel(const LaunchConfig& c, void (*kernel)(Params...), Args&&... args) {
  cudaLaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (c.cluster.x * c.cluster.y * c.cluster.z != 1) {
    attrs[n].id = cudaLaunchAttributeClusterDimension;
    attrs[n].val.clusterDim.x = c.cluster.x;
    attrs[n].val.clusterDim.y = c.cluster.y;
    attrs[n].val.clusterDim.z = c.cluster.z;
    ++n;
  }
  if (c.programmatic_dependent) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = c.grid;
  cfg.blockDim = c.block;
  cfg.dynamicSmemBytes = c.dynamic_smem;
  cfg.stream = c.stream;
  cfg.attrs = n ? attrs : nullptr;
  cfg.numAttrs = n;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace gemm
