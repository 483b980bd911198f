// The shared-memory swizzle that TMA applies to a box (CU_TENSOR_MAP_SWIZZLE_32B/64B/128B) and that
// wgmma descriptors and the epilogues assume: one function, used by the kernels and drawn by the
// docs. Host and device.
#pragma once
#include <cstdint>

#include "host_device.hpp"

namespace gemm::swizzle {

/// Byte offset at which the byte at `linear` of an unswizzled box lands in shared memory under the
/// `SpanBytes` swizzle (32, 64 or 128): the 16-byte chunk index (bits 4..) is XORed with the index
/// of the 128-byte row (bits 7..), modulo SpanBytes / 16 chunks. So in a box whose rows are 128
/// bytes, row r's chunk c sits at chunk c ^ (r % 8) under 128B: the eight rows of an 8-row group
/// spread one chunk column over all eight 16-byte bank groups. The pattern repeats every 1024 bytes
/// under 128B (256 under 32B ... all of them every 8 rows of 128 bytes), which is why a swizzled tile
/// starts on a 1024-byte boundary. Source: CUDA Programming Guide, "Tensor Memory Access" (the
/// swizzle modes' pattern tables); CUTLASS's Swizzle<B, 4, 3> (cute/swizzle.hpp) is the same map
/// with B = log2(SpanBytes / 16).
template <uint32_t SpanBytes>
GEMM_HD constexpr uint32_t byte_offset(uint32_t linear) {
  static_assert(SpanBytes == 32 || SpanBytes == 64 || SpanBytes == 128, "TMA swizzle spans are 32, 64 or 128 bytes");
  return linear ^ (((linear >> 7) & (SpanBytes / 16 - 1)) << 4);
}

}  // namespace gemm::swizzle
