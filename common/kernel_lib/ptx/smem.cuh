// Shared-memory addresses for the PTX wrappers of common/kernel_lib/ptx/: the 32-bit shared-state-space
// address every .shared operand takes, and the alignment of the dynamic shared-memory base.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cstdint>

namespace ptx {

/// The 32-bit shared-state-space address of a generic pointer into shared memory (what every
/// .shared operand below takes).
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// Rounds a pointer into dynamic shared memory up to `Align` bytes of the shared address space.
/// 128-byte-swizzled TMA tiles must start on a 1024-byte boundary (the swizzle pattern repeats
/// every 8 rows of 128 bytes; CUDA Programming Guide, "Tensor Memory Access", swizzle modes),
/// which `extern __shared__` alone does not promise.
template <uint32_t Align>
__device__ __forceinline__ uint8_t* smem_align_up(uint8_t* p) {
  static_assert((Align & (Align - 1)) == 0, "alignment must be a power of two");
  const uint32_t a = smem_addr(p);
  return p + (((a + Align - 1) & ~(Align - 1)) - a);
}

}  // namespace ptx
