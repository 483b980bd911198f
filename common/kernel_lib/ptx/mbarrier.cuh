// mbarrier wrappers (init, arrive, expect-tx, parity wait) of the Hopper steps (11 and up).
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cstdint>

#include "smem.cuh"

namespace ptx {

// ---------------------------------------------------------------------------------------------
// mbarrier: PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier".
// A 64-bit object in shared memory with an expected arrival count and a transaction count;
// a phase completes when both reach zero, and waiters test the parity of the completed phase.
// ---------------------------------------------------------------------------------------------

/// mbarrier.init: sets the expected arrival count of phase 0 ("mbarrier.init").
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

/// fence.mbarrier_init: makes the preceding mbarrier.init visible to other threads and to the
/// async proxy (TMA completes transactions on the barrier) before they use it
/// ("Parallel Synchronization and Communication Instructions: membar/fence", fence.mbarrier_init;
/// .cluster is its only scope, and a CTA launched without clusters is a cluster of one).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// mbarrier.arrive.expect_tx: this thread arrives and raises the phase's transaction count by
/// `bytes`, which the TMA copies completing on the barrier count down
/// ("mbarrier.expect_tx", "mbarrier.arrive").
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

/// mbarrier.arrive: one arrival, no transactions ("mbarrier.arrive").
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

/// mbarrier.try_wait.parity: true once the phase with parity `parity` has completed
/// ("mbarrier.test_wait/mbarrier.try_wait"). A fresh barrier is in phase 0, so waiting on parity 1
/// returns at once: the producer's first pass over the empty barriers relies on that.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// Spins on try_wait until the phase of parity `parity` completes (try_wait itself suspends the
/// thread for a hardware-chosen time before returning false, so this is not a hot spin).
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace ptx
