// RAII device buffer. Allocation failure (a shape too large for device memory) becomes a gemm::Error
// that names the size, instead of a crash later.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "../kernel_lib/check.hpp"

namespace gemm {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count == 0) return;
    cudaError_t status = cudaMalloc(&ptr_, count * sizeof(T));
    if (status == cudaErrorMemoryAllocation) throw_allocation_error(count * sizeof(T));
    CUDA_CHECK(status);
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }

  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace gemm
