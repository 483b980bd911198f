// Named barriers: bar.sync on a barrier other than 0, for a subset of the block's warps.
// Each wrapper is one PTX instruction and cites the PTX ISA section it follows (PTX ISA 8.x/9.0,
// "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once

namespace ptx {

/// bar.sync id, threads: waits until `threads` threads (a multiple of 32) have arrived at barrier
/// `id` (0..15; 0 is the one __syncthreads uses) ("Parallel Synchronization and Communication
/// Instructions: bar, barrier"). With a register id ptxas reserves all 16 hardware barriers for the
/// kernel ("used 16 barriers" in -Xptxas -v), harmless for a kernel that runs one block per SM.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace ptx
