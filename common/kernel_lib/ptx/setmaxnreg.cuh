// setmaxnreg: moving registers between the warpgroups of a CTA (step 14 on).
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once

namespace ptx {

// ---------------------------------------------------------------------------------------------
// Register reallocation: PTX ISA, "Miscellaneous Instructions: setmaxnreg".
// Every warp of a warpgroup executes the same setmaxnreg; the kernel must start with a register
// cap (__launch_bounds__(threads, 1) or -maxrregcount) for ptxas to honour it (else warning C7508).
// The count is a multiple of 8 in [24, 256].
// ---------------------------------------------------------------------------------------------

/// setmaxnreg.inc: blocks until the CTA's register pool can grow this warp to `Regs` per thread.
template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

/// setmaxnreg.dec: shrinks this warp to `Regs` per thread, returning the rest to the CTA's pool.
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

}  // namespace ptx
