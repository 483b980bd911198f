// Device side of the opt-in pipeline traces (common/kernel_lib/trace.hpp). Without -DGEMM_TRACE_BUILD (every timed
// build) the two macros expand to nothing and the kernel is unchanged. With it (`make trace STEP=NN`),
// GEMM_TRACE_NOW(t) reads %globaltimer into `t`, and GEMM_TRACE(kind, kt, t) has thread 0 of the
// warpgroup store the interval [t, now) in its slot of the buffer, on the first kTracedSMs SMs only (%smid;
// PTX ISA, "Special Registers": %globaltimer, %smid). Include from one kernel translation unit per
// binary: the buffer pointers are this unit's __device__ variables.
#pragma once
#ifdef GEMM_TRACE_BUILD
#include <cuda_runtime.h>

#include <cstdint>

#include "../check.hpp"
#include "../trace.hpp"

namespace ptx::trace_detail {

__device__ gemm::trace::Record* g_records;
__device__ unsigned g_per_slot;  // records per (block, warpgroup) slot
__device__ unsigned g_slots;     // 0: disarmed

inline void arm(gemm::trace::Record* records, unsigned per_slot, unsigned slots) {
  CUDA_CHECK(cudaMemcpyToSymbol(g_records, &records, sizeof records));
  CUDA_CHECK(cudaMemcpyToSymbol(g_per_slot, &per_slot, sizeof per_slot));
  CUDA_CHECK(cudaMemcpyToSymbol(g_slots, &slots, sizeof slots));
}
inline const bool registered = gemm::trace::register_arm(&arm);

__device__ __forceinline__ uint64_t now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each (block, warpgroup) owns a slot of g_per_slot records and each (K tile, kind) one place in it,
// so recording is a plain store: no atomic whose round trip would stall the warpgroup (an atomicAdd
// per interval slowed the traced SMs' blocks about twofold).
__device__ __forceinline__ void emit(uint16_t kind, uint32_t kt, uint64_t t0) {
  if (threadIdx.x % 128 != 0 || g_slots == 0) return;  // not armed (the check's launches): no buffer
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (sm >= gemm::trace::kTracedSMs) return;
  const uint32_t block = blockIdx.x + blockIdx.y * gridDim.x;
  const uint32_t slot = block * gemm::trace::kSlotsPerBlock + threadIdx.x / 128, place = kt * gemm::trace::kKinds + kind;
  if (slot >= g_slots || place >= g_per_slot) return;
  g_records[size_t(slot) * g_per_slot + place] = {sm, block, uint16_t(threadIdx.x / 128), kind, kt, t0, now()};
}

}  // namespace ptx::trace_detail

#define GEMM_TRACE_NOW(var) const uint64_t var = ptx::trace_detail::now()
#define GEMM_TRACE(kind, kt, t0) ptx::trace_detail::emit(gemm::trace::kind, uint32_t(kt), (t0))
#else
#define GEMM_TRACE_NOW(var)
#define GEMM_TRACE(kind, kt, t0)
#endif
