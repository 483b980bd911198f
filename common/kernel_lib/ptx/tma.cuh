// TMA (cp.async.bulk.tensor) loads and stores; the tensor maps are built on the host (common/kernel_lib/tma.hpp).
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: no driver call is made from device code)

#include <cstdint>

#include "smem.cuh"

namespace ptx {

// ---------------------------------------------------------------------------------------------
// TMA: PTX ISA, "Data Movement and Conversion Instructions: cp.async.bulk.tensor".
// The tensor map (built on the host, common/kernel_lib/tma.hpp) is a __grid_constant__ kernel parameter;
// its generic address is the operand.
// ---------------------------------------------------------------------------------------------

/// cp.async.bulk.tensor.2d global -> shared, tile mode: copies the box at (c0 = inner/column,
/// c1 = row) into `dst` and completes `box bytes` transactions on `bar`. Out-of-bounds elements of
/// the box are written as zeros (the whole box's bytes are always counted).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

/// cp.async.bulk.tensor.2d shared -> global, tile mode, bulk-group completion: stores `src` to the
/// box at (c0, c1); elements outside the tensor are not written (the clipping the epilogue needs).
/// `src` must be 128-byte aligned (1024 under the 128-byte swizzle). Used by steps 16 and up, and by
/// tests/fixtures/hopper_epilogue_probe.cu.
/// The shared-memory writes feeding it need fence_proxy_async_shared() first.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}

/// createpolicy.fractional.L2::evict_first.b64 with fraction 1.0: a 64-bit L2 cache policy that
/// marks every line an access touches evict-first (PTX ISA, "Data Movement and Conversion
/// Instructions: createpolicy"). For data written once and not read again by this kernel (C): its
/// lines are the first the L2 gives up, so the A and B tiles other blocks still read stay resident.
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

/// tma_store_2d with an L2 cache policy (.L2::cache_hint; e.g. l2_policy_evict_first()): the same
/// clipped, bulk-group store ("cp.async.bulk.tensor", shared::cta -> global form). Steps 18 and up.
__device__ __forceinline__ void tma_store_2d_hint(const CUtensorMap* map, const void* src, int c0, int c1,
                                                  uint64_t policy) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%2, %3}], [%1], %4;"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(src)), "r"(c0), "r"(c1), "l"(policy)
               : "memory");
}

/// cp.async.bulk.commit_group: closes the bulk group of this thread's preceding TMA stores
/// ("cp.async.bulk.commit_group").
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/// cp.async.bulk.wait_group.read N: waits until at most N bulk groups still read their shared
/// source ("cp.async.bulk.wait_group"): with B buffers used in turn, N = B - 1 before refilling one
/// (the store that last read it is done reading); the global writes may still be in flight.
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// cp.async.bulk.wait_group N (without .read): waits until at most N bulk groups of this thread are
/// pending, their global writes included ("cp.async.bulk.wait_group"). N = 0 before the block
/// exits, so no store is still reading shared memory that the next block on the SM may own.
template <int N>
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace ptx
