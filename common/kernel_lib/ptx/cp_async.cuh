// cp.async: asynchronous global -> shared copies with no register in between (sm_80 and later;
// PTX ISA, "Data Movement and Conversion Instructions: cp.async"). Each thread commits its copies in
// groups and waits for all but the newest N groups (steps 09 and 09b), or has an mbarrier arrive as they
// land (step 40's block scales). Device code only.
// SASS: LDGSTS.E.BYPASS.128 (16-byte .cg), LDGSTS.E (4-byte .ca), LDGDEPBAR (commit), DEPBAR.LE SB0 (wait).
#pragma once
#include <cstdint>

#include "smem.cuh"

namespace ptx {

// 16-byte global -> shared copy that bypasses L1 (.cg). `dst` is a shared-state-space address.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
// The same with the "src-size" operand: src_bytes = 0 writes 16 zero bytes and reads nothing, which is
// how tiles past M, N or K are zeroed.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// 4-byte variants (cp.async.cg only takes 16 bytes, .ca goes through L1): one float, e.g. A's written to
// its transposed place in sAT (step 09) or a block scale into its stage (step 40); src_bytes = 0 writes a zero.
__device__ __forceinline__ void cp_async_4(unsigned dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_4(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// An arrive on the mbarrier at `bar` that fires once every cp.async this thread issued before it has
// landed; .noinc: it is one of the arrivals the barrier was initialised to expect, not an added one
// (PTX ISA, "cp.async.mbarrier.arrive"). SASS: ARRIVES.LDGSTSBAR.64.ARVCNT.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// Waits until at most N of this thread's committed groups are still pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

}  // namespace ptx
