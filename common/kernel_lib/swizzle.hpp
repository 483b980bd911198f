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

/// In a 16-row box of C with 128-byte rows under the 128B swizzle (a swapped tile's stmatrix epilogue,
/// ptx::store_dt_box16_sw128_stmatrix): the byte offset of the row that lane `lane` of warp `warp`
/// (0..3 of the warpgroup) addresses in its stmatrix.x4.trans. Lanes 8i..8i+7 address matrix i, the
/// fragment's 8 x 8 block (j = 2 jj + i / 2, h = i % 2): its transposed row q is C's row 8 (i / 2) + q of
/// the box, and its 8 values C's columns 16 warp + 8 h .. + 7 of the slab, chunk 2 warp + h.
/// tests/test_family.cpp models stmatrix's .trans over every lane and reads the box back as TMA does.
GEMM_HD constexpr uint32_t dt_box16_row_offset(int warp, int lane) {
  const int mat = lane / 8;
  return byte_offset<128>(uint32_t(8 * (mat / 2) + lane % 8) * 128 + uint32_t(16 * (2 * warp + mat % 2)));
}

}  // namespace gemm::swizzle
