// wgmma.mma_async (m64nNk16, bf16 in; m64nNk32, e4m3 in; fp32 accumulators; N = 8 .. 256), its fences
// and groups, and the shared-memory matrix descriptor of a 128-byte-swizzled K-major tile.
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cstdint>

#include "smem.cuh"
#include "wgmma_shapes.cuh"

namespace ptx {

// ---------------------------------------------------------------------------------------------
// wgmma: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions".
// Issued by a warpgroup (4 consecutive warps, the first one's index divisible by 4); A and B come
// from shared memory through 64-bit matrix descriptors, D lives in registers.
// ---------------------------------------------------------------------------------------------

/// wgmma.fence: required before the first wgmma.mma_async and whenever the accumulator
/// registers were touched by other instructions since ("wgmma.fence").
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/// wgmma.commit_group: closes the group of this warpgroup's uncommitted wgmma.mma_async
/// ("wgmma.commit_group").
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/// wgmma.wait_group N: waits until at most N committed groups are pending; their accumulators
/// may be read, and their shared-memory operands overwritten, only after this ("wgmma.wait_group").
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving reads or writes of the accumulators across the asynchronous
/// wgmma window (it does not know that the registers are in use until wgmma.wait_group). Emits
/// no instruction. Without it ptxas may have to serialize the wgmma sequence (it says so in a
/// C7515 line of the -Xptxas -v report; tests/sass_twins/hopper_serialized_wgmma.cu shows one).
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// Shared-memory matrix descriptor ("Asynchronous Warpgroup Level Matrix Shared Memory Layout:
/// Matrix Descriptor") for a K-major tile that TMA wrote with CU_TENSOR_MAP_SWIZZLE_128B:
/// rows of 128 bytes (64 bf16 or 128 e4m3), row r's 16-byte chunks XOR-permuted by r % 8, and the
/// tile 1024-byte aligned. Every field is in bytes, so the element size does not enter. Fields:
///   bits  0-13  start address >> 4 (the 18-bit shared address, in 16-byte units)
///   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled K-major layouts whose K
///               extent (32 bytes per wgmma: 16 bf16 or 32 e4m3) lies within one swizzle row; set to 1
///   bits 32-45  stride-dimension byte offset >> 4: 8 rows x 128 bytes = 1024 between 8-row groups
///   bits 49-51  base offset: 0, the tile starts on the 1024-byte swizzle-pattern boundary
///   bits 62-63  layout/swizzle: 1 = 128-byte swizzle
/// The k-th 16-wide slice of a bf16 tile (and the k-th 32-wide slice of an e4m3 tile: 32 one-byte
/// elements) starts 32*k bytes further on: the hardware applies the swizzle to the final address
/// bits, so advancing the start address is enough.
__device__ __forceinline__ uint64_t make_desc_k_sw128(const void* smem_tile) {
  const uint64_t addr = smem_addr(smem_tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// The instruction itself, one wrapper per N (wgmma_m64n128k16_bf16, wgmma_m64n128k32_e4m3, ...) and the
// templates that pick one by the fragment's size (wgmma_m64nNk16_bf16<R>, wgmma_m64nNk32_e4m3<R>),
// are generated for every N the PTX ISA allows: wgmma_shapes.cuh (scripts/gen_wgmma.py).

}  // namespace ptx
