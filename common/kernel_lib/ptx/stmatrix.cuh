// stmatrix: warp-wide stores of 8x8 b16 matrices to shared memory (the stmatrix epilogue).
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cstdint>

#include "smem.cuh"

namespace ptx {

// ---------------------------------------------------------------------------------------------
// stmatrix: PTX ISA, "Data Movement and Conversion Instructions: stmatrix".
// ---------------------------------------------------------------------------------------------

/// stmatrix.sync.aligned.m8n8.x4.shared.b16: the warp stores four 8x8 b16 matrices; lane l holds
/// row l/4, columns 2*(l%4)..+1 of each (one 32-bit register per matrix), and lanes 8i..8i+7 give
/// the 16-byte row addresses of matrix i. Tested by tests/fixtures/hopper_epilogue_probe.cu.
__device__ __forceinline__ void stmatrix_x4(void* row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16: as stmatrix_x4, each matrix stored transposed: the
/// row that lane 8i + r addresses receives column r of matrix i (its 8 values from the 8 row-holders).
__device__ __forceinline__ void stmatrix_x4_trans(void* row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace ptx
